#include "support/fake_apiserver.h"

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <unistd.h>

namespace gpuattr::testing {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------------------------
// Resource table: what the fake serves and how Kubernetes names it.

struct ResourceInfo {
  const char* name;  // plural
  const char* kind;
  const char* singular;
  const char* group;  // "" = core
  bool namespaced;
  const char* short_name;
};

constexpr ResourceInfo kResources[] = {
    {"pods", "Pod", "pod", "", true, "po"},
    {"nodes", "Node", "node", "", false, "no"},
    {"services", "Service", "service", "", true, "svc"},
    {"namespaces", "Namespace", "namespace", "", false, "ns"},
    {"resourceslices", "ResourceSlice", "resourceslice", "resource.k8s.io", false, ""},
    {"resourceclaims", "ResourceClaim", "resourceclaim", "resource.k8s.io", true, ""},
};
constexpr const char* kDraGroup = "resource.k8s.io";

const ResourceInfo* FindResource(const std::string& name) {
  for (const auto& r : kResources)
    if (name == r.name) return &r;
  return nullptr;
}

std::string ApiVersionFor(const ResourceInfo& r, const std::string& dra_version) {
  return r.group[0] ? std::string(r.group) + "/" + dra_version : "v1";
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// A stable UUID-shaped uid derived from the object's identity (same scenario → same uids).
std::string StableUid(const std::string& identity) {
  char buf[40];
  uint64_t a = Fnv1a(identity, 1), b = Fnv1a(identity, 2);
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(b >> 52),
                static_cast<unsigned long long>(b & 0xffffffffffffull));
  return buf;
}

std::string HexEncode(const std::string& s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> HexDecode(const std::string& s) {
  if (s.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = nib(s[i]), lo = nib(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> segs;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) segs.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) segs.push_back(cur);
  return segs;
}

std::optional<uint64_t> ParseUint(const std::string& s) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(s);
}

// Inserts kind and apiVersion in front of a stored (bare) object's JSON text.
std::string WithTypeMeta(const std::string& bare, const std::string& api_version,
                         const std::string& kind) {
  std::string head =
      "{\"apiVersion\":" + json(api_version).dump() + ",\"kind\":" + json(kind).dump();
  if (bare.size() <= 2) return head + "}";
  return head + "," + bare.substr(1);
}

// A Kubernetes metav1.Status.
std::string StatusBody(int code, const std::string& reason, const std::string& message,
                       json details = nullptr) {
  json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason},
            {"code", code}};
  if (!details.is_null()) s["details"] = std::move(details);
  return s.dump();
}

std::string ReasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

// ---------------------------------------------------------------------------------------------
// Label and field selectors (equality-based, as kubectl and client-go send them).

struct SelectorTerm {
  std::string key;
  enum Op { kEq, kNeq, kExists, kNotExists } op = kEq;
  std::string value;
};

Result<std::vector<SelectorTerm>> ParseSelector(const std::string& text, bool allow_existence) {
  std::vector<SelectorTerm> terms;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    part = trim(part);
    if (part.empty()) continue;
    SelectorTerm t;
    if (size_t p = part.find("!="); p != std::string::npos) {
      t = {trim(part.substr(0, p)), SelectorTerm::kNeq, trim(part.substr(p + 2))};
    } else if (size_t q = part.find("=="); q != std::string::npos) {
      t = {trim(part.substr(0, q)), SelectorTerm::kEq, trim(part.substr(q + 2))};
    } else if (size_t r = part.find('='); r != std::string::npos) {
      t = {trim(part.substr(0, r)), SelectorTerm::kEq, trim(part.substr(r + 1))};
    } else if (allow_existence && part[0] == '!') {
      t = {trim(part.substr(1)), SelectorTerm::kNotExists, ""};
    } else if (allow_existence && part.find_first_of(" ()") == std::string::npos) {
      t = {part, SelectorTerm::kExists, ""};
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "unsupported selector term \"" + part + "\"");
    }
    terms.push_back(std::move(t));
  }
  return terms;
}

const json* FieldAt(const json& obj, const std::string& dotted) {
  const json* cur = &obj;
  std::stringstream ss(dotted);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
  }
  return cur;
}

