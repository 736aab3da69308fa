#include "gpuattr/kube/decode.h"

#include <cctype>
#include <ctime>
#include <optional>
#include <string>
#include <utility>

#include "gpuattr/kube/quantity.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::kube {
namespace {

// Thrown inside this file only, caught by the Decode* entry points and turned into an Error.
struct FieldError {
  std::string field;
  std::string what;
};

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

[[noreturn]] void WrongType(const std::string& field, std::string_view expected, JsonValue got) {
  throw FieldError{field, "expected " + std::string(expected) + ", got " + got.type_name()};
}

// The member `key` of `obj`, or nothing when missing or null.
std::optional<JsonValue> Member(JsonValue obj, std::string_view key) {
  JsonValue v = obj.Find(key);
  if (v.is_null()) return std::nullopt;
  return v;
}

std::optional<JsonValue> Object(JsonValue obj, std::string_view key, const std::string& path) {
  auto v = Member(obj, key);
  if (v && !v->is_object()) WrongType(Join(path, key), "an object", *v);
  return v;
}

std::optional<JsonValue> Array(JsonValue obj, std::string_view key, const std::string& path) {
  auto v = Member(obj, key);
  if (v && !v->is_array()) WrongType(Join(path, key), "an array", *v);
  return v;
}

std::string String(JsonValue obj, std::string_view key, const std::string& path) {
  auto v = Member(obj, key);
  if (!v) return {};
  if (!v->is_string()) WrongType(Join(path, key), "a string", *v);
  return std::string(v->str());
}

bool Bool(JsonValue obj, std::string_view key, const std::string& path) {
  auto v = Member(obj, key);
  if (!v) return false;
  if (!v->is_boolean()) WrongType(Join(path, key), "a boolean", *v);
  return v->boolean();
}

int32_t Int32(JsonValue obj, std::string_view key, const std::string& path) {
  auto v = Member(obj, key);
  if (!v) return 0;
  if (!v->is_integer()) WrongType(Join(path, key), "an integer", *v);
  int64_t n = v->integer();
  if (n < INT32_MIN || n > INT32_MAX) throw FieldError{Join(path, key), "out of range"};
  return static_cast<int32_t>(n);
}

// A map of strings; `keep` filters keys (nullptr keeps all). The last of duplicate keys wins.
std::map<std::string, std::string> StringMap(JsonValue obj, std::string_view key,
                                             const std::string& path,
                                             bool (*keep)(std::string_view) = nullptr) {
  std::map<std::string, std::string> out;
  auto m = Object(obj, key, path);
  if (!m) return out;
  for (auto [k, v] : m->Members()) {
    if (keep != nullptr && !keep(k)) continue;
    if (!v.is_string()) WrongType(Join(path, key) + "[\"" + std::string(k) + "\"]", "a string", v);
    out.insert_or_assign(std::string(k), std::string(v.str()));
  }
  return out;
}

// Pods: prometheus.io/* (discovery) and HAMi's device assignment (docs/design.md#node-shapes).
bool IsKeptPodAnnotation(std::string_view key) {
  return StartsWith(key, "prometheus.io/") || key == "hami.io/vgpu-devices-allocated";
}
// Nodes: HAMi's registration of the node's cards (docs/design.md#node-shapes).
bool IsKeptNodeAnnotation(std::string_view key) { return key == kHamiRegisterAnnotation; }

// A resource map (requests, limits, capacity, allocatable): extended resources only.
ResourceList Resources(JsonValue obj, std::string_view key, const std::string& path) {
  ResourceList out;
  auto m = Object(obj, key, path);
  if (!m) return out;
  for (auto [name, value] : m->Members()) {
    if (!IsExtendedResource(name)) continue;
    if (value.is_integer()) {
      out[std::string(name)] = value.integer();
      continue;
    }
    std::string field = Join(path, key) + "[\"" + std::string(name) + "\"]";
    if (!value.is_string()) WrongType(field, "a quantity string", value);
    auto q = ParseQuantity(value.str());
    if (!q.ok()) throw FieldError{field, q.error().message};
    out[std::string(name)] = *q;
  }
  return out;
}

Container DecodeContainer(JsonValue c, const std::string& path) {
  if (!c.is_object()) WrongType(path, "an object", c);
  Container out;
  out.name = String(c, "name", path);
  out.image = String(c, "image", path);
  out.restart_policy = String(c, "restartPolicy", path);
  if (auto ports = Array(c, "ports", path)) {
    for (size_t i = 0; JsonValue p : ports->Elements()) {
      std::string ppath = Index(Join(path, "ports"), i++);
      if (!p.is_object()) WrongType(ppath, "an object", p);
      out.ports.push_back({String(p, "name", ppath), Int32(p, "containerPort", ppath)});
    }
  }
  if (auto res = Object(c, "resources", path)) {
    std::string rpath = Join(path, "resources");
    out.requests = Resources(*res, "requests", rpath);
    out.limits = Resources(*res, "limits", rpath);
  }
  return out;
}

std::vector<Container> Containers(JsonValue spec, std::string_view key, const std::string& path) {
  std::vector<Container> out;
  if (auto list = Array(spec, key, path)) {
    out.reserve(list->size());
    for (size_t i = 0; JsonValue c : list->Elements())
      out.push_back(DecodeContainer(c, Index(Join(path, key), i++)));
  }
  return out;
}

// Fills name/namespace first so that later errors can name the object.
struct Meta {
  std::string ns, name, uid, resource_version;
};

Meta DecodeMeta(JsonValue j) {
  Meta m;
  if (auto meta = Object(j, "metadata", "")) {
    m.ns = String(*meta, "namespace", "metadata");
    m.name = String(*meta, "name", "metadata");
    m.uid = String(*meta, "uid", "metadata");
    m.resource_version = String(*meta, "resourceVersion", "metadata");
  }
  return m;
}

// Best-effort "kind \"ns/name\"" for error messages, never throwing.
std::string Describe(std::string_view kind, JsonValue j, bool namespaced) {
  std::string who = std::string(kind);
  JsonValue meta = j.Find("metadata");
  auto field = [&](std::string_view key) { return std::string(meta.Find(key).str()); };
  std::string name = field("name");
  if (name.empty()) return who + " (unnamed)";
  std::string ns = namespaced ? field("namespace") : std::string();
  return who + " \"" + (ns.empty() ? name : ns + "/" + name) + "\"";
}

template <typename Fn>
auto Guard(std::string_view kind, JsonValue j, bool namespaced, Fn&& fn) -> decltype(fn()) {
  try {
    if (!j.is_object())
      throw FieldError{"(object)", std::string("expected an object, got ") + j.type_name()};
    return fn();
  } catch (const FieldError& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     Describe(kind, j, namespaced) + ": field " + e.field + ": " + e.what);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kResourceExhausted,
                     Describe(kind, j, namespaced) + ": out of memory");
  }
}

