#include "gpuattr/kube/object_cache.h"

#include <cstdio>

#include "gpuattr/kube/decode.h"
#include "gpuattr/kube/dra_versions.h"
#include "gpuattr/util/log.h"

namespace gpuattr::kube {
namespace {

// "namespace/name" (or "name" for cluster-scoped objects) straight from the JSON metadata.
std::string MetadataKey(JsonValue object) {
  JsonValue meta = object.Find("metadata");
  std::string name(meta.Find("name").str());
  if (name.empty()) return {};
  std::string_view ns = meta.Find("namespace").str();
  return ns.empty() ? name : std::string(ns) + "/" + name;
}

}  // namespace

// A WatchTarget whose records live in the cache's current ClusterObjects (one field of it).
class ObjectCache::Store : public WatchTarget {
 public:
  virtual size_t Size() const = 0;  // under the cache's mutex
};

// Records of one kind keyed "namespace/name" (or "name"), kept in the cache's live objects and
// mutated under the cache's mutex (copy-on-write: see ObjectCache::Writable). Decoding happens
// outside the lock: it is pure and the slow part.
template <typename T>
class ObjectCache::TypedStore final : public ObjectCache::Store {
 public:
  using Decoder = Result<T> (*)(JsonValue);
  using Field = std::map<std::string, T> ClusterObjects::*;

  TypedStore(ObjectCache& cache, Decoder decode, Field field)
      : cache_(cache), decode_(decode), field_(field) {}

  void BeginList() override { staging_.clear(); }

  Status AddListed(JsonValue object) override {
    Result<T> r = decode_(object);
    if (!r.ok()) return r.status();
    std::string key = r->Key();
    staging_.insert_or_assign(std::move(key), std::move(r).value());
    return Status::Ok();
  }

  void EndList(bool complete) override {
    if (complete) {
      std::lock_guard<std::mutex> lock(cache_.mu_);
      (cache_.Writable().*field_).swap(staging_);
      cache_.Changed();
    }
    staging_.clear();
  }

  Status Apply(WatchEventType type, JsonValue object) override {
    Result<T> r = decode_(object);
    if (!r.ok()) {
      // A deleted object must leave the cache even when its final state does not decode.
      if (type == WatchEventType::kDeleted) Erase(MetadataKey(object));
      return r.status();
    }
    std::string key = r->Key();
    std::lock_guard<std::mutex> lock(cache_.mu_);
    if (type == WatchEventType::kDeleted) {
      if (Items().count(key) == 0) return Status::Ok();
      (cache_.Writable().*field_).erase(key);
    } else {
      (cache_.Writable().*field_).insert_or_assign(std::move(key), std::move(r).value());
    }
    cache_.Changed();
    return Status::Ok();
  }

  void Erase(const std::string& key) {
    if (key.empty()) return;
    std::lock_guard<std::mutex> lock(cache_.mu_);
    if (Items().count(key) == 0) return;
    (cache_.Writable().*field_).erase(key);
    cache_.Changed();
  }
  size_t Size() const override { return Items().size(); }

 private:
  const std::map<std::string, T>& Items() const { return (*cache_.live_).*field_; }