bool Matches(const json& obj, const std::vector<SelectorTerm>& labels,
             const std::vector<SelectorTerm>& fields) {
  if (labels.empty() && fields.empty()) return true;
  const json* lbls = FieldAt(obj, "metadata.labels");
  for (const auto& t : labels) {
    const json* v =
        (lbls && lbls->is_object() && lbls->contains(t.key)) ? &(*lbls)[t.key] : nullptr;
    std::string s = v && v->is_string() ? v->get<std::string>() : "";
    switch (t.op) {
      case SelectorTerm::kEq:
        if (!v || s != t.value) return false;
        break;
      case SelectorTerm::kNeq:
        if (v && s == t.value) return false;
        break;
      case SelectorTerm::kExists:
        if (!v) return false;
        break;
      case SelectorTerm::kNotExists:
        if (v) return false;
        break;
    }
  }
  for (const auto& t : fields) {
    const json* v = FieldAt(obj, t.key);
    std::string s = !v ? "" : v->is_string() ? v->get<std::string>() : v->dump();
    if (t.op == SelectorTerm::kEq && s != t.value) return false;
    if (t.op == SelectorTerm::kNeq && s == t.value) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Routes.

struct Route {
  enum Kind {
    kVersion,
    kHealth,
    kApi,
    kApis,
    kCoreResourceList,
    kDraGroup,
    kDraResourceList,
    kCollection,  // list or watch
    kObject,      // get one object
    kPodProxy,
    kServiceProxy,
    kNotFound,
  } kind = kNotFound;
  const ResourceInfo* res = nullptr;
  std::string dra_version;  // for DRA routes
  std::string ns, name, proxy_path;
};

// True when the client closed its end (a watch learns it without having to write).
bool PeerClosed(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool ParseWatchFlag(const httplib::Request& req) {
  if (!req.has_param("watch")) return false;
  std::string w = req.get_param_value("watch");
  return w == "1" || w == "true" || w == "True";
}

struct PromReply {
  int status = 200;
  std::string body;
};

// A Prometheus-compatible API's answer to GET `path` (below the service root) with `query`: the
// first matching answer, else an empty vector; buildinfo; 404 for other paths.
PromReply AnswerPromQuery(const std::vector<PromAnswer>& answers, const std::string& path,
                          const std::optional<std::string>& query) {
  if (path == "/api/v1/status/buildinfo") {
    json info = {{"status", "success"},
                 {"data",
                  {{"version", "2.42.0"},
                   {"revision", "fake"},
                   {"branch", "HEAD"},
                   {"goVersion", "go1.19.8"}}}};
    return {200, info.dump()};
  }
  if (path != "/api/v1/query") return {404, "404 page not found\n"};
  if (!query) {
    json err = {{"status", "error"},
                {"errorType", "bad_data"},
                {"error", "invalid parameter \"query\": query is empty"}};
    return {400, err.dump()};
  }
  for (const auto& a : answers) {
    bool hit = false;
    switch (a.match) {
      case PromAnswer::Match::kExact:
        hit = *query == a.pattern;
        break;
      case PromAnswer::Match::kContains:
        hit = query->find(a.pattern) != std::string::npos;
        break;
      case PromAnswer::Match::kRegex:
        try {
          hit = std::regex_search(*query, std::regex(a.pattern));
        } catch (const std::regex_error&) {
        }
        break;
    }
    if (hit) return {a.status, a.body};
  }
  json empty = {{"status", "success"},
                {"data", {{"resultType", "vector"}, {"result", json::array()}}}};
  return {200, empty.dump()};
}

}  // namespace

// =============================================================================================

struct FakeApiServer::Impl {
  Scenario scenario;
  FakeApiServerOptions options;
  TestPki pki;
  std::unique_ptr<httplib::SSLServer> server;
  std::thread listen_thread, script_thread;
  int port = 0;
  bool started = false;
  mutable std::mutex tokens_mu;  // guards options.tokens (SetTokens while serving)

  // ---- State, guarded by mu.
  mutable std::mutex mu;
  std::condition_variable cv;  // state changed or stopping: wakes watches, delays, the script
  bool stopping = false;
  uint64_t watch_epoch = 0;  // EndWatches() bumps it: streams of an older epoch end

  struct Stored {
    std::shared_ptr<const json> obj;          // bare: no kind/apiVersion
    std::shared_ptr<const std::string> text;  // its JSON
  };
  std::map<std::string, std::map<std::string, Stored>> store;  // resource → "ns/name" → object
  struct Event {
    uint64_t rv;
    const ResourceInfo* res;
    std::string ns;
    std::string type;
    Stored object;
  };
  std::deque<Event> history;  // events with rv > compacted_rv, in order
  uint64_t rv = 0;
  uint64_t compacted_rv = 0;

  struct ExporterState {
    std::vector<std::string> bodies;
    size_t served = 0;
  };
  std::map<std::string, ExporterState> exporters;
  std::map<std::string, std::vector<PromAnswer>> prometheus;
  struct FaultState {
    FaultRule rule;
    int used = 0;
  };
  std::vector<FaultState> faults;
  struct ScriptState {
    ScriptedEvent ev;
    bool armed = false;
    bool done = false;
    Clock::time_point due;
  };
  std::vector<ScriptState> script;
  std::map<std::string, int> watch_counts;
  std::vector<std::string> script_errors;

  // ---- Request log, guarded by log_mu.
  mutable std::mutex log_mu;
  std::vector<RequestRecord> log;

  // =========================================================================================
  // Object store (callers hold mu).

  static std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

  Status UpsertLocked(json obj, bool emit_event) {
    if (!obj.is_object() || !obj.contains("kind") || !obj["kind"].is_string())
      return MakeError(ErrorCode::kInvalidArgument, "object has no kind");
    std::string kind = obj["kind"];
    const ResourceInfo* res = FindResource(ResourceForKind(kind));
    if (!res)
      return MakeError(ErrorCode::kInvalidArgument, "kind " + kind + " is not served by the fake");
    json& meta = obj["metadata"];
    if (!meta.is_object() || !meta.contains("name") || !meta["name"].is_string())
      return MakeError(ErrorCode::kInvalidArgument, kind + " has no metadata.name");
    std::string name = meta["name"];
    if (res->namespaced) {
      if (!meta.contains("namespace") || !meta["namespace"].is_string() ||
          meta["namespace"].get<std::string>().empty())
        meta["namespace"] = "default";
    } else {
      meta.erase("namespace");
    }
    std::string ns = res->namespaced ? meta["namespace"].get<std::string>() : "";
    auto& coll = store[res->name];
    auto it = coll.find(Key(ns, name));
    if (it != coll.end()) {  // keep identity fields of the object being replaced
      const json& old = (*it->second.obj)["metadata"];
      if (!meta.contains("uid") && old.contains("uid")) meta["uid"] = old["uid"];
      if (!meta.contains("creationTimestamp") && old.contains("creationTimestamp"))
        meta["creationTimestamp"] = old["creationTimestamp"];
    }
    if (!meta.contains("uid"))
      meta["uid"] = StableUid(std::string(res->name) + "/" + Key(ns, name));
    if (!meta.contains("creationTimestamp"))
      meta["creationTimestamp"] = Rfc3339(std::chrono::system_clock::now());
    meta["resourceVersion"] = std::to_string(++rv);
    obj.erase("kind");
    obj.erase("apiVersion");
    Stored s{std::make_shared<const json>(std::move(obj)), nullptr};
    s.text = std::make_shared<const std::string>(s.obj->dump());
    std::string type = it == coll.end() ? "ADDED" : "MODIFIED";
    coll[Key(ns, name)] = s;
    if (emit_event) history.push_back(Event{rv, res, ns, type, s});
    cv.notify_all();
    return Status::Ok();
  }

  Status DeleteLocked(const std::string& resource, const std::string& ns, const std::string& name) {
    const ResourceInfo* res = FindResource(resource);
    if (!res)
      return MakeError(ErrorCode::kInvalidArgument,
                       "resource " + resource + " is not served by the fake");
    std::string real_ns = res->namespaced ? ns : "";
    auto& coll = store[resource];
    auto it = coll.find(Key(real_ns, name));
    if (it == coll.end())
      return MakeError(ErrorCode::kNotFound,
                       resource + " \"" + Key(real_ns, name) + "\" not found");
    json obj = *it->second.obj;
    obj["metadata"]["resourceVersion"] = std::to_string(++rv);
    Stored s{std::make_shared<const json>(std::move(obj)), nullptr};
    s.text = std::make_shared<const std::string>(s.obj->dump());
    coll.erase(it);
    history.push_back(Event{rv, res, real_ns, "DELETED", s});
    cv.notify_all();
    return Status::Ok();
  }

  std::optional<json> GetLocked(const std::string& resource, const std::string& ns,
                                const std::string& name, const std::string& dra_version) const {
    const ResourceInfo* res = FindResource(resource);
    if (!res) return std::nullopt;
    auto cit = store.find(resource);
    if (cit == store.end()) return std::nullopt;
    auto it = cit->second.find(Key(res->namespaced ? ns : "", name));
    if (it == cit->second.end()) return std::nullopt;
    json out = *it->second.obj;
    out["kind"] = res->kind;
    out["apiVersion"] = ApiVersionFor(*res, dra_version);
    return out;
  }

  std::string PreferredDraVersion() const {
    return scenario.dra_versions.empty() ? "v1" : scenario.dra_versions.front();
  }

  // =========================================================================================
  // Watch script.

  Status ApplyScripted(const ScriptedEvent& ev) {
    if (ev.type == "DELETED") return DeleteLocked(ev.resource, ev.ref_namespace, ev.ref_name);
    if (!ev.object.is_null()) return UpsertLocked(ev.object, true);
    auto cur = GetLocked(ev.resource, ev.ref_namespace, ev.ref_name, PreferredDraVersion());
    if (!cur)
      return MakeError(ErrorCode::kNotFound,
                       ev.resource + " " + ev.ref_namespace + "/" + ev.ref_name + " not found");
    cur->merge_patch(ev.patch);
    return UpsertLocked(std::move(*cur), true);
  }

  void ArmWatchTriggered(const std::string& resource, int nth) {
    for (auto& s : script) {
      if (!s.armed && s.ev.after_watch == nth && s.ev.resource == resource) {
        s.armed = true;
        s.due = Clock::now() + s.ev.delay;
      }
    }
    cv.notify_all();
  }

  void RunScript() {
    std::unique_lock lk(mu);
    while (!stopping) {
      auto next = Clock::time_point::max();
      auto now = Clock::now();
      for (auto& s : script) {
        if (!s.armed || s.done) continue;
        if (s.due <= now) {
          s.done = true;
          if (auto st = ApplyScripted(s.ev); !st)
            script_errors.push_back(s.ev.source + ": " + st.message());
        } else {
          next = std::min(next, s.due);
        }
      }
      if (next == Clock::time_point::max())
        cv.wait(lk);
      else
        cv.wait_until(lk, next);
    }
  }

  // Waits `d` unless the server stops first.
  void InterruptibleSleep(std::chrono::milliseconds d) {
    std::unique_lock lk(mu);
    cv.wait_for(lk, d, [&] { return stopping; });
  }

  // =========================================================================================
  // Request handling.

  struct Ctx {
    const httplib::Request& req;
    httplib::Response& res;
    RequestRecord rec;
    const FaultRule* fault = nullptr;  // a copy owned by `fault_copy`
    FaultRule fault_copy;
  };

  void Record(Ctx& c) {
    c.rec.status = c.res.status;
    std::lock_guard lk(log_mu);
    if (log.size() >= options.max_request_log && !log.empty())
      log.erase(log.begin(), log.begin() + static_cast<long>(log.size() / 2));
    log.push_back(c.rec);
  }

  void SendStatus(Ctx& c, int code, const std::string& message, json details = nullptr) {
    c.res.status = code;
    c.res.set_content(StatusBody(code, ReasonFor(code), message, std::move(details)),
                      "application/json");
  }

  // Sends `body`, honouring a truncate_at fault (send part of it, then drop the connection).
  void SendBody(Ctx& c, int code, std::string body, const std::string& content_type) {
    c.res.status = code;
    if (c.fault && c.fault->truncate_at >= 0 &&
        static_cast<size_t>(c.fault->truncate_at) < body.size()) {
      auto shared = std::make_shared<std::string>(std::move(body));
      size_t cut = static_cast<size_t>(c.fault->truncate_at);
      c.res.set_content_provider(shared->size(), content_type,
                                 [shared, cut](size_t offset, size_t, httplib::DataSink& sink) {
                                   if (offset < cut)
                                     sink.write(shared->data() + offset, cut - offset);
                                   return false;  // abort: the client sees a short body
                                 });
      c.rec.detail = "truncated at " + std::to_string(cut);
      return;
    }
    c.res.set_content(std::move(body), content_type);
  }

  std::optional<std::string> Authenticate(const httplib::Request& req, bool& had_credentials) {
    had_credentials = false;
    if (req.ssl) {
      X509* cert = SSL_get0_peer_certificate(req.ssl);
      if (cert) {
        had_credentials = true;
        if (SSL_get_verify_result(req.ssl) == X509_V_OK) {
          char cn[256] = {0};
          X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
          return std::string(cn);
        }
      }
    }
    std::string auth = req.get_header_value("Authorization");
    if (!auth.empty()) {
      had_credentials = true;
      if (auth.size() > 7 &&
          (auth.compare(0, 7, "Bearer ") == 0 || auth.compare(0, 7, "bearer ") == 0)) {
        std::lock_guard tk(tokens_mu);
        auto it = options.tokens.find(auth.substr(7));
        if (it != options.tokens.end()) return it->second;
      }
    }
    return std::nullopt;
  }

  Route Resolve(const std::string& path) const {
    Route r;
    auto segs = SplitPath(path);
    if (path == "/version" || path == "/version/") return r.kind = Route::kVersion, r;
    if (path == "/healthz" || path == "/livez" || path == "/readyz")
      return r.kind = Route::kHealth, r;
    if (segs.size() == 1 && segs[0] == "api") return r.kind = Route::kApi, r;
    if (segs.size() == 1 && segs[0] == "apis") return r.kind = Route::kApis, r;
    std::vector<std::string> rest;
    bool core = false;
    if (segs.size() >= 2 && segs[0] == "api" && segs[1] == "v1") {
      core = true;
      rest.assign(segs.begin() + 2, segs.end());
      if (rest.empty()) return r.kind = Route::kCoreResourceList, r;
    } else if (segs.size() >= 2 && segs[0] == "apis" && segs[1] == kDraGroup &&
               !scenario.dra_versions.empty()) {
      if (segs.size() == 2) return r.kind = Route::kDraGroup, r;
      const auto& vs = scenario.dra_versions;
      if (std::find(vs.begin(), vs.end(), segs[2]) == vs.end()) return r;
      r.dra_version = segs[2];
      rest.assign(segs.begin() + 3, segs.end());
      if (rest.empty()) return r.kind = Route::kDraResourceList, r;
    } else {
      return r;
    }
    auto resource_ok = [&](const std::string& name) -> const ResourceInfo* {
      const ResourceInfo* info = FindResource(name);
      if (!info || (info->group[0] == 0) != core) return nullptr;
      return info;
    };
    if (rest.size() >= 3 && rest[0] == "namespaces") {
      r.ns = rest[1];
      r.res = resource_ok(rest[2]);
      if (!r.res || !r.res->namespaced) return r.kind = Route::kNotFound, r;
      if (rest.size() == 3) return r.kind = Route::kCollection, r;
      r.name = rest[3];
      if (rest.size() == 4) return r.kind = Route::kObject, r;
      if (rest[4] == "proxy" && core && (rest[2] == "pods" || rest[2] == "services")) {
        r.kind = rest[2] == "pods" ? Route::kPodProxy : Route::kServiceProxy;
        r.proxy_path = "/";
        for (size_t i = 5; i < rest.size(); ++i) r.proxy_path += (i > 5 ? "/" : "") + rest[i];
        if (path.size() > 1 && path.back() == '/' && rest.size() > 5) r.proxy_path += "/";
        return r;
      }
      return r.kind = Route::kNotFound, r;
    }
    r.res = resource_ok(rest[0]);
    if (!r.res) return r.kind = Route::kNotFound, r;
    if (rest.size() == 1) return r.kind = Route::kCollection, r;
    if (rest.size() == 2 && !r.res->namespaced) {
      r.name = rest[1];
      return r.kind = Route::kObject, r;
    }
    r.kind = Route::kNotFound;
    return r;
  }

  static std::string VerbFor(const Route& r, const httplib::Request& req) {
    if (req.method != "GET") return "other";
    switch (r.kind) {
      case Route::kCollection:
        return ParseWatchFlag(req) ? "watch" : "list";
      case Route::kPodProxy:
      case Route::kServiceProxy:
        return "proxy";
      default:
        return "get";
    }
  }

  const FaultRule* MatchFault(Ctx& c) {
    std::lock_guard lk(mu);
    for (auto& f : faults) {
      const FaultRule& r = f.rule;
      if (r.times > 0 && f.used >= r.times) continue;
      if (!r.verb.empty() && r.verb != c.rec.verb) continue;
      if (!r.path_prefix.empty() && !c.rec.path.starts_with(r.path_prefix)) continue;
      if (!r.query_contains.empty() && c.rec.query.find(r.query_contains) == std::string::npos)
        continue;
      if (!r.path_regex.empty()) {
        try {
          if (!std::regex_search(c.rec.path, std::regex(r.path_regex))) continue;
        } catch (const std::regex_error&) {
          continue;  // validated on load; a rule added at runtime with a bad regex never matches
        }
      }
      ++f.used;
      c.fault_copy = r;
      c.fault = &c.fault_copy;
      return c.fault;
    }
    return nullptr;
  }

  std::string ForbiddenMessage(const Ctx& c, const Route& r) {
    std::string resource = r.res ? r.res->name : "";
    std::string verb = c.rec.verb == "proxy" ? "get" : c.rec.verb;
    if (r.kind == Route::kPodProxy) resource = "pods/proxy";
    if (r.kind == Route::kServiceProxy) resource = "services/proxy";
    std::string group = r.res ? r.res->group : "";
    std::string subject = resource.empty()
                              ? "path \"" + c.rec.path + "\""
                              : "resource \"" + resource + "\" in API group \"" + group + "\"";
    std::string scope =
        r.ns.empty() ? " at the cluster scope" : " in the namespace \"" + r.ns + "\"";
    if (resource.empty()) scope.clear();
    return (resource.empty()
                ? "forbidden"
                : resource + (r.name.empty() ? "" : " \"" + r.name + "\"") + " is forbidden") +
           std::string(": User \"") + c.rec.user + "\" cannot " + verb + " " + subject + scope;
  }

  // Status fault: answers with `code` (a watch gets an ERROR event for 410, as the apiserver does).
  void SendFaultStatus(Ctx& c, const Route& r) {
    const FaultRule& f = *c.fault;
    if (!f.body.empty()) {
      SendBody(c, f.status, f.body,
               f.body[0] == '{' ? "application/json" : "text/plain; charset=utf-8");
    } else if (f.status == 410 && c.rec.verb == "watch") {
      c.res.status = 200;
      std::string msg = f.message.empty() ? "too old resource version: 1 (" +
                                                std::to_string(resource_version()) + ")"
                                          : f.message;
      c.res.set_content(WatchError(410, msg), "application/json");
      c.rec.detail = "watch ERROR 410";
      return;
    } else {
      std::string msg = f.message;
      json details = nullptr;
      if (msg.empty()) {
        switch (f.status) {
          case 401:
            msg = "Unauthorized";
            break;
          case 403:
            msg = ForbiddenMessage(c, r);
            break;
          case 404:
            msg = r.res ? std::string(r.res->name) + " \"" + r.name + "\" not found"
                        : "the server could not find the requested resource";
            break;
          case 410:
            msg =
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter.";
            break;
          case 429:
            msg = "Too many requests, please try again later.";
            break;
          case 503:
            msg = "the server is currently unable to handle the request";
            break;
          default:
            msg = "Internal error occurred: injected fault " + f.source;
            break;
        }
      }
      if (r.res) details = {{"kind", r.res->name}};
      if (!r.name.empty() && r.res) details["name"] = r.name;
      if (f.retry_after >= 0) {
        if (details.is_null()) details = json::object();
        details["retryAfterSeconds"] = f.retry_after;
      }
      SendBody(c, f.status, StatusBody(f.status, ReasonFor(f.status), msg, details),
               "application/json");
    }
    if (f.retry_after >= 0) c.res.set_header("Retry-After", std::to_string(f.retry_after));
  }

  // oversize_bytes: valid-looking exposition lines, streamed, until the byte count is reached.
  void SendOversize(Ctx& c, long long total) {
    c.res.status = 200;
    auto sent = std::make_shared<long long>(0);
    c.res.set_chunked_content_provider(
        "text/plain; version=0.0.4; charset=utf-8",
        [this, sent, total](size_t, httplib::DataSink& sink) {
          std::string chunk;
          while (chunk.size() < 65536 && *sent + static_cast<long long>(chunk.size()) < total) {
            chunk +=
                "gpuattr_fake_padding{line=\"" + std::to_string(*sent + chunk.size()) + "\"} 1\n";
          }
          long long room = total - *sent;
          if (static_cast<long long>(chunk.size()) > room) chunk.resize(static_cast<size_t>(room));
          *sent += static_cast<long long>(chunk.size());
          if (!chunk.empty() && !sink.write(chunk.data(), chunk.size())) return false;
          bool stop;
          {
            std::lock_guard lk(mu);
            stop = stopping;
          }
          if (*sent >= total || stop) sink.done();
          return true;
        });
    c.rec.detail = "oversize " + std::to_string(total);
  }

  static std::string WatchError(int code, const std::string& message) {
    return "{\"type\":\"ERROR\",\"object\":" + StatusBody(code, ReasonFor(code), message) + "}\n";
  }

  uint64_t resource_version() const {
    std::lock_guard lk(mu);
    return rv;
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    Ctx c{req, res, {}, nullptr, {}};
    c.rec.remote_port = req.remote_port;
    c.rec.method = req.method;
    c.rec.path = req.path;
    size_t q = req.target.find('?');
    c.rec.query = q == std::string::npos ? "" : req.target.substr(q + 1);
    c.rec.time = std::chrono::system_clock::now();
    Route r = Resolve(req.path);
    c.rec.verb = VerbFor(r, req);
    if (r.res) c.rec.resource = r.res->name;
    if (r.kind == Route::kPodProxy) c.rec.resource = "pods/proxy";
    if (r.kind == Route::kServiceProxy) c.rec.resource = "services/proxy";

    bool had_credentials = false;
    auto user = Authenticate(req, had_credentials);
    bool anonymous_ok = !had_credentials && (r.kind == Route::kVersion || r.kind == Route::kHealth);
    if (!user && !anonymous_ok) {
      SendStatus(c, 401, "Unauthorized");
      return Record(c);
    }
    c.rec.user = user.value_or("system:anonymous");
    if (req.method != "GET") {
      SendStatus(c, 405,
                 "the fake apiserver serves GET only (" + req.method + " " + req.path + ")");
      res.set_header("Connection", "close");
      return Record(c);
    }
    if (MatchFault(c)) {
      c.rec.fault = true;
      c.rec.detail = "fault " + c.fault->source;
      if (c.fault->delay.count() > 0) InterruptibleSleep(c.fault->delay);
      if (c.fault->status) {
        SendFaultStatus(c, r);
        return Record(c);
      }
      if (c.fault->oversize_bytes >= 0) {
        SendOversize(c, c.fault->oversize_bytes);
        return Record(c);
      }
    }
    Dispatch(c, r);
    Record(c);
  }

  void Dispatch(Ctx& c, const Route& r) {
    switch (r.kind) {
      case Route::kVersion:
        return SendVersion(c);
      case Route::kHealth:
        return SendBody(c, 200, "ok", "text/plain; charset=utf-8");
      case Route::kApi:
        return SendApi(c);
      case Route::kApis:
        return SendApis(c);
      case Route::kCoreResourceList:
        return SendResourceList(c, "v1", "");
      case Route::kDraGroup:
        return SendDraGroup(c);
      case Route::kDraResourceList:
        return SendResourceList(c, std::string(kDraGroup) + "/" + r.dra_version, kDraGroup);
      case Route::kCollection:
        return c.rec.verb == "watch" ? StartWatch(c, r) : SendList(c, r);
      case Route::kObject:
        return SendObject(c, r);
      case Route::kPodProxy:
        return SendPodProxy(c, r);
      case Route::kServiceProxy:
        return SendServiceProxy(c, r);
      case Route::kNotFound:
        break;
    }
    SendStatus(c, 404, "the server could not find the requested resource");
  }

  // ---- Discovery.

  void SendVersion(Ctx& c) {
    std::smatch m;
    std::string minor = "30";
    static const std::regex kVer("v1\\.([0-9]+)\\..*");
    if (std::regex_match(scenario.git_version, m, kVer)) minor = m[1];
    json v = {{"major", "1"},
              {"minor", minor},
              {"gitVersion", scenario.git_version},
              {"gitCommit", "0000000000000000000000000000000000000000"},
              {"gitTreeState", "clean"},
              {"buildDate", "2026-01-01T00:00:00Z"},
              {"goVersion", "go1.22.5"},
              {"compiler", "gc"},
              {"platform", "linux/amd64"}};
    SendBody(c, 200, v.dump(), "application/json");
  }

  void SendApi(Ctx& c) {
    json v = {{"kind", "APIVersions"},
              {"versions", {"v1"}},
              {"serverAddressByClientCIDRs",
               {{{"clientCIDR", "0.0.0.0/0"},
                 {"serverAddress", options.host + ":" + std::to_string(port)}}}}};
    SendBody(c, 200, v.dump(), "application/json");
  }

  json DraGroupJson() const {
    json versions = json::array();
    for (const auto& v : scenario.dra_versions)
      versions.push_back({{"groupVersion", std::string(kDraGroup) + "/" + v}, {"version", v}});
    return {{"name", kDraGroup}, {"versions", versions}, {"preferredVersion", versions.at(0)}};
  }

  void SendApis(Ctx& c) {
    json groups = json::array();
    if (!scenario.dra_versions.empty()) groups.push_back(DraGroupJson());
    SendBody(c, 200,
             json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump(),
             "application/json");
  }

  void SendDraGroup(Ctx& c) {
    json g = DraGroupJson();
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    SendBody(c, 200, g.dump(), "application/json");
  }

  void SendResourceList(Ctx& c, const std::string& group_version, const std::string& group) {
    json resources = json::array();
    for (const auto& r : kResources) {
      if (std::string(r.group) != group) continue;
      json e = {{"name", r.name},
                {"singularName", r.singular},
                {"namespaced", r.namespaced},
                {"kind", r.kind},
                {"verbs", {"get", "list", "watch"}}};
      if (r.short_name[0]) e["shortNames"] = {r.short_name};
      resources.push_back(e);
      if (group.empty() && (std::string(r.name) == "pods" || std::string(r.name) == "services"))
        resources.push_back(
            {{"name", std::string(r.name) + "/proxy"},
             {"singularName", ""},
             {"namespaced", true},
             {"kind", std::string(r.name) == "pods" ? "PodProxyOptions" : "ServiceProxyOptions"},
             {"verbs", {"create", "delete", "get", "patch", "update"}}});
    }
    json list = {{"kind", "APIResourceList"},
                 {"apiVersion", "v1"},
                 {"groupVersion", group_version},
                 {"resources", resources}};
    SendBody(c, 200, list.dump(), "application/json");
  }

  // ---- Objects.

  struct Selectors {
    std::vector<SelectorTerm> labels, fields;
  };

  std::optional<Selectors> ParseSelectors(Ctx& c) {
    Selectors s;
    if (c.req.has_param("labelSelector")) {
      auto t = ParseSelector(c.req.get_param_value("labelSelector"), true);
      if (!t) {
        SendStatus(c, 400, "labelSelector: " + t.error().message);
        return std::nullopt;
      }
      s.labels = std::move(*t);
    }
    if (c.req.has_param("fieldSelector")) {
      auto t = ParseSelector(c.req.get_param_value("fieldSelector"), false);
      if (!t) {
        SendStatus(c, 400, "fieldSelector: " + t.error().message);
        return std::nullopt;
      }
      s.fields = std::move(*t);
    }
    return s;
  }

  bool EventVisible(const Event& e, const ResourceInfo* res, const std::string& ns,
                    const Selectors& sel) const {
    return e.res == res && (ns.empty() || e.ns == ns) &&
           Matches(*e.object.obj, sel.labels, sel.fields);
  }

  void SendList(Ctx& c, const Route& r) {
    auto sel = ParseSelectors(c);
    if (!sel) return;
    long long limit = 0;
    if (c.req.has_param("limit")) {
      auto l = ParseUint(c.req.get_param_value("limit"));
      if (!l) return SendStatus(c, 400, "limit must be a non-negative integer");
      limit = static_cast<long long>(*l);
    }
    std::string start_after;
    long long served = 0;  // items of this list returned by the earlier pages
    uint64_t list_rv = 0;
    std::string body;
    {
      std::lock_guard lk(mu);
      list_rv = rv;
      if (c.req.has_param("continue") && !c.req.get_param_value("continue").empty()) {
        // Opaque to clients: hex of {"rv","start","res","ns"}.
        auto decoded = HexDecode(c.req.get_param_value("continue"));
        json tok = decoded ? json::parse(*decoded, nullptr, false) : json();
        if (!tok.is_object() || !tok.contains("rv") || !tok.contains("start") ||
            tok.value("res", "") != r.res->name || tok.value("ns", "") != r.ns)
          return SendStatus(c, 400, "continue key is not valid: not a token from this list");
        list_rv = tok["rv"].get<uint64_t>();
        if (list_rv < compacted_rv)
          return SendStatus(
              c, 410,
              "The provided continue parameter is too old to display a consistent list result. "
              "You can start a new list without the continue parameter.");
        start_after = tok["start"];
        served = tok.value("served", 0LL);
      }
      const auto& coll = store[r.res->name];
      auto it = start_after.empty() ? coll.begin() : coll.upper_bound(start_after);
      const bool unfiltered = r.ns.empty() && sel->labels.empty() && sel->fields.empty();
      std::vector<const std::string*> page;  // the items' texts, joined once below
      size_t page_bytes = 0;
      std::string last_key;
      long long remaining = 0;
      for (; it != coll.end(); ++it) {
        if (!r.ns.empty() && !it->first.starts_with(r.ns + "/")) continue;
        if (!Matches(*it->second.obj, sel->labels, sel->fields)) continue;
        if (limit > 0 && static_cast<long long>(page.size()) == limit) {
          // The rest is only counted (remainingItemCount). Without filters the items served
          // before this page (carried in the token) say it without walking the rest, as the
          // apiserver's cache does; the walk made a 36-page LIST quadratic.
          if (unfiltered) {
            remaining = std::max<long long>(1, static_cast<long long>(coll.size()) - served -
                                                   static_cast<long long>(page.size()));
            break;
          }
          ++remaining;
          continue;
        }
        page.push_back(it->second.text.get());
        page_bytes += page.back()->size() + 1;
        last_key = it->first;
      }
      json meta = {{"resourceVersion", std::to_string(list_rv)}};
      if (remaining > 0) {
        json tok = {{"rv", list_rv},
                    {"start", last_key},
                    {"res", r.res->name},
                    {"ns", r.ns},
                    {"served", served + static_cast<long long>(page.size())}};
        meta["continue"] = HexEncode(tok.dump());
        if (sel->labels.empty() && sel->fields.empty()) meta["remainingItemCount"] = remaining;
      }
      std::string api_version = ApiVersionFor(*r.res, r.dra_version);
      const std::string head = "{\"kind\":" + json(std::string(r.res->kind) + "List").dump() +
                               ",\"apiVersion\":" + json(api_version).dump() +
                               ",\"metadata\":" + meta.dump() + ",\"items\":[";
      body.reserve(head.size() + page_bytes + 2);
      body += head;
      for (size_t i = 0; i < page.size(); ++i) {
        if (i > 0) body += ',';
        body += *page[i];
      }
      body += "]}";
    }
    SendBody(c, 200, std::move(body), "application/json");
  }

  void SendObject(Ctx& c, const Route& r) {
    std::optional<json> obj;
    {
      std::lock_guard lk(mu);
      obj = GetLocked(r.res->name, r.ns, r.name, r.dra_version);
    }
    if (!obj)
      return SendStatus(c, 404, std::string(r.res->name) + " \"" + r.name + "\" not found",
                        {{"name", r.name}, {"kind", r.res->name}});
    SendBody(c, 200, obj->dump(), "application/json");
  }

  // ---- Watch.

  struct WatchState {
    const ResourceInfo* res;
    std::string ns, api_version;
    Selectors sel;
    uint64_t last_rv = 0;
    bool bookmarks = false;
    Clock::time_point deadline, next_bookmark;
    std::string pending;  // initial events, written first
    long long truncate_at = -1;
    long long written = 0;
    int fd = -1;         // the connection, to notice a client that left
    uint64_t epoch = 0;  // watch_epoch when it started
  };

  std::string EventLine(const std::string& type, const std::string& text,
                        const WatchState& w) const {
    return "{\"type\":\"" + type +
           "\",\"object\":" + WithTypeMeta(text, w.api_version, w.res->kind) + "}\n";
  }

  void StartWatch(Ctx& c, const Route& r) {
    auto sel = ParseSelectors(c);
    if (!sel) return;
    auto w = std::make_shared<WatchState>();
    w->res = r.res;
    w->ns = r.ns;
    w->api_version = ApiVersionFor(*r.res, r.dra_version);
    w->sel = std::move(*sel);
    w->bookmarks = c.req.get_param_value("allowWatchBookmarks") == "true";
    auto timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(options.default_watch_timeout);
    if (c.req.has_param("timeoutSeconds")) {
      auto t = ParseUint(c.req.get_param_value("timeoutSeconds"));
      if (!t) return SendStatus(c, 400, "timeoutSeconds must be a non-negative integer");
      if (*t > 0) timeout = std::chrono::seconds(*t);  // 0 means the default, as in the apiserver
    }
    w->deadline = Clock::now() + timeout;
    w->next_bookmark = Clock::now() + options.bookmark_interval;
    {
      std::lock_guard lk(mu);
      w->epoch = watch_epoch;
    }
    if (c.fault) w->truncate_at = c.fault->truncate_at;
    if (c.req.ssl) w->fd = SSL_get_fd(c.req.ssl);
    std::string rv_param = c.req.get_param_value("resourceVersion");
    {
      std::lock_guard lk(mu);
      if (rv_param.empty() || rv_param == "0") {
        // Synthetic ADDED events for the current state, then changes.
        for (const auto& [key, s] : store[r.res->name]) {
          if (!r.ns.empty() && !key.starts_with(r.ns + "/")) continue;
          if (!Matches(*s.obj, w->sel.labels, w->sel.fields)) continue;
          w->pending += EventLine("ADDED", *s.text, *w);
        }
        w->last_rv = rv;
      } else {
        auto from = ParseUint(rv_param);
        if (!from)
          return SendStatus(c, 400, "resourceVersion \"" + rv_param + "\" is not a number");
        if (*from < compacted_rv) {
          c.res.status = 200;
          c.res.set_content(WatchError(410, "too old resource version: " + rv_param + " (" +
                                                std::to_string(compacted_rv + 1) + ")"),
                            "application/json");
          c.rec.detail = "watch ERROR 410";
          return;
        }
        w->last_rv = *from;
      }
      // Scripted events armed by this watch happen after its starting point, so it sees them.
      ArmWatchTriggered(r.res->name, ++watch_counts[r.res->name]);
    }
    c.res.status = 200;
    // ";stream=watch" as the apiserver's streaming serializer names it; it also keeps httplib from
    // gzip-buffering the stream.
    c.res.set_chunked_content_provider(
        "application/json;stream=watch",
        [this, w](size_t, httplib::DataSink& sink) { return WatchStep(*w, sink); });
  }

  bool WriteWatch(WatchState& w, httplib::DataSink& sink, const std::string& data) {
    if (data.empty()) return true;
    if (w.truncate_at >= 0 && w.written + static_cast<long long>(data.size()) > w.truncate_at) {
      size_t part = static_cast<size_t>(w.truncate_at - w.written);
      if (part) sink.write(data.data(), part);
      return false;  // abort mid-event
    }
    w.written += static_cast<long long>(data.size());
    return sink.write(data.data(), data.size());
  }

  // One step of a watch stream: waits for events (or a bookmark, the deadline, Stop) and writes
  // them.
  bool WatchStep(WatchState& w, httplib::DataSink& sink) {
    if (!w.pending.empty()) {
      std::string initial = std::move(w.pending);
      w.pending.clear();
      return WriteWatch(w, sink, initial);
    }
    // A client that left frees its thread within a poll interval, not at the watch's timeout.
    if (PeerClosed(w.fd)) return false;
    std::string out;
    bool end = false;
    {
      std::unique_lock lk(mu);
      auto wake = std::min(w.deadline, Clock::now() + std::chrono::milliseconds(250));
      if (w.bookmarks) wake = std::min(wake, w.next_bookmark);
      cv.wait_until(lk, wake, [&] {
        return stopping || (!history.empty() && history.back().rv > w.last_rv) ||
               w.last_rv < compacted_rv || w.epoch != watch_epoch;
      });
      if (w.last_rv < compacted_rv) {
        out = WatchError(410, "too old resource version: " + std::to_string(w.last_rv) + " (" +
                                  std::to_string(compacted_rv + 1) + ")");
        end = true;
      } else {
        auto it = std::upper_bound(history.begin(), history.end(), w.last_rv,
                                   [](uint64_t v, const Event& e) { return v < e.rv; });
        for (; it != history.end(); ++it)
          if (EventVisible(*it, w.res, w.ns, w.sel))
            out += EventLine(it->type, *it->object.text, w);
        w.last_rv = rv;
      }
      auto now = Clock::now();
      if (!end && w.bookmarks && now >= w.next_bookmark) {
        out += "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"" + std::string(w.res->kind) +
               "\",\"apiVersion\":\"" + w.api_version + "\",\"metadata\":{\"resourceVersion\":\"" +
               std::to_string(w.last_rv) + "\"}}}\n";
        w.next_bookmark = now + options.bookmark_interval;
      }
      if (stopping || now >= w.deadline || w.epoch != watch_epoch) end = true;
    }
    if (!WriteWatch(w, sink, out)) return false;
    if (end) sink.done();
    return true;
  }

  // ---- Proxies.

  // "name", "name:port" or "scheme:name:port".
  static void SplitProxyTarget(const std::string& target, std::string& name, std::string& port) {
    std::vector<std::string> parts;
    std::stringstream ss(target);
    std::string p;
    while (std::getline(ss, p, ':')) parts.push_back(p);
    if (parts.size() == 3) parts.erase(parts.begin());
    name = parts.empty() ? "" : parts[0];
    port = parts.size() > 1 ? parts[1] : "";
  }

  // The next body of an exporter's sequence (the last one repeats, or the sequence loops).
  std::string TakeBodyLocked(ExporterState& e) {
    std::string body = scenario.loop_body_sequences
                           ? e.bodies[e.served % e.bodies.size()]
                           : e.bodies[std::min(e.served, e.bodies.size() - 1)];
    ++e.served;
    return body;
  }

  void SendPodProxy(Ctx& c, const Route& r) {
    std::string name, port;
    SplitProxyTarget(r.name, name, port);
    if (options.proxy_latency.count() > 0) InterruptibleSleep(options.proxy_latency);
    std::string body;
    {
      std::lock_guard lk(mu);
      // The stored object itself (no copy): this path serves a thousand GETs per cycle.
      const json* pod = nullptr;
      if (auto coll = store.find("pods"); coll != store.end())
        if (auto it = coll->second.find(Key(r.ns, name)); it != coll->second.end())
          pod = it->second.obj.get();
      if (!pod)
        return SendStatus(c, 404, "pods \"" + name + "\" not found",
                          {{"name", name}, {"kind", "pods"}});
      if (port.empty()) port = "80";
      if (!ParseUint(port)) {  // a named container port
        std::string named = port;
        if (const auto spec = pod->find("spec"); spec != pod->end())
          for (const auto& ctr : spec->value("containers", json::array()))
            for (const auto& p : ctr.value("ports", json::array()))
              if (p.value("name", "") == named && p.contains("containerPort"))
                port = p["containerPort"].dump();
        if (port == named)
          return SendStatus(c, 503, "no port named \"" + named + "\" on pod " + r.ns + "/" + name);
      }
      auto it = exporters.find(ExporterKey(r.ns, name, port));
      if (it == exporters.end() || it->second.bodies.empty()) {
        std::string ip = FieldAt(*pod, "status.podIP")
                             ? (*pod)["status"]["podIP"].get<std::string>()
                             : "10.0.0.1";
        return SendStatus(c, 503,
                          "error trying to reach service: dial tcp " + ip + ":" + port +
                              ": connect: connection refused");
      }
      if (r.proxy_path != "/metrics") {
        c.res.status = 404;
        c.res.set_content("404 page not found\n", "text/plain; charset=utf-8");
        return;
      }
      body = TakeBodyLocked(it->second);
    }
    SendBody(c, 200, std::move(body), "text/plain; version=0.0.4; charset=utf-8");
  }

  void SendServiceProxy(Ctx& c, const Route& r) {
    std::string name, port;
    SplitProxyTarget(r.name, name, port);
    const std::vector<PromAnswer>* answers = nullptr;
    std::vector<PromAnswer> copy;
    {
      std::lock_guard lk(mu);
      auto svc = GetLocked("services", r.ns, name, "");
      if (!svc)
        return SendStatus(c, 404, "services \"" + name + "\" not found",
                          {{"name", name}, {"kind", "services"}});
      if (const auto* found = FindAnswersLocked(r.ns, name, port)) {
        copy = *found;
        answers = &copy;
      }
    }
    if (!answers)
      return SendStatus(c, 503,
                        "error trying to reach service: dial tcp 10.96.0.10:" + port +
                            ": connect: connection refused");
    std::optional<std::string> query;
    if (c.req.has_param("query")) query = c.req.get_param_value("query");
    PromReply reply = AnswerPromQuery(*answers, r.proxy_path, query);
    if (reply.status == 404) {
      c.res.status = 404;
      c.res.set_content(reply.body, "text/plain; charset=utf-8");
      return;
    }
    SendBody(c, reply.status, std::move(reply.body), "application/json");
  }

  // The answers of ns/service:port under any spelling of the port (number or name), as the
  // service proxy finds them; null when none.
  const std::vector<PromAnswer>* FindAnswersLocked(const std::string& ns, const std::string& name,
                                                   const std::string& port) {
    auto svc = GetLocked("services", ns, name, "");
    if (!svc) return nullptr;
    std::set<std::string> spellings = {port};
    for (const auto& p : (*svc)["spec"].value("ports", json::array())) {
      std::string num = p.contains("port") ? p["port"].dump() : "";
      std::string pname = p.value("name", "");
      if (port.empty() || port == num || port == pname) {
        spellings.insert(num);
        if (!pname.empty()) spellings.insert(pname);
      }
    }
    for (const auto& sp : spellings)
      if (auto it = prometheus.find(ExporterKey(ns, name, sp)); it != prometheus.end())
        return &it->second;
    return nullptr;
  }
};

// =============================================================================================

namespace {

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return x;
}

EVP_PKEY* ReadKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return k;
}

}  // namespace