int64_t Timestamp(JsonValue obj, std::string_view key, const std::string& path) {
  std::string text = String(obj, key, path);
  if (text.empty()) return 0;
  auto t = ParseTimestamp(text);
  if (!t.ok()) throw FieldError{Join(path, key), t.error().message};
  return *t;
}

}  // namespace

Result<int64_t> ParseTimestamp(std::string_view text) {
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid timestamp \"" + std::string(text) + "\" (want RFC 3339)");
  };
  // YYYY-MM-DDTHH:MM:SS
  if (text.size() < 19) return bad();
  auto num = [&](size_t pos, size_t len, int& out) {
    out = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year, mon, day, hour, min, sec;
  if (!num(0, 4, year) || text[4] != '-' || !num(5, 2, mon) || text[7] != '-' || !num(8, 2, day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !num(11, 2, hour) ||
      text[13] != ':' || !num(14, 2, min) || text[16] != ':' || !num(17, 2, sec)) {
    return bad();
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) return bad();
  size_t i = 19;
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) return bad();
  }
  int64_t offset = 0;
  if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
    ++i;
  } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int oh, om;
    if (text.size() != i + 6 || !num(i + 1, 2, oh) || text[i + 3] != ':' || !num(i + 4, 2, om)) {
      return bad();
    }
    offset = (text[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return bad();
  }
  if (i != text.size()) return bad();
  // Days from civil (Howard Hinnant's algorithm): no timegm, no locale, no TZ.
  int y = year - (mon <= 2 ? 1 : 0);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + hour * 3600 + min * 60 + sec - offset;
}

