#include "gpuattr/kube/watch.h"

#include <future>

#include "gpuattr/util/log.h"

namespace gpuattr::kube {
namespace {

double WallSeconds(Clock& clock) {
  return std::chrono::duration<double>(clock.WallNow().time_since_epoch()).count();
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string MetaString(JsonValue obj, std::string_view key) {
  return std::string(obj.Find("metadata").Find(key).str());
}

bool ParseEventType(std::string_view t, WatchEventType& out) {
  if (t == "ADDED")
    out = WatchEventType::kAdded;
  else if (t == "MODIFIED")
    out = WatchEventType::kModified;
  else if (t == "DELETED")
    out = WatchEventType::kDeleted;
  else if (t == "BOOKMARK")
    out = WatchEventType::kBookmark;
  else if (t == "ERROR")
    out = WatchEventType::kError;
  else
    return false;
  return true;
}

// A watch ERROR event carries a metav1.Status: map its code like an HTTP status.
Error StatusEventError(JsonValue status, const std::string& resource, const std::string& cluster) {
  const int64_t code = status.Find("code").integer();
  const std::string message(status.Find("message").str());
  ErrorCode ec = code == 410   ? ErrorCode::kGone
                 : code == 403 ? ErrorCode::kPermissionDenied
                 : code == 401 ? ErrorCode::kUnauthenticated
                 : code == 429 ? ErrorCode::kResourceExhausted
                               : ErrorCode::kUnavailable;
  return MakeError(ec, "watch " + resource + " on cluster \"" + cluster + "\": ERROR event (code " +
                           std::to_string(code) + ")" + (message.empty() ? "" : ": " + message));
}

using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

// Where a LIST's time goes (debug log): blocked on the apiserver, parsing, decoding.
struct ListTally {
  Steady::time_point started = Steady::now();
  double fetch_wait = 0, parse_seconds = 0, decode_seconds = 0;
  size_t bytes = 0, objects = 0;
  int pages = 0;
};

void LogListed(const std::string& cluster, const std::string& resource, const ListTally& tally,
               Steady::time_point store_started) {
  log::Debug("listed", {{"cluster", cluster},
                        {"resource", resource},
                        {"objects", tally.objects},
                        {"pages", tally.pages},
                        {"bytes", tally.bytes},
                        {"seconds", SecondsSince(tally.started)},
                        {"apiserver_wait_seconds", tally.fetch_wait},
                        {"parse_seconds", tally.parse_seconds},
                        {"decode_seconds", tally.decode_seconds},
                        {"store_seconds", SecondsSince(store_started)}});
}

// One LIST page; `items` points into the document it was loaded into.
struct ListPage {
  JsonValue items;
  std::string resource_version;
  std::string cont;
};

// Loads one LIST response into `doc` (one for every page: its buffers are reused); the error's
// message says why it is not a list.
Result<ListPage> LoadListPage(std::string body, JsonDocument& doc, ListTally& tally) {
  tally.bytes += body.size();
  const auto t = Steady::now();
  Status parsed = doc.Load(std::move(body));
  tally.parse_seconds += SecondsSince(t);
  JsonValue list = doc.Root();
  JsonValue items = list.Find("items");
  std::string malformed = !parsed.ok()                            ? parsed.message()
                          : !list.is_object()                     ? "not a JSON object"
                          : !items.is_null() && !items.is_array() ? "\"items\" is not an array"
                                                                  : "";
  if (!malformed.empty()) return MakeError(ErrorCode::kInvalidArgument, malformed);
  return ListPage{items, MetaString(list, "resourceVersion"), MetaString(list, "continue")};
}

}  // namespace

bool WatchStreamDecoder::Feed(std::string_view chunk, const EventFn& on_event) {
  if (!error_.ok()) return false;
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      if (buffer_.size() + chunk.size() > max_line_) {
        error_ = MakeError(ErrorCode::kResourceExhausted,
                           "watch event longer than " + std::to_string(max_line_) + " bytes");
        return false;
      }
      buffer_.append(chunk);
      return true;
    }
    bool more;
    if (buffer_.empty()) {
      more = DecodeLine(chunk.substr(0, nl), on_event);
    } else {
      buffer_.append(chunk.substr(0, nl));
      std::string line = std::move(buffer_);
      buffer_.clear();
      more = DecodeLine(line, on_event);
    }
    chunk.remove_prefix(nl + 1);
    if (!more) return false;
  }
  return true;
}

bool WatchStreamDecoder::Finish(const EventFn& on_event) {
  if (!error_.ok()) return false;
  std::string line = std::move(buffer_);
  buffer_.clear();
  return DecodeLine(line, on_event);
}