FakeApiServer::FakeApiServer(Scenario scenario, FakeApiServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->scenario = std::move(scenario);
  impl_->options = std::move(options);
  impl_->pki = impl_->options.pki ? *impl_->options.pki : MakeTestPki();
  Impl& s = *impl_;
  for (const auto& obj : s.scenario.objects) {
    if (auto st = s.UpsertLocked(obj, false); !st)
      s.script_errors.push_back("scenario object: " + st.message());
  }
  s.compacted_rv = s.rv;  // the initial state has no history: older watches get 410
  for (const auto& [key, bodies] : s.scenario.exporter_bodies) s.exporters[key].bodies = bodies;
  s.prometheus = s.scenario.prometheus;
  for (const auto& f : s.scenario.faults) s.faults.push_back({f, 0});
  for (const auto& e : s.scenario.watch_script) s.script.push_back({e, false, false, {}});
}

FakeApiServer::~FakeApiServer() { Stop(); }

Status FakeApiServer::Start() {
  Impl& s = *impl_;
  if (s.started) return MakeError(ErrorCode::kInternal, "fake apiserver already started");
  std::signal(SIGPIPE, SIG_IGN);  // httplib writes to sockets the peer closed
  const TestPki pki = s.pki;
  s.server = std::make_unique<httplib::SSLServer>([pki](SSL_CTX& ctx) {
    X509* cert = ReadCert(pki.server.cert_pem);
    EVP_PKEY* key = ReadKey(pki.server.key_pem);
    X509* ca = ReadCert(pki.ca.cert_pem);
    bool ok = cert && key && ca && SSL_CTX_use_certificate(&ctx, cert) == 1 &&
              SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
              X509_STORE_add_cert(SSL_CTX_get_cert_store(&ctx), ca) == 1;
    if (ok) {
      STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
      sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca)));
      SSL_CTX_set_client_CA_list(&ctx, names);
      // Ask for a client certificate but let the handshake succeed without one (token users);
      // the handler accepts a certificate only when it verified against the CA.
      SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
      SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    X509_free(ca);
    return ok;
  });
  if (!s.server->is_valid())
    return MakeError(ErrorCode::kInternal, "fake apiserver: TLS setup failed");
  int threads = s.options.threads;
  s.server->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  s.server->set_keep_alive_max_count(100000);
  s.server->set_keep_alive_timeout(s.options.keep_alive_timeout_seconds);
  s.server->set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    s.Handle(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib listens with a backlog of 5 (compiled into Debian's libcpp-httplib): a client opening
  // a dozen connections at once (gpuattr's first cycle, scrape.concurrency 16) overflowed it, the
  // kernel dropped SYNs and their connects waited out TCP's 1 s retransmit. A real apiserver
  // listens with the system's maximum; so does the fake: listen() again on the bound socket.
  int listen_fd = -1;
  s.server->set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  if (s.options.port == 0) {
    s.port = s.server->bind_to_any_port(s.options.host);
  } else {
    s.port = s.server->bind_to_port(s.options.host, s.options.port) ? s.options.port : -1;
  }
  if (s.port <= 0)
    return MakeError(ErrorCode::kUnavailable, "fake apiserver: cannot listen on " + s.options.host +
                                                  ":" + std::to_string(s.options.port));
  s.server->set_socket_options(httplib::default_socket_options);  // the lambda's capture dies here
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  {
    std::lock_guard lk(s.mu);
    s.stopping = false;
    auto now = Clock::now();
    for (auto& e : s.script) {
      if (e.ev.after_watch == 0) {
        e.armed = true;
        e.due = now + e.ev.delay;
      }
    }
  }
  s.listen_thread = std::thread([&s] { s.server->listen_after_bind(); });
  // httplib's stop() does nothing until the accept loop runs; wait (bounded) so that a Stop()
  // right after Start() cannot leave the listen thread blocked in accept() forever.
  for (int i = 0; i < 500 && !s.server->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.script_thread = std::thread([&s] { s.RunScript(); });
  s.started = true;
  return Status::Ok();
}

void FakeApiServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  {
    std::lock_guard lk(s.mu);
    s.stopping = true;
  }
  s.cv.notify_all();
  s.server->stop();
  if (s.listen_thread.joinable()) s.listen_thread.join();
  if (s.script_thread.joinable()) s.script_thread.join();
  s.started = false;
}

int FakeApiServer::port() const { return impl_->port; }
std::string FakeApiServer::url() const {
  return "https://" + impl_->options.host + ":" + std::to_string(impl_->port);
}
const TestPki& FakeApiServer::pki() const { return impl_->pki; }
const Scenario& FakeApiServer::scenario() const { return impl_->scenario; }

Result<std::unique_ptr<kube::Transport>> FakeApiServer::MakeTransport() const {
  const fs::path kubeconfig =
      fs::temp_directory_path() / ("gpuattr-fake-" + std::to_string(impl_->port) + "-" +
                                   std::to_string(::getpid()) + ".kubeconfig");
  if (Status s = WriteKubeconfig(kubeconfig); !s.ok()) return s.error();
  kube::KubeconfigSource src;
  src.explicit_path = kubeconfig.string();
  auto conns = kube::LoadConnections(src, {});
  fs::remove(kubeconfig);
  if (!conns.ok()) return conns.error();
  return kube::MakeTransport(conns->front());
}

Status FakeApiServer::WriteKubeconfig(const fs::path& path, const KubeconfigOptions& opts) const {
  const Impl& s = *impl_;
  std::string token = opts.token;
  if (token.empty() && !s.options.tokens.empty()) token = s.options.tokens.begin()->first;
  auto q = [](const std::string& v) { return json(v).dump(); };  // JSON strings are YAML strings
  std::string ctx = opts.context;
  std::ostringstream y;
  y << "apiVersion: v1\nkind: Config\nclusters:\n- name: " << q(ctx)
    << "\n  cluster:\n    server: " << q(url())
    << "\n    certificate-authority-data: " << q(Base64(s.pki.ca.cert_pem)) << "\n";
  y << "users:\n- name: " << q(ctx + "-token") << "\n  user:\n    token: " << q(token) << "\n";
  if (opts.cert_user)
    y << "- name: " << q(ctx + "-cert")
      << "\n  user:\n    client-certificate-data: " << q(Base64(s.pki.client.cert_pem))
      << "\n    client-key-data: " << q(Base64(s.pki.client.key_pem)) << "\n";
  auto context = [&](const std::string& name, const std::string& user) {
    y << "- name: " << q(name) << "\n  context:\n    cluster: " << q(ctx)
      << "\n    user: " << q(user) << "\n";
    if (!opts.namespace_.empty()) y << "    namespace: " << q(opts.namespace_) << "\n";
  };
  y << "contexts:\n";
  context(ctx, ctx + "-token");
  if (opts.cert_user) context(ctx + "-cert", ctx + "-cert");
  y << "current-context: " << q(ctx) << "\n";
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
      return MakeError(ErrorCode::kInvalidArgument, "cannot write kubeconfig " + path.string());
    out << y.str();
    if (!out)
      return MakeError(ErrorCode::kInvalidArgument, "cannot write kubeconfig " + path.string());
  }
  ::chmod(path.c_str(), 0600);
  return Status::Ok();
}