Result<Pod> DecodePod(JsonValue j) {
  return Guard("pod", j, true, [&]() -> Result<Pod> {
    Pod p;
    Meta m = DecodeMeta(j);
    p.namespace_ = std::move(m.ns);
    p.name = std::move(m.name);
    p.uid = std::move(m.uid);
    p.resource_version = std::move(m.resource_version);
    if (auto meta = Object(j, "metadata", "")) {
      p.creation_unix = Timestamp(*meta, "creationTimestamp", "metadata");
      p.labels = StringMap(*meta, "labels", "metadata");
      p.annotations = StringMap(*meta, "annotations", "metadata", IsKeptPodAnnotation);
      if (auto owners = Array(*meta, "ownerReferences", "metadata")) {
        for (size_t i = 0; JsonValue o : owners->Elements()) {
          std::string path = Index("metadata.ownerReferences", i++);
          if (!o.is_object()) WrongType(path, "an object", o);
          p.owners.push_back({String(o, "kind", path), String(o, "name", path),
                              Bool(o, "controller", path), String(o, "apiVersion", path)});
        }
      }
    }
    if (auto spec = Object(j, "spec", "")) {
      p.node_name = String(*spec, "nodeName", "spec");
      p.containers = Containers(*spec, "containers", "spec");
      p.init_containers = Containers(*spec, "initContainers", "spec");
      if (auto claims = Array(*spec, "resourceClaims", "spec")) {
        for (size_t i = 0; JsonValue c : claims->Elements()) {
          std::string path = Index("spec.resourceClaims", i++);
          if (!c.is_object()) WrongType(path, "an object", c);
          // A direct reference names the claim; a template's claim name appears in the status.
          std::string claim = String(c, "resourceClaimName", path);
          // Kubernetes 1.26-1.27 nested the reference under `source`.
          if (auto source = Object(c, "source", path); source && claim.empty()) {
            claim = String(*source, "resourceClaimName", Join(path, "source"));
          }
          p.resource_claims.push_back({String(c, "name", path), std::move(claim)});
        }
      }
    }
    if (auto status = Object(j, "status", "")) {
      p.phase = String(*status, "phase", "status");
      p.ip = String(*status, "podIP", "status");
      if (auto conds = Array(*status, "conditions", "status")) {
        for (size_t i = 0; JsonValue c : conds->Elements()) {
          std::string path = Index("status.conditions", i++);
          if (!c.is_object()) WrongType(path, "an object", c);
          if (String(c, "type", path) != "PodScheduled") continue;
          p.scheduled = {true, String(c, "status", path), String(c, "reason", path),
                         String(c, "message", path)};
        }
      }
      size_t ready = 0, statuses = 0;
      if (auto cs = Array(*status, "containerStatuses", "status")) {
        for (size_t i = 0; JsonValue c : cs->Elements()) {
          std::string path = Index("status.containerStatuses", i++);
          if (!c.is_object()) WrongType(path, "an object", c);
          ++statuses;
          if (Bool(c, "ready", path)) ++ready;
        }
      }
      p.all_containers_ready = statuses > 0 && ready == statuses && statuses >= p.containers.size();
      if (auto rcs = Array(*status, "resourceClaimStatuses", "status")) {
        for (size_t i = 0; JsonValue c : rcs->Elements()) {
          std::string path = Index("status.resourceClaimStatuses", i++);
          if (!c.is_object()) WrongType(path, "an object", c);
          std::string name = String(c, "name", path);
          std::string claim = String(c, "resourceClaimName", path);
          bool found = false;
          for (auto& rc : p.resource_claims) {
            if (rc.name != name) continue;
            found = true;
            if (rc.claim_name.empty()) rc.claim_name = claim;
          }
          if (!found) p.resource_claims.push_back({name, claim});
        }
      }
    }
    return p;
  });
}

Result<Node> DecodeNode(JsonValue j) {
  return Guard("node", j, false, [&]() -> Result<Node> {
    Node n;
    Meta m = DecodeMeta(j);
    n.name = std::move(m.name);
    n.uid = std::move(m.uid);
    n.resource_version = std::move(m.resource_version);
    if (auto meta = Object(j, "metadata", "")) {
      n.labels = StringMap(*meta, "labels", "metadata");
      const auto kept = StringMap(*meta, "annotations", "metadata", IsKeptNodeAnnotation);
      if (auto it = kept.find(std::string(kHamiRegisterAnnotation)); it != kept.end())
        n.hami_registration = ReadHamiRegistration(it->second);
    }
    if (auto spec = Object(j, "spec", "")) n.unschedulable = Bool(*spec, "unschedulable", "spec");
    if (auto status = Object(j, "status", "")) {
      n.capacity = Resources(*status, "capacity", "status");
      n.allocatable = Resources(*status, "allocatable", "status");
    }
    return n;
  });
}

