#include "gpuattr/kube/object_cache.h"

#include <nlohmann/json.hpp>

#include "gpuattr/kube/decode.h"

namespace gpuattr::kube {
namespace {

// "namespace/name" (or "name" for cluster-scoped objects) straight from the JSON metadata.
std::string MetadataKey(const nlohmann::json& object) {
  if (!object.is_object()) return {};
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto str = [&](const char* key) {
    auto it = meta->find(key);
    return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string name = str("name");
  if (name.empty()) return {};
  std::string ns = str("namespace");
  return ns.empty() ? name : ns + "/" + name;
}

}  // namespace

// A WatchTarget that also knows how to copy its records into a ClusterObjects.
class ObjectCache::Store : public WatchTarget {
 public:
  virtual void CopyInto(ClusterObjects& out) const = 0;  // under the cache's mutex
  virtual size_t Size() const = 0;                       // under the cache's mutex
};

// Records of one kind keyed "namespace/name" (or "name"), mutated under the cache's mutex.
// Decoding happens outside the lock: it is pure and the slow part.
template <typename T>
class ObjectCache::TypedStore final : public ObjectCache::Store {
 public:
  using Decoder = Result<T> (*)(const nlohmann::json&);
  using Field = std::map<std::string, T> ClusterObjects::*;

  TypedStore(ObjectCache& cache, Decoder decode, Field field)
      : cache_(cache), decode_(decode), field_(field) {}

  void BeginList() override { staging_.clear(); }

  Status AddListed(const nlohmann::json& object) override {
    Result<T> r = decode_(object);
    if (!r.ok()) return r.status();
    std::string key = r->Key();
    staging_.insert_or_assign(std::move(key), std::move(r).value());
    return Status::Ok();
  }

  void EndList(bool complete) override {
    if (complete) {
      std::lock_guard<std::mutex> lock(cache_.mu_);
      items_.swap(staging_);
      cache_.Changed();
    }
    staging_.clear();
  }

  Status Apply(WatchEventType type, const nlohmann::json& object) override {
    Result<T> r = decode_(object);
    if (!r.ok()) {
      // A deleted object must leave the cache even when its final state does not decode.
      if (type == WatchEventType::kDeleted) Erase(MetadataKey(object));
      return r.status();
    }
    std::string key = r->Key();
    std::lock_guard<std::mutex> lock(cache_.mu_);
    if (type == WatchEventType::kDeleted) {
      if (items_.erase(key) > 0) cache_.Changed();
    } else {
      items_.insert_or_assign(std::move(key), std::move(r).value());
      cache_.Changed();
    }
    return Status::Ok();
  }

  void CopyInto(ClusterObjects& out) const override { out.*field_ = items_; }

  void Erase(const std::string& key) {
    if (key.empty()) return;
    std::lock_guard<std::mutex> lock(cache_.mu_);
    if (items_.erase(key) > 0) cache_.Changed();
  }
  size_t Size() const override { return items_.size(); }

 private:
  ObjectCache& cache_;
  Decoder decode_;
  Field field_;
  std::map<std::string, T> items_;
  std::map<std::string, T> staging_;  // the LIST in progress; only the informer thread touches it
};

struct ObjectCache::Informer {
  std::unique_ptr<Store> store;
  std::unique_ptr<ListWatcher> watcher;
  std::thread thread;
};

ObjectCache::ObjectCache(std::shared_ptr<ApiClient> client, ObjectCacheOptions options)
    : client_(std::move(client)), options_(std::move(options)), cluster_(client_->ClusterName()) {
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

void ObjectCache::Changed() { ++revision_; }

void ObjectCache::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& inf : informers_) {
    ListWatcher* watcher = inf->watcher.get();
    inf->thread = std::thread([this, watcher] { watcher->Run(stop_); });
  }
}

void ObjectCache::Stop() {
  stop_.Stop();
  for (auto& inf : informers_) {
    if (inf->thread.joinable()) inf->thread.join();
  }
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
  if (snapshot_ != nullptr && snapshot_->revision == revision_) return snapshot_;
  auto objects = std::make_shared<ClusterObjects>();
  objects->revision = revision_;
  for (const auto& inf : informers_) inf->store->CopyInto(*objects);
  snapshot_ = std::move(objects);
  return snapshot_;
}

std::vector<KindStatus> ObjectCache::KindStatuses() const {
  std::vector<KindStatus> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& inf : informers_) {
    WatchStatus w = inf->watcher->status();
    KindStatus k;
    k.resource = w.resource;
    k.synced = w.synced;
    k.last_error = w.last_error;
    k.objects = inf->store->Size();
    k.lists = w.lists;
    k.watches = w.watches;
    k.decode_errors = w.decode_errors;
    k.last_decode_error = w.last_decode_error;
    k.last_sync_unix = w.last_sync_unix;
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace gpuattr::kube