std::vector<RequestRecord> FakeApiServer::Requests() const {
  std::lock_guard lk(impl_->log_mu);
  return impl_->log;
}

size_t FakeApiServer::CountRequests(const std::string& verb, const std::string& path_prefix,
                                    std::chrono::system_clock::time_point since) const {
  std::lock_guard lk(impl_->log_mu);
  return static_cast<size_t>(
      std::count_if(impl_->log.begin(), impl_->log.end(), [&](const RequestRecord& r) {
        return (verb.empty() || r.verb == verb) && r.path.starts_with(path_prefix) &&
               r.time >= since;
      }));
}

void FakeApiServer::ResetRequests() {
  std::lock_guard lk(impl_->log_mu);
  impl_->log.clear();
}

Status FakeApiServer::Upsert(json object) {
  std::lock_guard lk(impl_->mu);
  return impl_->UpsertLocked(std::move(object), true);
}

Status FakeApiServer::Patch(const std::string& resource, const std::string& ns,
                            const std::string& name, const json& merge_patch) {
  std::lock_guard lk(impl_->mu);
  auto cur = impl_->GetLocked(resource, ns, name, impl_->PreferredDraVersion());
  if (!cur)
    return MakeError(ErrorCode::kNotFound, resource + " \"" + ns + "/" + name + "\" not found");
  cur->merge_patch(merge_patch);
  return impl_->UpsertLocked(std::move(*cur), true);
}