Result<Service> DecodeService(JsonValue j) {
  return Guard("service", j, true, [&]() -> Result<Service> {
    Service s;
    Meta m = DecodeMeta(j);
    s.namespace_ = std::move(m.ns);
    s.name = std::move(m.name);
    s.resource_version = std::move(m.resource_version);
    if (auto meta = Object(j, "metadata", "")) s.labels = StringMap(*meta, "labels", "metadata");
    if (auto spec = Object(j, "spec", "")) {
      s.cluster_ip = String(*spec, "clusterIP", "spec");
      if (auto ports = Array(*spec, "ports", "spec")) {
        for (size_t i = 0; JsonValue p : ports->Elements()) {
          std::string path = Index("spec.ports", i++);
          if (!p.is_object()) WrongType(path, "an object", p);
          s.ports.push_back({String(p, "name", path), Int32(p, "port", path)});
        }
      }
    }
    return s;
  });
}

Result<Namespace> DecodeNamespace(JsonValue j) {
  return Guard("namespace", j, false, [&]() -> Result<Namespace> {
    Namespace n;
    Meta m = DecodeMeta(j);
    n.name = std::move(m.name);
    n.resource_version = std::move(m.resource_version);
    if (auto meta = Object(j, "metadata", "")) n.labels = StringMap(*meta, "labels", "metadata");
    return n;
  });
}

// ---- resource.k8s.io (DRA) ----------------------------------------------------------------------

namespace {

// A device attribute's value: {string: ..}, {version: ..}, {int: ..} or {bool: ..}. Only the
// textual kinds are kept (the attributes gpuattr reads are strings); others read as empty.
std::string AttributeText(JsonValue value, const std::string& path) {
  if (!value.is_object()) WrongType(path, "an object", value);
  for (const char* kind : {"string", "version"})
    if (auto v = Member(value, kind)) {
      if (!v->is_string()) WrongType(Join(path, kind), "a string", *v);
      return std::string(v->str());
    }
  return {};
}

// The attribute name without the driver's own domain: "gpu.nvidia.com/uuid" → "uuid" (names
// without a domain are already in the driver's).
std::string_view AttributeName(std::string_view key, std::string_view driver) {
  size_t slash = key.rfind('/');
  if (slash == std::string_view::npos) return key;
  return key.substr(0, slash) == driver ? key.substr(slash + 1) : std::string_view();
}

// A capacity value: {value: "80Gi"} (v1beta1 and later) or a bare quantity (v1alpha3).
int64_t CapacityBytes(JsonValue value, const std::string& path) {
  std::optional<JsonValue> q = value;
  std::string qpath = path;
  if (value.is_object()) {
    q = Member(value, "value");
    qpath = Join(path, "value");
    if (!q) throw FieldError{path, "missing value"};
  }
  if (q->is_integer()) return q->integer();
  if (!q->is_string()) WrongType(qpath, "a quantity string", *q);
  auto r = ParseQuantity(q->str());
  if (!r.ok()) throw FieldError{qpath, r.error().message};
  return *r;
}

DraDevice DecodeDraDevice(JsonValue d, const std::string& path, std::string_view driver) {
  if (!d.is_object()) WrongType(path, "an object", d);
  DraDevice out;
  out.name = String(d, "name", path);
  // v1beta1: {name, basic: {attributes, capacity}}; v1beta2 and v1: {name, attributes, capacity}.
  JsonValue body = d;
  std::string bpath = path;
  if (auto basic = Object(d, "basic", path)) {
    body = *basic;
    bpath = Join(path, "basic");
  }
  // Members in document order: of two spellings of one attribute ("uuid" and
  // "gpu.nvidia.com/uuid"), the later one is kept.
  if (auto attrs = Object(body, "attributes", bpath)) {
    for (auto [key, value] : attrs->Members()) {
      std::string_view name = AttributeName(key, driver);
      std::string* field = name == "type"          ? &out.type
                           : name == "uuid"        ? &out.uuid
                           : name == "parentUUID"  ? &out.parent_uuid
                           : name == "productName" ? &out.product_name
                           : name == "profile"     ? &out.profile
                                                   : nullptr;
      if (field == nullptr) continue;
      *field = AttributeText(value, Join(bpath, "attributes") + "[\"" + std::string(key) + "\"]");
    }
  }
  if (auto cap = Object(body, "capacity", bpath)) {
    for (auto [key, value] : cap->Members()) {
      if (AttributeName(key, driver) != "memory") continue;
      out.memory_bytes =
          CapacityBytes(value, Join(bpath, "capacity") + "[\"" + std::string(key) + "\"]");
    }
  }
  return out;
}

// deviceClassName, allocationMode and count of one request body (v1beta1's request itself,
// v1beta2/v1's `exactly` or a firstAvailable entry).
void DecodeRequestBody(JsonValue body, const std::string& path, DraRequest& out) {
  out.device_class_name = String(body, "deviceClassName", path);
  out.allocation_mode = String(body, "allocationMode", path);
  if (out.allocation_mode.empty()) out.allocation_mode = "ExactCount";
  if (auto count = Member(body, "count")) {
    if (!count->is_integer()) WrongType(Join(path, "count"), "an integer", *count);
    out.count = count->integer();
  }
}

DraRequest DecodeDraRequest(JsonValue r, const std::string& path) {
  if (!r.is_object()) WrongType(path, "an object", r);
  DraRequest out;
  out.name = String(r, "name", path);
  if (auto exactly = Object(r, "exactly", path)) {
    DecodeRequestBody(*exactly, Join(path, "exactly"), out);
  } else if (auto first = Array(r, "firstAvailable", path); first && first->size() > 0) {
    // Alternatives in order of preference: the first one stands for the request.
    JsonValue sub = *first->Elements().begin();
    std::string spath = Index(Join(path, "firstAvailable"), 0);
    if (!sub.is_object()) WrongType(spath, "an object", sub);
    DecodeRequestBody(sub, spath, out);
  } else {
    DecodeRequestBody(r, path, out);  // v1beta1: inline
  }
  return out;
}

}  // namespace

