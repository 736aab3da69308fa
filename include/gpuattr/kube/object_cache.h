// ObjectCache: one informer per resource kind (pods, nodes, services), each LISTing once and then
// WATCHing on its own thread, keeping compact records. The optional kinds never hold up
// WaitSynced and are skipped with a note when refused: the DRA kinds (resourceslices,
// resourceclaims), watched at the best resource.k8s.io version served and skipped quietly when
// none is (docs/dra.md), and namespaces, for their team labels (docs/accounting.md#teams).
// Snapshot() hands out an immutable ClusterObjects without copying it: the records are copied only
// when a change arrives while a snapshot is held (copy-on-write), so a steady cluster keeps one
// copy of its objects.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/kube/api_client.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/kube/watch.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::kube {

struct ObjectCacheOptions {
  bool pods = true;
  bool nodes = true;
  bool services = true;
  WatchOptions watch;
  // false: LIST each kind once (retrying errors) and stop there, e.g. for `--once`.
  bool keep_watching = true;
  // Called by Stop() after signalling the informers: a transport that can abort in-flight streams
  // (Transport::Cancel) makes Stop() instant instead of waiting for each watch's next chunk. The
  // daemon's sessions wire it to their transport's Cancel (app/kube_session.cc).
  std::function<void()> cancel_streams;
  // Watch resource.k8s.io ResourceSlices and ResourceClaims when the apiserver serves the group.
  bool dra = true;
  // Watch namespaces (their labels name the teams of the bill). Optional like the DRA kinds: a
  // 403 leaves them empty with a note. The daemon's sessions turn it on (app/session_factory.cc).
  bool namespaces = false;
  // After a 403 on an optional kind, how long until it is asked again (a grant may come later).
  std::chrono::milliseconds dra_forbidden_retry{std::chrono::minutes(10)};
};

enum class DraState {
  kOff,        // not asked for (ObjectCacheOptions::dra false)
  kResolving,  // the group's discovery document has not answered yet
  kAbsent,     // no resource.k8s.io version gpuattr reads is served: DRA skipped
  kForbidden,  // a 403 on LIST: skipped until dra_forbidden_retry passes; see `note`
  kWatching,   // LIST (and WATCH) at `version`
};

// One optional kind's state (DRA or namespaces), for the status page.
struct DraKindStatus {
  std::string resource;  // "resourceslices", "resourceclaims", "namespaces"
  DraState state = DraState::kOff;
  std::string version;  // when watching or forbidden
  bool synced = false;  // a full LIST completed at `version`
  // Forbidden: one line naming the verb, the resource and the ClusterRole to fix.
  std::string note;
  std::string last_error;  // transient errors (discovery, 5xx), empty when fine
};

// Per-kind sync status, for gpuattr_cluster_up and the status page.
struct KindStatus {
  std::string resource;
  bool synced = false;
  std::string last_error;
  uint64_t objects = 0;
  uint64_t lists = 0;
  uint64_t watches = 0;
  uint64_t decode_errors = 0;
  std::string last_decode_error;
  int64_t last_sync_unix = 0;
  bool streaming = false;          // a WATCH stream is open now
  double last_connected_unix = 0;  // the last LIST, stream start or stream end (0 = never)
};

// Pure: the kinds that are not in sync at `now_unix`, one message each naming the cluster, the
// kind and why. In sync: listed once, and its watch stream open now or the kind connected (a LIST,
// a stream start or end) within `window_seconds` (gpuattr_cluster_up uses 2 intervals).
std::vector<std::string> KindsOutOfSync(const std::vector<KindStatus>& kinds, double now_unix,
                                        double window_seconds, const std::string& cluster);

class ObjectCache {
 public:
  explicit ObjectCache(std::shared_ptr<ApiClient> client, ObjectCacheOptions options = {});
  ~ObjectCache();  // Stop()
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  // Starts one thread per kind. Call once.
  void Start();
  // Signals every informer, calls cancel_streams, and joins the threads: each open watch ends at
  // once when cancel_streams aborts it, else at its next chunk (the fake
  // transport offers one every few ms; the real one within the watch's transport timeout).
  void Stop();

  // Waits (real time) until every kind completed its first LIST; false on timeout or Stop().
  bool WaitSynced(std::chrono::milliseconds timeout);
  bool synced() const;

  // The current objects, immutable. Never copies (see Writable).
  std::shared_ptr<const ClusterObjects> Snapshot() const;
  // Required kinds, and the DRA kinds while they are being watched (their errors are real ones).
  std::vector<KindStatus> KindStatuses() const;
  // KindStatuses() without the DRA kinds that never completed a LIST (optional: they do not
  // hold up the first cycle either) — what gpuattr_cluster_up's sync rule looks at.
  std::vector<KindStatus> SyncStatuses() const;
  std::vector<DraKindStatus> DraStatuses() const;  // the DRA kinds only
  // Every optional kind: the DRA kinds, then namespaces (when watched).
  std::vector<DraKindStatus> OptionalStatuses() const;
  // True once every optional kind knows where it stands: off, absent, forbidden, listed, or
  // failing (an error is recorded). The session's first cycle waits for this, not for their
  // objects.
  bool DraSettled() const;
  const std::string& cluster() const { return cluster_; }

 private:
  class Store;
  template <typename T>
  class TypedStore;
  struct Informer;
  struct DraKind;

  void AddInformer(std::unique_ptr<Store> store, ResourceSpec spec);
  void AddDraKind(std::unique_ptr<Store> store, std::string resource, bool dra = true);
  void RunDraKind(DraKind& kind);
  // RunDraKind's steps.
  void SetDraState(DraKind& kind, DraState state, std::string version, std::string note,
                   std::string error);
  std::vector<std::string> DraVersionsToTry(DraKind& kind);  // retried until known or stopped
  // The kind's watcher at `version` (made once, kept for status readers), made the current one.
  ListWatcher& DraWatcherAt(DraKind& kind, const std::string& version);
  // A 403: the note (logged once a spell), then a wait of dra_forbidden_retry before asking again.
  void WaitOutForbidden(DraKind& kind, const std::string& version, const std::string& error);
  // The versions to try, from the group's discovery document (once, shared by the DRA kinds).
  Result<std::vector<std::string>> ResolveDraVersions();
  void Changed();              // under mu_
  ClusterObjects& Writable();  // under mu_: the live objects, copied first if a snapshot is out

  std::shared_ptr<ApiClient> client_;
  ObjectCacheOptions options_;
  std::string cluster_;
  StopSignal stop_;

  mutable std::mutex mu_;  // guards live_ (the stores' records) and revision_
  mutable std::condition_variable synced_cv_;
  uint64_t revision_ = 0;
  std::shared_ptr<ClusterObjects> live_ = std::make_shared<ClusterObjects>();
  std::vector<std::unique_ptr<Informer>> informers_;
  std::vector<std::unique_ptr<DraKind>> dra_kinds_;
  std::mutex dra_resolve_mu_;  // held during the discovery GET
  std::optional<std::vector<std::string>> dra_versions_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace gpuattr::kube