Status FakeApiServer::Delete(const std::string& resource, const std::string& ns,
                             const std::string& name) {
  std::lock_guard lk(impl_->mu);
  return impl_->DeleteLocked(resource, ns, name);
}

std::optional<json> FakeApiServer::Get(const std::string& resource, const std::string& ns,
                                       const std::string& name) const {
  std::lock_guard lk(impl_->mu);
  return impl_->GetLocked(resource, ns, name, impl_->PreferredDraVersion());
}

uint64_t FakeApiServer::resource_version() const { return impl_->resource_version(); }

void FakeApiServer::Compact() {
  std::lock_guard lk(impl_->mu);
  impl_->compacted_rv = impl_->rv;
  impl_->history.clear();
  impl_->cv.notify_all();
}

void FakeApiServer::EndWatches() {
  std::lock_guard lk(impl_->mu);
  ++impl_->watch_epoch;
  impl_->cv.notify_all();
}

void FakeApiServer::SetExporterBodies(const std::string& ns, const std::string& pod, int port,
                                      std::vector<std::string> bodies) {
  std::lock_guard lk(impl_->mu);
  impl_->exporters[ExporterKey(ns, pod, std::to_string(port))] = {std::move(bodies), 0};
}

std::optional<std::pair<int, std::string>> FakeApiServer::AnswerQuery(
    const std::string& ns, const std::string& service, const std::string& port,
    const std::string& path, const std::optional<std::string>& query) {
  std::vector<PromAnswer> answers;
  {
    std::lock_guard lk(impl_->mu);
    const auto* found = impl_->FindAnswersLocked(ns, service, port);
    if (!found) return std::nullopt;
    answers = *found;
  }
  PromReply reply = AnswerPromQuery(answers, path, query);
  return std::pair(reply.status, std::move(reply.body));
}