  ObjectCache& cache_;
  Decoder decode_;
  Field field_;
  std::map<std::string, T> staging_;  // the LIST in progress; only the informer thread touches it
};

struct ObjectCache::Informer {
  std::unique_ptr<Store> store;
  std::unique_ptr<ListWatcher> watcher;
  std::thread thread;
};

// An optional DRA kind: one store, and one ListWatcher per version tried (kept, so that status
// readers never see a watcher die). Fields below `thread` are guarded by the cache's mu_.
struct ObjectCache::DraKind {
  std::string resource;
  bool dra = true;  // a resource.k8s.io kind; else a core v1 kind (namespaces)
  std::unique_ptr<Store> store;
  std::thread thread;
  DraState state = DraState::kResolving;
  std::string version;
  std::string note;
  std::string resolve_error;
  ListWatcher* watcher = nullptr;
  std::map<std::string, std::unique_ptr<ListWatcher>> watchers;  // by version
};

namespace {

// A DRA LIST answered 404 or 403 before any success: RunDraKind is about to move on (next version,
// or the forbidden note), so it is not reported as an error.
bool Refused(const WatchStatus& w) {
  return !w.synced && !w.last_error.empty() &&
         (w.last_error_code == ErrorCode::kNotFound ||
          w.last_error_code == ErrorCode::kPermissionDenied);
}

}  // namespace

ObjectCache::ObjectCache(std::shared_ptr<ApiClient> client, ObjectCacheOptions options)
    : client_(std::move(client)), options_(std::move(options)), cluster_(client_->ClusterName()) {
  options_.watch.keep_watching = options_.keep_watching;
  if (options_.pods) {
    AddInformer(std::make_unique<TypedStore<Pod>>(*this, &DecodePod, &ClusterObjects::pods),
                {"pods", "/api/v1/pods"});
  }
  if (options_.nodes) {
    AddInformer(std::make_unique<TypedStore<Node>>(*this, &DecodeNode, &ClusterObjects::nodes),
                {"nodes", "/api/v1/nodes"});
  }
  if (options_.services) {
    AddInformer(
        std::make_unique<TypedStore<Service>>(*this, &DecodeService, &ClusterObjects::services),
        {"services", "/api/v1/services"});
  }
  if (options_.dra) {
    AddDraKind(std::make_unique<TypedStore<ResourceSlice>>(*this, &DecodeResourceSlice,
                                                           &ClusterObjects::resource_slices),
               "resourceslices");
    AddDraKind(std::make_unique<TypedStore<ResourceClaim>>(*this, &DecodeResourceClaim,
                                                           &ClusterObjects::resource_claims),
               "resourceclaims");
  }
  if (options_.namespaces) {
    AddDraKind(std::make_unique<TypedStore<Namespace>>(*this, &DecodeNamespace,
                                                       &ClusterObjects::namespaces),
               "namespaces", false);
  }
}

ObjectCache::~ObjectCache() { Stop(); }

void ObjectCache::AddInformer(std::unique_ptr<Store> store, ResourceSpec spec) {
  auto inf = std::make_unique<Informer>();
  inf->store = std::move(store);
  inf->watcher =
      std::make_unique<ListWatcher>(*client_, std::move(spec), *inf->store, options_.watch);
  inf->watcher->OnSynced([this] {
    std::lock_guard<std::mutex> lock(mu_);
    synced_cv_.notify_all();
  });
  informers_.push_back(std::move(inf));
}

void ObjectCache::AddDraKind(std::unique_ptr<Store> store, std::string resource, bool dra) {
  auto kind = std::make_unique<DraKind>();
  kind->resource = std::move(resource);
  kind->dra = dra;
  kind->store = std::move(store);
  dra_kinds_.push_back(std::move(kind));
}

Result<std::vector<std::string>> ObjectCache::ResolveDraVersions() {
  std::lock_guard<std::mutex> lock(dra_resolve_mu_);
  if (dra_versions_) return *dra_versions_;
  GetOptions opts;
  opts.timeout = options_.watch.list_timeout;
  opts.stop = &stop_;
  auto r = client_->Get(std::string(kDraGroupPath), opts);
  if (!r.ok()) {
    if (r.error().code == ErrorCode::kNotFound) {
      dra_versions_.emplace();  // no resource.k8s.io group at all
    } else if (r.error().code == ErrorCode::kPermissionDenied) {
      // Discovery is normally open to every user; without it, LIST each version in turn.
      dra_versions_.emplace(kDraVersions.begin(), kDraVersions.end());
    } else {
      return r.error();  // transient: the kind retries after a backoff
    }
    return *dra_versions_;
  }
  auto versions = DraVersionsToWatch(r->body);
  if (!versions.ok()) return versions.error();
  dra_versions_ = std::move(*versions);
  return *dra_versions_;
}

namespace {

// The note of an optional kind the apiserver refuses to list (403): what, where, what is
// missing without it, and the fix.
std::string ForbiddenNote(bool dra, const std::string& resource, const std::string& version,
                          std::chrono::milliseconds retry, const std::string& error) {
  const std::string what =
      dra ? "DRA " + resource + " (" + std::string(kDraGroup) + "/" + version + ")"
          : resource + " (" + version + ")";
  const std::string missing =
      dra ? ""
          : " (without them no namespace labels: gpuattr_namespace_labels and the teams of "
            "the bill are absent)";
  return what + " not read" + missing + ", retried every " +
         std::to_string(std::chrono::duration_cast<std::chrono::minutes>(retry).count()) +
         " min: " + error + "; the ClusterRole gpuattr-reader there grants list and watch on it";
}

}  // namespace

void ObjectCache::SetDraState(DraKind& kind, DraState state, std::string version, std::string note,
                              std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  kind.state = state;
  kind.version = std::move(version);
  kind.note = std::move(note);
  kind.resolve_error = std::move(error);
  synced_cv_.notify_all();
}

std::vector<std::string> ObjectCache::DraVersionsToTry(DraKind& kind) {
  Clock& clock = client_->clock();
  Backoff backoff(options_.watch.backoff, client_->options().random);
  while (!stop_.stopped()) {
    auto r = ResolveDraVersions();
    if (r.ok()) return std::move(*r);
    SetDraState(kind, DraState::kResolving, "", "", r.error().message);
    clock.SleepFor(backoff.Next(), &stop_);
  }
  return {};
}

ListWatcher& ObjectCache::DraWatcherAt(DraKind& kind, const std::string& version) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<ListWatcher>& slot = kind.watchers[version];
  if (slot == nullptr) {
    WatchOptions wo = options_.watch;
    wo.return_on_refusal = true;
    const std::string path =
        kind.dra ? DraListPath(version, kind.resource) : "/api/" + version + "/" + kind.resource;
    slot =
        std::make_unique<ListWatcher>(*client_, ResourceSpec{kind.resource, path}, *kind.store, wo);
    slot->OnSynced([this, &kind] {
      std::lock_guard<std::mutex> inner(mu_);
      kind.state = DraState::kWatching;  // a grant may have ended a forbidden spell
      kind.note.clear();
      synced_cv_.notify_all();
    });
  }
  kind.watcher = slot.get();
  // A retry after a 403 keeps its note until the LIST succeeds.
  if (kind.state != DraState::kForbidden) kind.state = DraState::kWatching;
  kind.version = version;
  kind.resolve_error.clear();
  return *slot;
}