bool WatchStreamDecoder::DecodeLine(std::string_view line, const EventFn& on_event) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return true;
  auto doc = JsonDocument::Parse(std::string(line));
  if (!doc.ok()) {
    error_ =
        MakeError(ErrorCode::kInvalidArgument, "malformed watch event: " + doc.error().message);
    return false;
  }
  JsonValue j = doc->Root();
  if (!j.is_object()) {
    error_ = MakeError(ErrorCode::kInvalidArgument, "watch event is not a JSON object");
    return false;
  }
  WatchEvent ev;
  JsonValue type = j.Find("type");
  if (type.is_null()) {
    // A bare metav1.Status: the body of a watch that failed with a non-2xx status.
    if (j.Find("kind").str() != "Status") {
      error_ = MakeError(ErrorCode::kInvalidArgument, "watch event without \"type\"");
      return false;
    }
    ev.type = WatchEventType::kError;
    ev.object = j;
  } else {
    if (!type.is_string()) {
      error_ = MakeError(ErrorCode::kInvalidArgument, "watch event \"type\" is not a string");
      return false;
    }
    if (!ParseEventType(type.str(), ev.type)) return true;  // unknown: skip
    ev.object = j.Find("object");
  }
  return on_event(ev);
}

ListWatcher::ListWatcher(ApiClient& client, ResourceSpec spec, WatchTarget& target,
                         WatchOptions options)
    : client_(client), spec_(std::move(spec)), target_(target), options_(options) {
  status_.resource = spec_.resource;
}

std::string ListWatcher::ListPath(std::string_view base, int limit, std::string_view cont) {
  std::string path(base);
  path += "?limit=" + std::to_string(limit);
  if (!cont.empty()) path += "&continue=" + UrlEncode(cont);
  return path;
}

std::string ListWatcher::WatchPath(std::string_view base, std::string_view rv,
                                   std::chrono::seconds timeout) {
  std::string path(base);
  path += "?watch=1&allowWatchBookmarks=true";
  if (!rv.empty()) path += "&resourceVersion=" + UrlEncode(rv);
  path += "&timeoutSeconds=" + std::to_string(timeout.count());
  return path;
}

WatchStatus ListWatcher::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool ListWatcher::SetError(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string message = s.ok() ? std::string() : s.message();
  bool changed = message != status_.last_error;
  status_.last_error = std::move(message);
  status_.last_error_code = s.ok() ? ErrorCode::kInternal : s.code();
  return changed;
}

void ListWatcher::Count(uint64_t WatchStatus::*requests) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(status_.*requests);
}

void ListWatcher::SetDecodeError(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  ++status_.decode_errors;
  status_.last_decode_error = s.message();
}

void ListWatcher::Run(const StopSignal& stop) {
  Backoff backoff(options_.backoff, client_.options().random);
  Clock& clock = client_.clock();
  bool need_list = true;
  while (!stop.stopped()) {
    if (need_list) {
      Status s = List(stop);
      if (stop.stopped()) break;
      if (!s.ok()) {
        const bool refused =
            s.code() == ErrorCode::kNotFound || s.code() == ErrorCode::kPermissionDenied;
        if (options_.return_on_refusal && refused && !status().synced) {
          SetError(s);
          return;
        }
        // A persistent failure (say a missing RBAC grant) is logged once, not every backoff.
        if (SetError(s))
          log::Warn("list failed", {{"cluster", client_.ClusterName()},
                                    {"resource", spec_.resource},
                                    {"error", s.message()}});
        clock.SleepFor(backoff.Next(), &stop);
        continue;
      }
      need_list = false;
      backoff.Reset();
      SetError(Status::Ok());
      if (on_synced_) on_synced_();
      if (!options_.keep_watching) return;
    }
    bool got_events = false;
    Status s = Watch(stop, got_events);
    if (stop.stopped()) break;
    if (s.ok()) {
      SetError(Status::Ok());
      if (got_events) {
        backoff.Reset();
      } else {
        // An empty stream that ends at once must not become a tight loop of WATCH requests.
        clock.SleepFor(backoff.Next(), &stop);
      }
      continue;
    }
    if (s.code() == ErrorCode::kGone) {
      log::Info("watch expired, relisting",
                {{"cluster", client_.ClusterName()}, {"resource", spec_.resource}});
      need_list = true;
      continue;
    }
    if (SetError(s))
      log::Warn("watch failed", {{"cluster", client_.ClusterName()},
                                 {"resource", spec_.resource},
                                 {"error", s.message()}});
    clock.SleepFor(backoff.Next(), &stop);
  }
}

Result<Response> ListWatcher::FetchListPage(const StopSignal& stop, const std::string& cont) {
  GetOptions opts;
  opts.timeout = options_.list_timeout;
  opts.stop = &stop;
  return client_.Get(ListPath(spec_.list_path, options_.page_limit, cont), opts);
}

Status ListWatcher::AbortList(Status why) {
  target_.EndList(false);
  return why;
}

void ListWatcher::AddListedItems(JsonValue items, uint64_t& decode_errors) {
  for (JsonValue item : items.Elements()) {
    Status s = target_.AddListed(item);
    if (!s.ok()) {
      if (decode_errors++ == 0) {
        log::Warn("skipping object", {{"cluster", client_.ClusterName()}, {"error", s.message()}});
      }
      SetDecodeError(s);
    }
  }
}