std::optional<std::string> FakeApiServer::NextExporterBody(const std::string& ns,
                                                           const std::string& pod,
                                                           const std::string& port) {
  std::lock_guard lk(impl_->mu);
  auto it = impl_->exporters.find(ExporterKey(ns, pod, port));
  if (it == impl_->exporters.end() || it->second.bodies.empty()) return std::nullopt;
  return impl_->TakeBodyLocked(it->second);
}

void FakeApiServer::RemoveExporter(const std::string& ns, const std::string& pod, int port) {
  std::lock_guard lk(impl_->mu);
  impl_->exporters.erase(ExporterKey(ns, pod, std::to_string(port)));
}

void FakeApiServer::SetPromAnswers(const std::string& ns, const std::string& service,
                                   const std::string& port, std::vector<PromAnswer> answers) {
  std::lock_guard lk(impl_->mu);
  impl_->prometheus[ExporterKey(ns, service, port)] = std::move(answers);
}

void FakeApiServer::AddFault(FaultRule rule) {
  std::lock_guard lk(impl_->mu);
  if (rule.source.empty()) rule.source = "AddFault #" + std::to_string(impl_->faults.size() + 1);
  impl_->faults.push_back({std::move(rule), 0});
}

void FakeApiServer::SetTokens(std::map<std::string, std::string> tokens) {
  std::lock_guard tk(impl_->tokens_mu);
  impl_->options.tokens = std::move(tokens);
}

void FakeApiServer::ClearFaults() {
  std::lock_guard lk(impl_->mu);
  impl_->faults.clear();
}

std::vector<std::string> FakeApiServer::ScriptErrors() const {
  std::lock_guard lk(impl_->mu);
  return impl_->script_errors;
}

}  // namespace gpuattr::testing
