// ObjectCache: one informer per resource kind (pods, nodes, services), each LISTing once and then
// WATCHing on its own thread, keeping compact records. Snapshot() hands out an immutable
// ClusterObjects that is rebuilt only when something changed since the last one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
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
};

class ObjectCache {
 public:
  explicit ObjectCache(std::shared_ptr<ApiClient> client, ObjectCacheOptions options = {});
  ~ObjectCache();  // Stop()
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  // Starts one thread per kind. Call once.
  void Start();
  // Signals every informer and joins its thread: each open watch ends at its next chunk (the fake
  // transport offers one every few ms; the real one within the watch's transport timeout).
  void Stop();

  // Waits (real time) until every kind completed its first LIST; false on timeout or Stop().
  bool WaitSynced(std::chrono::milliseconds timeout);
  bool synced() const;

  // The current objects, immutable. Cheap when nothing changed since the previous call.
  std::shared_ptr<const ClusterObjects> Snapshot() const;
  std::vector<KindStatus> KindStatuses() const;
  const std::string& cluster() const { return cluster_; }

 private:
  class Store;
  template <typename T>
  class TypedStore;
  struct Informer;

  void AddInformer(std::unique_ptr<Store> store, ResourceSpec spec);
  void Changed();  // under mu_

  std::shared_ptr<ApiClient> client_;
  ObjectCacheOptions options_;
  std::string cluster_;
  StopSignal stop_;

  mutable std::mutex mu_;  // guards the stores, revision_ and snapshot_
  mutable std::condition_variable synced_cv_;
  uint64_t revision_ = 0;
  mutable std::shared_ptr<const ClusterObjects> snapshot_;
  std::vector<std::unique_ptr<Informer>> informers_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace gpuattr::kube