void ListWatcher::MarkListed(const std::string& rv) {
  rv_ = rv;
  std::lock_guard<std::mutex> lock(mu_);
  status_.synced = true;
  status_.resource_version = rv;
  status_.last_connected_unix = WallSeconds(client_.clock());
  status_.last_sync_unix =
      std::chrono::duration_cast<std::chrono::seconds>(client_.clock().WallNow().time_since_epoch())
          .count();
}

Status ListWatcher::List(const StopSignal& stop) {
  Count(&WatchStatus::lists);
  target_.BeginList();
  constexpr int kMaxPages = 100000;  // a bound, far beyond any real cluster
  std::string cont;
  std::string rv;
  uint64_t decode_errors = 0;
  ListTally tally;
  auto t = Steady::now();
  Result<Response> r = FetchListPage(stop, cont);
  tally.fetch_wait += SecondsSince(t);
  JsonDocument doc;  // one for every page: its buffers are reused
  for (int page = 0;; ++page) {
    tally.pages = page + 1;
    if (page >= kMaxPages)
      return AbortList(
          MakeError(ErrorCode::kInternal, "list " + spec_.resource + ": too many pages"));
    if (!r.ok()) return AbortList(r.error());
    Result<ListPage> loaded = LoadListPage(std::move(r->body), doc, tally);
    if (!loaded.ok()) {
      return AbortList(MakeError(ErrorCode::kInvalidArgument,
                                 "list " + spec_.resource + " on cluster \"" +
                                     client_.ClusterName() +
                                     "\": malformed response: " + loaded.error().message));
    }
    rv = std::move(loaded->resource_version);
    cont = std::move(loaded->cont);
    // The next page is requested while this one is decoded: the apiserver's work and ours
    // overlap (the first cycle waits for every page).
    std::future<Result<Response>> next;
    if (!cont.empty() && !stop.stopped())
      next =
          std::async(std::launch::async, [this, &stop, cont] { return FetchListPage(stop, cont); });
    t = Steady::now();
    tally.objects += loaded->items.size();
    AddListedItems(loaded->items, decode_errors);
    tally.decode_seconds += SecondsSince(t);
    if (cont.empty()) break;
    if (stop.stopped()) return AbortList(MakeError(ErrorCode::kUnavailable, "stopped"));
    t = Steady::now();
    r = next.valid() ? next.get() : FetchListPage(stop, cont);
    tally.fetch_wait += SecondsSince(t);
  }
  t = Steady::now();
  target_.EndList(true);
  LogListed(client_.ClusterName(), spec_.resource, tally, t);
  MarkListed(rv);
  return Status::Ok();
}

Status ListWatcher::Watch(const StopSignal& stop, bool& got_events) {
  Count(&WatchStatus::watches);
  WatchStreamDecoder decoder;
  Status event_error;
  uint64_t decode_errors = 0;
  const std::string cluster = client_.ClusterName();
  auto on_event = [&](const WatchEvent& ev) -> bool {
    if (ev.type == WatchEventType::kError) {
      event_error = StatusEventError(ev.object, spec_.resource, cluster);
      return false;
    }
    got_events = true;
    if (ev.type != WatchEventType::kBookmark) {
      Status s = target_.Apply(ev.type, ev.object);
      if (!s.ok()) {
        if (decode_errors++ == 0)
          log::Warn("skipping object", {{"cluster", cluster}, {"error", s.message()}});
        SetDecodeError(s);
      }
    }
    std::string rv = MetaString(ev.object, "resourceVersion");
    if (!rv.empty()) rv_ = std::move(rv);
    return true;
  };
  bool opened = false;  // the transport calls the sink (maybe with no data) once the 2xx arrived
  ChunkSink sink = [&](std::string_view chunk) {
    if (stop.stopped()) return false;
    if (!opened) {
      opened = true;
      std::lock_guard<std::mutex> lock(mu_);
      status_.streaming = true;
      status_.last_connected_unix = WallSeconds(client_.clock());
    }
    return decoder.Feed(chunk, on_event) && !stop.stopped();
  };
  GetOptions opts;
  opts.timeout = options_.stream_timeout;
  opts.stop = &stop;
  auto r = client_.Stream(WatchPath(spec_.list_path, rv_, options_.watch_timeout), sink, opts);
  if (r.ok() && event_error.ok() && decoder.error().ok() && !stop.stopped())
    decoder.Finish(on_event);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.resource_version = rv_;
    status_.streaming = false;
    if (opened) status_.last_connected_unix = WallSeconds(client_.clock());
  }
  if (stop.stopped()) return Status::Ok();
  if (!event_error.ok()) return event_error;
  if (!r.ok()) return r.error();
  if (!decoder.error().ok()) {
    return MakeError(decoder.error().code(), "watch " + spec_.resource + " on cluster \"" +
                                                 cluster + "\": " + decoder.error().message());
  }
  return Status::Ok();
}

}  // namespace gpuattr::kube