void ObjectCache::WaitOutForbidden(DraKind& kind, const std::string& version,
                                   const std::string& error) {
  std::string note =
      ForbiddenNote(kind.dra, kind.resource, version, options_.dra_forbidden_retry, error);
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = kind.state != DraState::kForbidden;
  }
  if (first)
    log::Warn(kind.dra ? "DRA forbidden" : "forbidden",
              {{"cluster", client_->ClusterName()}, {"note", note}});
  SetDraState(kind, DraState::kForbidden, version, note, "");
  client_->clock().SleepFor(options_.dra_forbidden_retry, &stop_);
  // Ask again at the same version: a grant may have been added meanwhile.
  {
    std::lock_guard<std::mutex> lock(mu_);
    kind.watcher = nullptr;
  }
}

// One optional kind's life: resolve the versions (a core kind has one: v1), then LIST/WATCH at
// the first that does not answer 404. 404 everywhere: skipped for good (no retries). 403: one
// note, asked again after dra_forbidden_retry. Other errors are the ListWatcher's usual backoff.
void ObjectCache::RunDraKind(DraKind& kind) {
  const std::vector<std::string> versions =
      kind.dra ? DraVersionsToTry(kind) : std::vector<std::string>{"v1"};
  size_t next = 0;
  while (!stop_.stopped()) {
    if (next >= versions.size()) {
      log::Info(kind.dra ? "DRA not served, skipped" : "not served, skipped",
                {{"cluster", client_->ClusterName()}, {"resource", kind.resource}});
      SetDraState(kind, DraState::kAbsent, "", "", "");
      return;
    }
    const std::string& version = versions[next];
    ListWatcher& watcher = DraWatcherAt(kind, version);
    watcher.Run(stop_);
    if (stop_.stopped()) return;
    WatchStatus st = watcher.status();
    if (st.last_error.empty()) return;  // listed once and done (keep_watching false)
    if (st.last_error_code == ErrorCode::kNotFound) {
      SetDraState(kind, DraState::kResolving, "", "", "");
      ++next;  // not served at this version: the next one
      continue;
    }
    if (st.last_error_code != ErrorCode::kPermissionDenied) return;  // not reached
    WaitOutForbidden(kind, version, st.last_error);
  }
}

void ObjectCache::Changed() { live_->revision = ++revision_; }

// Copy-on-write: a snapshot handed out is never changed. While only the cache holds the live
// objects they are changed in place; once a snapshot of them is out (a cycle is reading it), the
// first change copies them and the snapshot keeps the old ones. The count cannot grow behind our
// back: new holders get the pointer only from Snapshot(), under mu_. A holder letting go at the
// same time only makes the count stale-high (one copy too many, never a change under a reader).
ClusterObjects& ObjectCache::Writable() {
  if (live_.use_count() > 1) live_ = std::make_shared<ClusterObjects>(*live_);
  return *live_;
}

void ObjectCache::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& inf : informers_) {
    ListWatcher* watcher = inf->watcher.get();
    inf->thread = std::thread([this, watcher] { watcher->Run(stop_); });
  }
  for (auto& kind : dra_kinds_) {
    DraKind* k = kind.get();
    k->thread = std::thread([this, k] { RunDraKind(*k); });
  }
}

