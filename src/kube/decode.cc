#include "gpuattr/kube/decode.h"

#include <cctype>
#include <ctime>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpuattr/kube/quantity.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::kube {
namespace {

using nlohmann::json;

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

[[noreturn]] void WrongType(const std::string& field, std::string_view expected, const json& got) {
  throw FieldError{field, "expected " + std::string(expected) + ", got " + got.type_name()};
}

// The member `key` of `obj`, or nullptr when missing or null.
const json* Member(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const json* Object(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Member(obj, key);
  if (v != nullptr && !v->is_object()) WrongType(Join(path, key), "an object", *v);
  return v;
}

const json* Array(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Member(obj, key);
  if (v != nullptr && !v->is_array()) WrongType(Join(path, key), "an array", *v);
  return v;
}

std::string String(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Member(obj, key);
  if (v == nullptr) return {};
  if (!v->is_string()) WrongType(Join(path, key), "a string", *v);
  return v->get<std::string>();
}

bool Bool(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Member(obj, key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) WrongType(Join(path, key), "a boolean", *v);
  return v->get<bool>();
}

int32_t Int32(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Member(obj, key);
  if (v == nullptr) return 0;
  if (!v->is_number_integer()) WrongType(Join(path, key), "an integer", *v);
  int64_t n = v->get<int64_t>();
  if (n < INT32_MIN || n > INT32_MAX) throw FieldError{Join(path, key), "out of range"};
  return static_cast<int32_t>(n);
}

// A map of strings; `keep` filters keys (nullptr keeps all).
std::map<std::string, std::string> StringMap(const json& obj, std::string_view key,
                                             const std::string& path,
                                             bool (*keep)(std::string_view) = nullptr) {
  std::map<std::string, std::string> out;
  const json* m = Object(obj, key, path);
  if (m == nullptr) return out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (keep != nullptr && !keep(it.key())) continue;
    if (!it->is_string()) WrongType(Join(path, key) + "[\"" + it.key() + "\"]", "a string", *it);
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

bool IsPrometheusAnnotation(std::string_view key) { return StartsWith(key, "prometheus.io/"); }

// A resource map (requests, limits, capacity, allocatable): extended resources only.
ResourceList Resources(const json& obj, std::string_view key, const std::string& path) {
  ResourceList out;
  const json* m = Object(obj, key, path);
  if (m == nullptr) return out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (!IsExtendedResource(it.key())) continue;
    std::string field = Join(path, key) + "[\"" + it.key() + "\"]";
    if (it->is_number_integer()) {
      out[it.key()] = it->get<int64_t>();
      continue;
    }
    if (!it->is_string()) WrongType(field, "a quantity string", *it);
    auto q = ParseQuantity(it->get_ref<const std::string&>());
    if (!q.ok()) throw FieldError{field, q.error().message};
    out[it.key()] = *q;
  }
  return out;
}

Container DecodeContainer(const json& c, const std::string& path) {
  if (!c.is_object()) WrongType(path, "an object", c);
  Container out;
  out.name = String(c, "name", path);
  out.image = String(c, "image", path);
  out.restart_policy = String(c, "restartPolicy", path);
  if (const json* ports = Array(c, "ports", path)) {
    for (size_t i = 0; i < ports->size(); ++i) {
      const json& p = (*ports)[i];
      std::string ppath = Index(Join(path, "ports"), i);
      if (!p.is_object()) WrongType(ppath, "an object", p);
      out.ports.push_back({String(p, "name", ppath), Int32(p, "containerPort", ppath)});
    }
  }
  if (const json* res = Object(c, "resources", path)) {
    std::string rpath = Join(path, "resources");
    out.requests = Resources(*res, "requests", rpath);
    out.limits = Resources(*res, "limits", rpath);
  }
  return out;
}

std::vector<Container> Containers(const json& spec, std::string_view key, const std::string& path) {
  std::vector<Container> out;
  if (const json* list = Array(spec, key, path)) {
    out.reserve(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      out.push_back(DecodeContainer((*list)[i], Index(Join(path, key), i)));
    }
  }
  return out;
}

// Fills name/namespace first so that later errors can name the object.
struct Meta {
  std::string ns, name, uid, resource_version;
};

Meta DecodeMeta(const json& j) {
  Meta m;
  if (const json* meta = Object(j, "metadata", "")) {
    m.ns = String(*meta, "namespace", "metadata");
    m.name = String(*meta, "name", "metadata");
    m.uid = String(*meta, "uid", "metadata");
    m.resource_version = String(*meta, "resourceVersion", "metadata");
  }
  return m;
}

// Best-effort "kind \"ns/name\"" for error messages, never throwing.
std::string Describe(std::string_view kind, const json& j, bool namespaced) {
  std::string who = std::string(kind);
  const json* meta = j.is_object() ? Member(j, "metadata") : nullptr;
  auto field = [&](std::string_view key) -> std::string {
    if (meta == nullptr || !meta->is_object()) return {};
    const json* v = Member(*meta, key);
    return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
  };
  std::string name = field("name");
  if (name.empty()) return who + " (unnamed)";
  std::string ns = namespaced ? field("namespace") : std::string();
  return who + " \"" + (ns.empty() ? name : ns + "/" + name) + "\"";
}

template <typename Fn>
auto Guard(std::string_view kind, const json& j, bool namespaced, Fn&& fn) -> decltype(fn()) {
  try {
    if (!j.is_object())
      throw FieldError{"(object)", std::string("expected an object, got ") + j.type_name()};
    return fn();
  } catch (const FieldError& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     Describe(kind, j, namespaced) + ": field " + e.field + ": " + e.what);
  } catch (const std::exception& e) {  // nlohmann errors we did not foresee
    return MakeError(ErrorCode::kInvalidArgument, Describe(kind, j, namespaced) + ": " + e.what());
  }
}

int64_t Timestamp(const json& obj, std::string_view key, const std::string& path) {
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

Result<Pod> DecodePod(const json& j) {
  return Guard("pod", j, true, [&]() -> Result<Pod> {
    Pod p;
    Meta m = DecodeMeta(j);
    p.namespace_ = std::move(m.ns);
    p.name = std::move(m.name);
    p.uid = std::move(m.uid);
    p.resource_version = std::move(m.resource_version);
    if (const json* meta = Object(j, "metadata", "")) {
      p.creation_unix = Timestamp(*meta, "creationTimestamp", "metadata");
      p.labels = StringMap(*meta, "labels", "metadata");
      p.annotations = StringMap(*meta, "annotations", "metadata", IsPrometheusAnnotation);
      if (const json* owners = Array(*meta, "ownerReferences", "metadata")) {
        for (size_t i = 0; i < owners->size(); ++i) {
          const json& o = (*owners)[i];
          std::string path = Index("metadata.ownerReferences", i);
          if (!o.is_object()) WrongType(path, "an object", o);
          p.owners.push_back(
              {String(o, "kind", path), String(o, "name", path), Bool(o, "controller", path)});
        }
      }
    }
    if (const json* spec = Object(j, "spec", "")) {
      p.node_name = String(*spec, "nodeName", "spec");
      p.containers = Containers(*spec, "containers", "spec");
      p.init_containers = Containers(*spec, "initContainers", "spec");
      if (const json* claims = Array(*spec, "resourceClaims", "spec")) {
        for (size_t i = 0; i < claims->size(); ++i) {
          const json& c = (*claims)[i];
          std::string path = Index("spec.resourceClaims", i);
          if (!c.is_object()) WrongType(path, "an object", c);
          // A direct reference names the claim; a template's claim name appears in the status.
          std::string claim = String(c, "resourceClaimName", path);
          // Kubernetes 1.26-1.27 nested the reference under `source`.
          if (const json* source = Object(c, "source", path); source != nullptr && claim.empty()) {
            claim = String(*source, "resourceClaimName", Join(path, "source"));
          }
          p.resource_claims.push_back({String(c, "name", path), std::move(claim)});
        }
      }
    }
    if (const json* status = Object(j, "status", "")) {
      p.phase = String(*status, "phase", "status");
      if (const json* conds = Array(*status, "conditions", "status")) {
        for (size_t i = 0; i < conds->size(); ++i) {
          const json& c = (*conds)[i];
          std::string path = Index("status.conditions", i);
          if (!c.is_object()) WrongType(path, "an object", c);
          if (String(c, "type", path) != "PodScheduled") continue;
          p.scheduled = {true, String(c, "status", path), String(c, "reason", path),
                         String(c, "message", path)};
        }
      }
      size_t ready = 0, statuses = 0;
      if (const json* cs = Array(*status, "containerStatuses", "status")) {
        for (size_t i = 0; i < cs->size(); ++i) {
          const json& c = (*cs)[i];
          std::string path = Index("status.containerStatuses", i);
          if (!c.is_object()) WrongType(path, "an object", c);
          ++statuses;
          if (Bool(c, "ready", path)) ++ready;
        }
      }
      p.all_containers_ready = statuses > 0 && ready == statuses && statuses >= p.containers.size();
      if (const json* rcs = Array(*status, "resourceClaimStatuses", "status")) {
        for (size_t i = 0; i < rcs->size(); ++i) {
          const json& c = (*rcs)[i];
          std::string path = Index("status.resourceClaimStatuses", i);
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

Result<Node> DecodeNode(const json& j) {
  return Guard("node", j, false, [&]() -> Result<Node> {
    Node n;
    Meta m = DecodeMeta(j);
    n.name = std::move(m.name);
    n.uid = std::move(m.uid);
    n.resource_version = std::move(m.resource_version);
    if (const json* meta = Object(j, "metadata", ""))
      n.labels = StringMap(*meta, "labels", "metadata");
    if (const json* spec = Object(j, "spec", ""))
      n.unschedulable = Bool(*spec, "unschedulable", "spec");
    if (const json* status = Object(j, "status", "")) {
      n.capacity = Resources(*status, "capacity", "status");
      n.allocatable = Resources(*status, "allocatable", "status");
    }
    return n;
  });
}

Result<Service> DecodeService(const json& j) {
  return Guard("service", j, true, [&]() -> Result<Service> {
    Service s;
    Meta m = DecodeMeta(j);
    s.namespace_ = std::move(m.ns);
    s.name = std::move(m.name);
    s.resource_version = std::move(m.resource_version);
    if (const json* meta = Object(j, "metadata", ""))
      s.labels = StringMap(*meta, "labels", "metadata");
    if (const json* spec = Object(j, "spec", "")) {
      if (const json* ports = Array(*spec, "ports", "spec")) {
        for (size_t i = 0; i < ports->size(); ++i) {
          const json& p = (*ports)[i];
          std::string path = Index("spec.ports", i);
          if (!p.is_object()) WrongType(path, "an object", p);
          s.ports.push_back({String(p, "name", path), Int32(p, "port", path)});
        }
      }
    }
    return s;
  });
}

// ---- resource.k8s.io (DRA) ----------------------------------------------------------------------

namespace {

// A device attribute's value: {string: ..}, {version: ..}, {int: ..} or {bool: ..}. Only the
// textual kinds are kept (the attributes gpuattr reads are strings); others read as empty.
std::string AttributeText(const json& value, const std::string& path) {
  if (!value.is_object()) WrongType(path, "an object", value);
  for (const char* kind : {"string", "version"})
    if (const json* v = Member(value, kind)) {
      if (!v->is_string()) WrongType(Join(path, kind), "a string", *v);
      return v->get<std::string>();
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
int64_t CapacityBytes(const json& value, const std::string& path) {
  const json* q = &value;
  std::string qpath = path;
  if (value.is_object()) {
    q = Member(value, "value");
    qpath = Join(path, "value");
    if (q == nullptr) throw FieldError{path, "missing value"};
  }
  if (q->is_number_integer()) return q->get<int64_t>();
  if (!q->is_string()) WrongType(qpath, "a quantity string", *q);
  auto r = ParseQuantity(q->get_ref<const std::string&>());
  if (!r.ok()) throw FieldError{qpath, r.error().message};
  return *r;
}

DraDevice DecodeDraDevice(const json& d, const std::string& path, std::string_view driver) {
  if (!d.is_object()) WrongType(path, "an object", d);
  DraDevice out;
  out.name = String(d, "name", path);
  // v1beta1: {name, basic: {attributes, capacity}}; v1beta2 and v1: {name, attributes, capacity}.
  const json* body = &d;
  std::string bpath = path;
  if (const json* basic = Object(d, "basic", path)) {
    body = basic;
    bpath = Join(path, "basic");
  }
  if (const json* attrs = Object(*body, "attributes", bpath)) {
    for (auto it = attrs->begin(); it != attrs->end(); ++it) {
      std::string_view name = AttributeName(it.key(), driver);
      std::string* field = name == "type"          ? &out.type
                           : name == "uuid"        ? &out.uuid
                           : name == "parentUUID"  ? &out.parent_uuid
                           : name == "productName" ? &out.product_name
                           : name == "profile"     ? &out.profile
                                                   : nullptr;
      if (field == nullptr) continue;
      *field = AttributeText(*it, Join(bpath, "attributes") + "[\"" + it.key() + "\"]");
    }
  }
  if (const json* cap = Object(*body, "capacity", bpath)) {
    for (auto it = cap->begin(); it != cap->end(); ++it) {
      if (AttributeName(it.key(), driver) != "memory") continue;
      out.memory_bytes = CapacityBytes(*it, Join(bpath, "capacity") + "[\"" + it.key() + "\"]");
    }
  }
  return out;
}

// deviceClassName, allocationMode and count of one request body (v1beta1's request itself,
// v1beta2/v1's `exactly` or a firstAvailable entry).
void DecodeRequestBody(const json& body, const std::string& path, DraRequest& out) {
  out.device_class_name = String(body, "deviceClassName", path);
  out.allocation_mode = String(body, "allocationMode", path);
  if (out.allocation_mode.empty()) out.allocation_mode = "ExactCount";
  if (const json* count = Member(body, "count")) {
    if (!count->is_number_integer()) WrongType(Join(path, "count"), "an integer", *count);
    out.count = count->get<int64_t>();
  }
}

DraRequest DecodeDraRequest(const json& r, const std::string& path) {
  if (!r.is_object()) WrongType(path, "an object", r);
  DraRequest out;
  out.name = String(r, "name", path);
  if (const json* exactly = Object(r, "exactly", path)) {
    DecodeRequestBody(*exactly, Join(path, "exactly"), out);
  } else if (const json* first = Array(r, "firstAvailable", path); first && !first->empty()) {
    // Alternatives in order of preference: the first one stands for the request.
    const json& sub = first->front();
    std::string spath = Index(Join(path, "firstAvailable"), 0);
    if (!sub.is_object()) WrongType(spath, "an object", sub);
    DecodeRequestBody(sub, spath, out);
  } else {
    DecodeRequestBody(r, path, out);  // v1beta1: inline
  }
  return out;
}

}  // namespace

Result<ResourceSlice> DecodeResourceSlice(const json& j) {
  return Guard("resourceslice", j, false, [&]() -> Result<ResourceSlice> {
    ResourceSlice s;
    Meta m = DecodeMeta(j);
    s.name = std::move(m.name);
    s.resource_version = std::move(m.resource_version);
    const json* spec = Object(j, "spec", "");
    if (spec == nullptr) return s;
    s.driver = String(*spec, "driver", "spec");
    s.node_name = String(*spec, "nodeName", "spec");
    if (const json* pool = Object(*spec, "pool", "spec"))
      s.pool = String(*pool, "name", "spec.pool");
    if (const json* devices = Array(*spec, "devices", "spec")) {
      s.devices.reserve(devices->size());
      for (size_t i = 0; i < devices->size(); ++i)
        s.devices.push_back(DecodeDraDevice((*devices)[i], Index("spec.devices", i), s.driver));
    }
    return s;
  });
}

Result<ResourceClaim> DecodeResourceClaim(const json& j) {
  return Guard("resourceclaim", j, true, [&]() -> Result<ResourceClaim> {
    ResourceClaim c;
    Meta m = DecodeMeta(j);
    c.namespace_ = std::move(m.ns);
    c.name = std::move(m.name);
    c.resource_version = std::move(m.resource_version);
    if (const json* spec = Object(j, "spec", "")) {
      if (const json* devices = Object(*spec, "devices", "spec")) {
        if (const json* reqs = Array(*devices, "requests", "spec.devices")) {
          for (size_t i = 0; i < reqs->size(); ++i)
            c.requests.push_back(DecodeDraRequest((*reqs)[i], Index("spec.devices.requests", i)));
        }
      }
    }
    const json* status = Object(j, "status", "");
    if (status == nullptr) return c;
    if (const json* alloc = Object(*status, "allocation", "status")) {
      c.allocated = true;
      if (const json* devices = Object(*alloc, "devices", "status.allocation")) {
        if (const json* results = Array(*devices, "results", "status.allocation.devices")) {
          for (size_t i = 0; i < results->size(); ++i) {
            const json& r = (*results)[i];
            std::string path = Index("status.allocation.devices.results", i);
            if (!r.is_object()) WrongType(path, "an object", r);
            c.results.push_back({String(r, "request", path), String(r, "driver", path),
                                 String(r, "pool", path), String(r, "device", path)});
          }
        }
      }
    }
    if (const json* reserved = Array(*status, "reservedFor", "status")) {
      for (size_t i = 0; i < reserved->size(); ++i) {
        const json& r = (*reserved)[i];
        std::string path = Index("status.reservedFor", i);
        if (!r.is_object()) WrongType(path, "an object", r);
        c.reserved_for.push_back(
            {String(r, "resource", path), String(r, "name", path), String(r, "uid", path)});
      }
    }
    return c;
  });
}

}  // namespace gpuattr::kube