Result<ResourceSlice> DecodeResourceSlice(JsonValue j) {
  return Guard("resourceslice", j, false, [&]() -> Result<ResourceSlice> {
    ResourceSlice s;
    Meta m = DecodeMeta(j);
    s.name = std::move(m.name);
    s.resource_version = std::move(m.resource_version);
    auto spec = Object(j, "spec", "");
    if (!spec) return s;
    s.driver = String(*spec, "driver", "spec");
    s.node_name = String(*spec, "nodeName", "spec");
    if (auto pool = Object(*spec, "pool", "spec")) s.pool = String(*pool, "name", "spec.pool");
    if (auto devices = Array(*spec, "devices", "spec")) {
      s.devices.reserve(devices->size());
      for (size_t i = 0; JsonValue d : devices->Elements())
        s.devices.push_back(DecodeDraDevice(d, Index("spec.devices", i++), s.driver));
    }
    return s;
  });
}

Result<ResourceClaim> DecodeResourceClaim(JsonValue j) {
  return Guard("resourceclaim", j, true, [&]() -> Result<ResourceClaim> {
    ResourceClaim c;
    Meta m = DecodeMeta(j);
    c.namespace_ = std::move(m.ns);
    c.name = std::move(m.name);
    c.resource_version = std::move(m.resource_version);
    if (auto spec = Object(j, "spec", "")) {
      if (auto devices = Object(*spec, "devices", "spec")) {
        if (auto reqs = Array(*devices, "requests", "spec.devices")) {
          for (size_t i = 0; JsonValue r : reqs->Elements())
            c.requests.push_back(DecodeDraRequest(r, Index("spec.devices.requests", i++)));
        }
      }
    }
    auto status = Object(j, "status", "");
    if (!status) return c;
    if (auto alloc = Object(*status, "allocation", "status")) {
      c.allocated = true;
      if (auto devices = Object(*alloc, "devices", "status.allocation")) {
        if (auto results = Array(*devices, "results", "status.allocation.devices")) {
          for (size_t i = 0; JsonValue r : results->Elements()) {
            std::string path = Index("status.allocation.devices.results", i++);
            if (!r.is_object()) WrongType(path, "an object", r);
            c.results.push_back({String(r, "request", path), String(r, "driver", path),
                                 String(r, "pool", path), String(r, "device", path)});
          }
        }
      }
    }
    if (auto reserved = Array(*status, "reservedFor", "status")) {
      for (size_t i = 0; JsonValue r : reserved->Elements()) {
        std::string path = Index("status.reservedFor", i++);
        if (!r.is_object()) WrongType(path, "an object", r);
        c.reserved_for.push_back(
            {String(r, "resource", path), String(r, "name", path), String(r, "uid", path)});
      }
    }
    return c;
  });
}

}  // namespace gpuattr::kube