void ObjectCache::Stop() {
  stop_.Stop();
  if (options_.cancel_streams) options_.cancel_streams();
  for (auto& inf : informers_) {
    if (inf->thread.joinable()) inf->thread.join();
  }
  for (auto& kind : dra_kinds_)
    if (kind->thread.joinable()) kind->thread.join();
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  synced_cv_.notify_all();
}

bool ObjectCache::synced() const {
  for (const auto& inf : informers_) {
    if (!inf->watcher->status().synced) return false;
  }
  return true;
}

bool ObjectCache::WaitSynced(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  synced_cv_.wait_for(lock, timeout, [this] { return stopped_ || synced(); });
  return !stopped_ && synced();
}

std::shared_ptr<const ClusterObjects> ObjectCache::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;  // shared, not copied: the next change copies (Writable)
}

namespace {

// One watched kind's status as the cache reports it.
KindStatus ToKindStatus(const WatchStatus& w, size_t objects) {
  KindStatus k;
  k.resource = w.resource;
  k.synced = w.synced;
  k.last_error = w.last_error;
  k.objects = objects;
  k.lists = w.lists;
  k.watches = w.watches;
  k.decode_errors = w.decode_errors;
  k.last_decode_error = w.last_decode_error;
  k.last_sync_unix = w.last_sync_unix;
  k.streaming = w.streaming;
  k.last_connected_unix = w.last_connected_unix;
  return k;
}

}  // namespace

std::vector<KindStatus> ObjectCache::KindStatuses() const {
  std::vector<KindStatus> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& inf : informers_) {
    WatchStatus w = inf->watcher->status();
    out.push_back(ToKindStatus(w, inf->store->Size()));
  }
  for (const auto& kind : dra_kinds_) {
    if (kind->state != DraState::kWatching || kind->watcher == nullptr) continue;
    WatchStatus w = kind->watcher->status();
    if (Refused(w)) continue;
    out.push_back(ToKindStatus(w, kind->store->Size()));
  }
  return out;
}

std::vector<KindStatus> ObjectCache::SyncStatuses() const {
  std::vector<KindStatus> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& inf : informers_)
    out.push_back(ToKindStatus(inf->watcher->status(), inf->store->Size()));
  for (const auto& kind : dra_kinds_) {
    if (kind->state != DraState::kWatching || kind->watcher == nullptr) continue;
    WatchStatus w = kind->watcher->status();
    if (w.synced) out.push_back(ToKindStatus(w, kind->store->Size()));
  }
  return out;
}

std::vector<std::string> KindsOutOfSync(const std::vector<KindStatus>& kinds, double now_unix,
                                        double window_seconds, const std::string& cluster) {
  std::vector<std::string> out;
  const std::string where = " on cluster \"" + cluster + "\"";
  for (const KindStatus& k : kinds) {
    const std::string why = k.last_error.empty() ? "" : " (last error: " + k.last_error + ")";
    if (!k.synced) {
      out.push_back(k.resource + where + ": not listed yet" + why);
      continue;
    }
    if (k.streaming) continue;
    const double age = now_unix - k.last_connected_unix;
    if (k.last_connected_unix > 0 && age <= window_seconds) continue;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f", age);
    out.push_back(k.resource + where + ": out of sync, no watch connected for " + seconds +
                  " s (more than " + std::to_string(static_cast<long long>(window_seconds)) +
                  " s)" + why);
  }
  return out;
}

std::vector<DraKindStatus> ObjectCache::DraStatuses() const {
  std::vector<DraKindStatus> out = OptionalStatuses();
  std::erase_if(out, [](const DraKindStatus& d) { return d.resource == "namespaces"; });
  return out;
}

std::vector<DraKindStatus> ObjectCache::OptionalStatuses() const {
  std::vector<DraKindStatus> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& kind : dra_kinds_) {
    DraKindStatus d;
    d.resource = kind->resource;
    d.state = kind->state;
    d.version = kind->version;
    d.note = kind->note;
    d.last_error = kind->resolve_error;
    if (kind->state == DraState::kWatching && kind->watcher != nullptr) {
      WatchStatus w = kind->watcher->status();
      d.synced = w.synced;
      if (d.last_error.empty() && !Refused(w)) d.last_error = w.last_error;
    }
    out.push_back(std::move(d));
  }
  return out;
}

bool ObjectCache::DraSettled() const {
  for (const DraKindStatus& d : OptionalStatuses()) {
    const bool settled = d.state == DraState::kOff || d.state == DraState::kAbsent ||
                         d.state == DraState::kForbidden || d.synced || !d.last_error.empty();
    if (!settled) return false;
  }
  return true;
}

}  // namespace gpuattr::kube
