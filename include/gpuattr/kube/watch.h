// LIST-then-WATCH for one resource kind (the reflector of client-go, small): paginated LIST
// (limit=500, continue), then WATCH from the list's resourceVersion with bookmarks. A 410 Gone
// (HTTP or an ERROR event) relists once; a stream that simply ends is re-watched from the last
// resourceVersion without a LIST; errors back off with jitter. Steady state: zero LISTs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "gpuattr/util/json_document.h"

#include "gpuattr/kube/api_client.h"
#include "gpuattr/util/clock.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// One decoded event; `object` points into the decoder's document and is valid only during the
// callback that receives it.
struct WatchEvent {
  WatchEventType type = WatchEventType::kError;
  JsonValue object;
};

// Splits a newline-delimited JSON event stream into events, whatever the chunking (an event split
// over chunks, several events in one chunk). A bare Status object (a non-2xx watch body) becomes an
// ERROR event. Lines longer than `max_line_bytes` are an error.
class WatchStreamDecoder {
 public:
  using EventFn = std::function<bool(const WatchEvent& event)>;  // false stops decoding
  explicit WatchStreamDecoder(size_t max_line_bytes = 64u << 20) : max_line_(max_line_bytes) {}

  // Decodes every complete line in `chunk`; returns false when `on_event` asked to stop.
  // A malformed line sets error() and stops.
  bool Feed(std::string_view chunk, const EventFn& on_event);
  // Decodes a last line left without a trailing newline (at the end of the stream).
  bool Finish(const EventFn& on_event);
  const Status& error() const { return error_; }

 private:
  bool DecodeLine(std::string_view line, const EventFn& on_event);

  size_t max_line_;
  std::string buffer_;
  Status error_;
};

// The receiving end of one kind's LIST and WATCH (the cache's typed store implements it).
class WatchTarget {
 public:
  virtual ~WatchTarget() = default;
  virtual void BeginList() = 0;                    // a new full LIST starts
  virtual Status AddListed(JsonValue object) = 0;  // one item of a page
  virtual void EndList(bool complete) = 0;         // complete=false: discard
  virtual Status Apply(WatchEventType type, JsonValue object) = 0;
};

struct ResourceSpec {
  std::string resource;   // "pods" (messages, status)
  std::string list_path;  // "/api/v1/pods" or "/apis/resource.k8s.io/v1/resourceslices"
};

struct WatchOptions {
  int page_limit = 500;
  std::chrono::seconds watch_timeout{300};   // timeoutSeconds asked of the apiserver
  std::chrono::seconds stream_timeout{360};  // the transport's bound on one watch request
  std::chrono::milliseconds list_timeout{60000};
  BackoffPolicy backoff;
  bool keep_watching = true;  // false: Run returns after the first successful LIST
  // Optional kinds (DRA): Run returns, quietly, when a LIST fails with 404 or 403 before the first
  // successful one; status().last_error_code says which. The caller decides what comes next.
  bool return_on_refusal = false;
};

struct WatchStatus {
  std::string resource;
  bool synced = false;     // a full LIST completed at least once
  std::string last_error;  // empty when the last attempt worked
  ErrorCode last_error_code = ErrorCode::kInternal;
  uint64_t lists = 0;             // completed or attempted full LISTs (not pages)
  uint64_t watches = 0;           // WATCH requests
  uint64_t decode_errors = 0;     // objects skipped because they did not decode
  std::string last_decode_error;  // names the object and the field
  std::string resource_version;
  int64_t last_sync_unix = 0;
  // Connection state for gpuattr_cluster_up: a WATCH stream is open now (its 2xx arrived and it
  // has not ended), and the last moment the kind was known connected (a LIST completed, a stream
  // opened or ended; wall seconds of the client's clock, 0 = never).
  bool streaming = false;
  double last_connected_unix = 0;
};

class ListWatcher {
 public:
  ListWatcher(ApiClient& client, ResourceSpec spec, WatchTarget& target, WatchOptions options = {});

  // Runs LIST and WATCH until `stop` is stopped (the current stream ends at its next chunk).
  void Run(const StopSignal& stop);
  WatchStatus status() const;
  // Called after every successful LIST (tests and WaitSynced hook onto it).
  void OnSynced(std::function<void()> fn) { on_synced_ = std::move(fn); }

  // Pure helpers, exposed for tests.
  static std::string ListPath(std::string_view base, int limit, std::string_view cont);
  static std::string WatchPath(std::string_view base, std::string_view rv,
                               std::chrono::seconds timeout);

 private:
  Status List(const StopSignal& stop);
  // Returns OK when the stream ended normally; kGone when a relist is needed.
  Status Watch(const StopSignal& stop, bool& got_events);
  // LIST's steps.
  Result<Response> FetchListPage(const StopSignal& stop, const std::string& cont);
  Status AbortList(Status why);  // discards the LIST in progress
  void AddListedItems(JsonValue items, uint64_t& decode_errors);
  void MarkListed(const std::string& rv);
  bool SetError(const Status& s);  // true when the message changed
  void SetDecodeError(const Status& s);
  void Count(uint64_t WatchStatus::*requests);  // lists or watches

  ApiClient& client_;
  ResourceSpec spec_;
  WatchTarget& target_;
  WatchOptions options_;
  std::function<void()> on_synced_;
  mutable std::mutex mu_;
  WatchStatus status_;
  std::string rv_;  // owned by the Run thread
};

}  // namespace gpuattr::kube
