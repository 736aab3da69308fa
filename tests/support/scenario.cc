#include "support/scenario.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "gpuattr/util/strings.h"

namespace gpuattr::testing {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::string At(const std::string& source, const YAML::Mark& mark) {
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1);
}

bool IsPlainNull(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// YAML 1.2 core schema resolution of a plain (unquoted) scalar.
json ResolvePlainScalar(const std::string& s) {
  if (IsPlainNull(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, kInt)) {
    long long v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    return std::stod(s);  // too large for int64: a float, as YAML parsers do
  }
  if (std::regex_match(s, kFloat)) return std::stod(s);
  return s;
}

json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string& text = node.Scalar();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;  // quoted or !!str
      return ResolvePlainScalar(text);
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
  }
  return nullptr;
}

Result<std::vector<YAML::Node>> LoadDocuments(const std::string& text, const std::string& source) {
  try {
    return YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return Invalid(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                   std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
}

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, "cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads a duration scalar ("2s", "500ms").
Result<std::chrono::milliseconds> DurationAt(const YAML::Node& n, const std::string& where,
                                             const std::string& key) {
  if (!n.IsScalar())
    return Invalid(where + ": `" + key + "` must be a duration such as 500ms or 2s");
  auto d = ParseDuration(n.Scalar());
  if (!d) return Invalid(where + ": `" + key + "`: " + d.error().message);
  return *d;
}

template <typename T>
Result<T> NumberAt(const YAML::Node& n, const std::string& where, const std::string& key) {
  try {
    if (!n.IsScalar()) throw YAML::Exception(n.Mark(), "not a scalar");
    return n.as<T>();
  } catch (const YAML::Exception&) {
    return Invalid(where + ": `" + key + "` must be a number");
  }
}

Result<std::string> StringAt(const YAML::Node& n, const std::string& where,
                             const std::string& key) {
  if (!n.IsScalar()) return Invalid(where + ": `" + key + "` must be a string");
  return n.Scalar();
}

Status CheckKeys(const YAML::Node& map, const std::set<std::string>& allowed,
                 const std::string& source) {
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Invalid(At(source, kv.first.Mark()) + ": unknown key `" + key + "` (known: " + list +
                     ")");
    }
  }
  return Status::Ok();
}

Status ValidateObject(const json& obj, const std::string& where) {
  if (!obj.is_object()) return Invalid(where + ": an object must be a mapping");
  if (!obj.contains("kind") || !obj["kind"].is_string())
    return Invalid(where + ": object has no `kind`");
  std::string kind = obj["kind"];
  if (ResourceForKind(kind).empty())
    return Invalid(where + ": kind `" + kind +
                   "` is not served by the fake (Pod, Node, Service, Namespace, ResourceSlice, "
                   "ResourceClaim)");
  const json* meta = obj.contains("metadata") ? &obj["metadata"] : nullptr;
  if (!meta || !meta->is_object() || !meta->contains("name") || !(*meta)["name"].is_string() ||
      (*meta)["name"].get<std::string>().empty())
    return Invalid(where + ": " + kind + " has no metadata.name");
  return Status::Ok();
}

std::string FileName(const std::string& source) { return fs::path(source).filename().string(); }

}  // namespace

std::string ResourceForKind(const std::string& kind) {
  static const std::map<std::string, std::string> kResources = {
      {"Pod", "pods"},
      {"Node", "nodes"},
      {"Service", "services"},
      {"Namespace", "namespaces"},
      {"ResourceSlice", "resourceslices"},
      {"ResourceClaim", "resourceclaims"}};
  auto it = kResources.find(kind);
  return it == kResources.end() ? "" : it->second;
}

std::string ExporterKey(const std::string& ns, const std::string& pod, const std::string& port) {
  return ns + "/" + pod + ":" + port;
}

json YamlTextToJson(const std::string& text) { return ToJson(YAML::Load(text)); }

Result<std::vector<json>> ParseObjectsYaml(const std::string& text, const std::string& source,
                                           const std::string& default_kind) {
  auto docs = LoadDocuments(text, source);
  if (!docs) return docs.error();
  std::vector<json> out;
  for (const YAML::Node& doc : *docs) {
    if (doc.IsNull()) continue;  // empty document (a trailing ---)
    std::string where = At(source, doc.Mark());
    if (!doc.IsMap())
      return Invalid(where + ": a document must be a mapping (a Kubernetes object)");
    json obj = ToJson(doc);
    std::string kind = obj.value("kind", "");
    bool is_list = obj.contains("items") && (kind.empty() || kind.ends_with("List"));
    if (!is_list) {
      if (!obj.contains("kind") && !default_kind.empty()) obj["kind"] = default_kind;
      if (auto st = ValidateObject(obj, where); !st) return st.error();
      out.push_back(std::move(obj));
      continue;
    }
    const YAML::Node items = doc["items"];
    if (!items.IsSequence() && !items.IsNull())
      return Invalid(At(source, items.Mark()) + ": `items` must be a list");
    std::string item_kind = kind.size() > 4 ? kind.substr(0, kind.size() - 4) : default_kind;
    if (kind == "List") item_kind = default_kind;
    for (const YAML::Node& item : items) {
      json o = ToJson(item);
      if (o.is_object() && !o.contains("kind") && !item_kind.empty()) o["kind"] = item_kind;
      if (o.is_object() && !o.contains("apiVersion") && obj.contains("apiVersion"))
        o["apiVersion"] = obj["apiVersion"];
      if (auto st = ValidateObject(o, At(source, item.Mark())); !st) return st.error();
      out.push_back(std::move(o));
    }
  }
  return out;
}

Result<std::vector<FaultRule>> ParseFaultsYaml(const std::string& text, const std::string& source) {
  auto docs = LoadDocuments(text, source);
  if (!docs) return docs.error();
  std::vector<FaultRule> rules;
  for (const YAML::Node& doc : *docs) {
    if (doc.IsNull()) continue;
    if (!doc.IsSequence())
      return Invalid(At(source, doc.Mark()) + ": faults must be a list of rules");
    for (const YAML::Node& r : doc) {
      std::string where = At(source, r.Mark());
      if (!r.IsMap()) return Invalid(where + ": a fault rule must be a mapping");
      if (auto st = CheckKeys(
              r,
              {"path", "path_regex", "verb", "query_contains", "delay", "status", "retry_after",
               "message", "body", "truncate_at", "oversize_bytes", "times"},
              source);
          !st)
        return st.error();
      FaultRule rule;
      rule.source = FileName(source) + ":" + std::to_string(r.Mark().line + 1);
      for (const auto& kv : r) {
        std::string key = kv.first.Scalar();
        const YAML::Node& v = kv.second;
        std::string at = At(source, v.Mark());
        if (key == "path" || key == "path_regex" || key == "verb" || key == "query_contains" ||
            key == "message" || key == "body") {
          auto s = StringAt(v, at, key);
          if (!s) return s.error();
          if (key == "path") rule.path_prefix = *s;
          if (key == "path_regex") {
            try {
              std::regex check(*s);
            } catch (const std::regex_error& e) {
              return Invalid(at + ": `path_regex` is not a valid regex: " + e.what());
            }
            rule.path_regex = *s;
          }
          if (key == "verb") {
            if (*s != "list" && *s != "watch" && *s != "get" && *s != "proxy")
              return Invalid(at + ": `verb` must be list, watch, get or proxy, not `" + *s + "`");
            rule.verb = *s;
          }
          if (key == "query_contains") rule.query_contains = *s;
          if (key == "message") rule.message = *s;
          if (key == "body") rule.body = *s;
        } else if (key == "delay") {
          auto d = DurationAt(v, at, key);
          if (!d) return d.error();
          rule.delay = *d;
        } else if (key == "status" || key == "retry_after" || key == "times") {
          auto n = NumberAt<int>(v, at, key);
          if (!n) return n.error();
          if (key == "status") {
            if (*n < 100 || *n > 599) return Invalid(at + ": `status` must be an HTTP status code");
            rule.status = *n;
          }
          if (key == "retry_after") rule.retry_after = *n;
          if (key == "times") rule.times = *n;
        } else {  // truncate_at, oversize_bytes
          auto n = NumberAt<long long>(v, at, key);
          if (!n) return n.error();
          if (*n < 0) return Invalid(at + ": `" + key + "` must not be negative");
          (key == "truncate_at" ? rule.truncate_at : rule.oversize_bytes) = *n;
        }
      }
      if (rule.delay.count() == 0 && rule.status == 0 && rule.truncate_at < 0 &&
          rule.oversize_bytes < 0)
        return Invalid(
            where + ": the rule does nothing (give delay, status, truncate_at or oversize_bytes)");
      rules.push_back(std::move(rule));
    }
  }
  return rules;
}

Result<std::vector<ScriptedEvent>> ParseWatchYaml(const std::string& text,
                                                  const std::string& source) {
  auto docs = LoadDocuments(text, source);
  if (!docs) return docs.error();
  std::vector<ScriptedEvent> events;
  for (const YAML::Node& doc : *docs) {
    if (doc.IsNull()) continue;
    if (!doc.IsSequence()) return Invalid(At(source, doc.Mark()) + ": watch events must be a list");
    for (const YAML::Node& e : doc) {
      std::string where = At(source, e.Mark());
      if (!e.IsMap()) return Invalid(where + ": a watch event must be a mapping");
      if (auto st =
              CheckKeys(e, {"type", "object", "ref", "patch", "delay", "after_watch"}, source);
          !st)
        return st.error();
      ScriptedEvent ev;
      ev.source = FileName(source) + ":" + std::to_string(e.Mark().line + 1);
      if (!e["type"]) return Invalid(where + ": watch event has no `type`");
      ev.type = e["type"].Scalar();
      if (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED")
        return Invalid(At(source, e["type"].Mark()) +
                       ": `type` must be ADDED, MODIFIED or DELETED, not `" + ev.type + "`");
      if (e["delay"]) {
        auto d = DurationAt(e["delay"], At(source, e["delay"].Mark()), "delay");
        if (!d) return d.error();
        ev.delay = *d;
      }
      if (e["after_watch"]) {
        auto n =
            NumberAt<int>(e["after_watch"], At(source, e["after_watch"].Mark()), "after_watch");
        if (!n) return n.error();
        if (*n < 0)
          return Invalid(At(source, e["after_watch"].Mark()) + ": `after_watch` must be >= 0");
        ev.after_watch = *n;
      }
      if (e["object"]) {
        ev.object = ToJson(e["object"]);
        if (auto st = ValidateObject(ev.object, At(source, e["object"].Mark())); !st)
          return st.error();
        ev.resource = ResourceForKind(ev.object["kind"]);
        ev.ref_name = ev.object["metadata"]["name"];
        ev.ref_namespace = ev.object["metadata"].value("namespace", "");
      }
      if (const YAML::Node ref = e["ref"]) {
        std::string at = At(source, ref.Mark());
        if (!ref.IsMap())
          return Invalid(at + ": `ref` must be a mapping {resource, namespace, name}");
        if (auto st = CheckKeys(ref, {"resource", "kind", "namespace", "name"}, source); !st)
          return st.error();
        if (ref["kind"]) ev.resource = ResourceForKind(ref["kind"].Scalar());
        if (ref["resource"]) ev.resource = ref["resource"].Scalar();
        if (ref["namespace"]) ev.ref_namespace = ref["namespace"].Scalar();
        if (!ref["name"]) return Invalid(at + ": `ref` has no `name`");
        ev.ref_name = ref["name"].Scalar();
        static const std::set<std::string> kServed = {
            "pods", "nodes", "services", "namespaces", "resourceslices", "resourceclaims"};
        if (!kServed.count(ev.resource))
          return Invalid(at +
                         ": `ref` needs a served resource (pods, nodes, services, namespaces, "
                         "resourceslices, resourceclaims) or kind");
      }
      if (e["patch"]) {
        ev.patch = ToJson(e["patch"]);
        if (!ev.patch.is_object())
          return Invalid(At(source, e["patch"].Mark()) + ": `patch` must be a mapping");
      }
      if (ev.type == "ADDED" && ev.object.is_null())
        return Invalid(where + ": an ADDED event needs an `object`");
      if (ev.type == "MODIFIED" && ev.object.is_null() &&
          (ev.patch.is_null() || ev.ref_name.empty()))
        return Invalid(where + ": a MODIFIED event needs an `object` or a `ref` and a `patch`");
      if (ev.type == "DELETED" && ev.ref_name.empty())
        return Invalid(where + ": a DELETED event needs a `ref` or an `object`");
      events.push_back(std::move(ev));
    }
  }
  return events;
}

Result<std::vector<PromAnswer>> ParsePromAnswersYaml(const std::string& text,
                                                     const std::string& source) {
  auto docs = LoadDocuments(text, source);
  if (!docs) return docs.error();
  std::vector<PromAnswer> answers;
  for (const YAML::Node& doc : *docs) {
    if (doc.IsNull()) continue;
    if (!doc.IsSequence())
      return Invalid(At(source, doc.Mark()) + ": query answers must be a list");
    for (const YAML::Node& a : doc) {
      std::string where = At(source, a.Mark());
      if (!a.IsMap()) return Invalid(where + ": a query answer must be a mapping");
      if (auto st =
              CheckKeys(a, {"query", "contains", "regex", "result", "body", "status"}, source);
          !st)
        return st.error();
      PromAnswer ans;
      int matchers = 0;
      for (const char* key : {"query", "contains", "regex"}) {
        if (!a[key]) continue;
        ++matchers;
        ans.pattern = a[key].Scalar();
        ans.match = std::string(key) == "query"      ? PromAnswer::Match::kExact
                    : std::string(key) == "contains" ? PromAnswer::Match::kContains
                                                     : PromAnswer::Match::kRegex;
      }
      if (matchers != 1)
        return Invalid(where + ": give exactly one of `query`, `contains`, `regex`");
      if (ans.match == PromAnswer::Match::kRegex) {
        try {
          std::regex check(ans.pattern);
        } catch (const std::regex_error& e) {
          return Invalid(where + ": `regex` is not a valid regex: " + e.what());
        }
      }
      if (a["status"]) {
        auto n = NumberAt<int>(a["status"], where, "status");
        if (!n) return n.error();
        ans.status = *n;
      }
      if (a["body"] && a["result"]) return Invalid(where + ": give `result` or `body`, not both");
      if (a["body"]) {
        ans.body = a["body"].Scalar();
      } else {
        json result = a["result"] ? ToJson(a["result"]) : json::array();
        if (!result.is_array())
          return Invalid(where + ": `result` must be a list of {metric, value}");
        for (auto& r : result) {
          // A bare value ("87") gets a timestamp, as a live Prometheus would give.
          if (r.is_object() && r.contains("value") && !r["value"].is_array()) {
            json v = r["value"];
            std::string text = v.is_string() ? v.get<std::string>() : v.dump();
            r["value"] = json::array({1700000000.0, text});
          }
        }
        ans.body =
            json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}
                .dump();
      }
      answers.push_back(std::move(ans));
    }
  }
  return answers;
}

namespace {

Status LoadObjectsFile(const fs::path& path, const std::string& default_kind, Scenario& sc) {
  auto text = ReadText(path);
  if (!text) return text.error();
  auto objs = ParseObjectsYaml(*text, path.string(), default_kind);
  if (!objs) return objs.error();
  for (auto& o : *objs) sc.objects.push_back(std::move(o));
  return Status::Ok();
}

Status LoadCluster(const fs::path& path, Scenario& sc, bool& dra_given) {
  auto text = ReadText(path);
  if (!text) return text.error();
  auto docs = LoadDocuments(*text, path.string());
  if (!docs) return docs.error();
  for (const YAML::Node& doc : *docs) {
    if (doc.IsNull()) continue;
    std::string where = At(path.string(), doc.Mark());
    if (!doc.IsMap()) return Invalid(where + ": cluster.yaml must be a mapping");
    if (auto st =
            CheckKeys(doc, {"server_version", "dra_versions", "body_sequences"}, path.string());
        !st)
      return st.error();
    if (doc["server_version"]) {
      sc.git_version = doc["server_version"].Scalar();
      static const std::regex kVersion("v1\\.[0-9]+\\.[0-9]+.*");
      if (!std::regex_match(sc.git_version, kVersion))
        return Invalid(At(path.string(), doc["server_version"].Mark()) +
                       ": `server_version` must look like v1.30.4");
    }
    if (const YAML::Node v = doc["body_sequences"]) {
      const std::string mode = v.Scalar();
      if (mode != "repeat_last" && mode != "loop")
        return Invalid(At(path.string(), v.Mark()) +
                       ": `body_sequences` must be repeat_last or loop");
      sc.loop_body_sequences = mode == "loop";
    }
    if (const YAML::Node v = doc["dra_versions"]) {
      if (!v.IsSequence() && !v.IsNull())
        return Invalid(At(path.string(), v.Mark()) +
                       ": `dra_versions` must be a list such as [v1, v1beta1]");
      dra_given = true;
      sc.dra_versions.clear();
      for (const auto& item : v) {
        std::string ver = item.Scalar();
        if (ver != "v1" && ver != "v1beta2" && ver != "v1beta1" && ver != "v1alpha3")
          return Invalid(At(path.string(), item.Mark()) + ": unknown resource.k8s.io version `" +
                         ver + "`");
        sc.dra_versions.push_back(ver);
      }
    }
  }
  return Status::Ok();
}

// exporters/<namespace>/<pod>:<port>[.<n>].prom
Status LoadExporters(const fs::path& root, Scenario& sc) {
  std::map<std::string, std::map<int, std::string>> seqs;
  std::vector<fs::path> files;
  for (const auto& ns_dir : fs::directory_iterator(root)) {
    if (!ns_dir.is_directory())
      return Invalid(ns_dir.path().string() + ": expected a folder per namespace under exporters/");
    for (const auto& f : fs::directory_iterator(ns_dir.path())) files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string name = f.filename().string();
    if (!name.ends_with(".prom"))
      return Invalid(f.string() +
                     ": exporter bodies are named <pod>:<port>.prom or <pod>:<port>.<n>.prom");
    std::string stem = name.substr(0, name.size() - 5);
    size_t colon = stem.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Invalid(f.string() + ": exporter body file name has no <pod>:<port>");
    std::string pod = stem.substr(0, colon);
    std::string port = stem.substr(colon + 1);
    int index = 0;
    if (size_t dot = port.find('.'); dot != std::string::npos) {
      std::string n = port.substr(dot + 1);
      port = port.substr(0, dot);
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
      if (ec != std::errc() || p != n.data() + n.size() || index < 1)
        return Invalid(f.string() + ": sequence number must be 1, 2, ... in <pod>:<port>.<n>.prom");
    }
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos)
      return Invalid(f.string() + ": port must be a number in <pod>:<port>.prom");
    auto text = ReadText(f);
    if (!text) return text.error();
    auto& seq = seqs[ExporterKey(f.parent_path().filename().string(), pod, port)];
    if (!seq.emplace(index, std::move(*text)).second)
      return Invalid(f.string() + ": another file already gives body number " +
                     std::to_string(index));
  }
  for (auto& [key, seq] : seqs) {
    auto& bodies = sc.exporter_bodies[key];
    for (auto& [i, body] : seq) bodies.push_back(std::move(body));
  }
  return Status::Ok();
}

// prometheus/<namespace>/<service>:<port>/queries.yaml
Status LoadPrometheus(const fs::path& root, Scenario& sc) {
  for (const auto& ns_dir : fs::directory_iterator(root)) {
    if (!ns_dir.is_directory())
      return Invalid(ns_dir.path().string() +
                     ": expected a folder per namespace under prometheus/");
    for (const auto& svc_dir : fs::directory_iterator(ns_dir.path())) {
      std::string name = svc_dir.path().filename().string();
      size_t colon = name.rfind(':');
      if (!svc_dir.is_directory() || colon == std::string::npos || colon == 0 ||
          colon + 1 == name.size())
        return Invalid(svc_dir.path().string() + ": expected a folder named <service>:<port>");
      fs::path q = svc_dir.path() / "queries.yaml";
      auto text = ReadText(q);
      if (!text) return text.error();
      auto answers = ParsePromAnswersYaml(*text, q.string());
      if (!answers) return answers.error();
      sc.prometheus[ExporterKey(ns_dir.path().filename().string(), name.substr(0, colon),
                                name.substr(colon + 1))] = std::move(*answers);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Scenario> LoadScenario(const fs::path& dir) {
  if (!fs::is_directory(dir))
    return MakeError(ErrorCode::kNotFound, "scenario folder " + dir.string() + " not found");
  Scenario sc;
  sc.dir = dir;
  sc.name = fs::absolute(dir).lexically_normal().filename().string();
  if (sc.name.empty())
    sc.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  static const std::map<std::string, std::string> kObjectFiles = {{"pods.yaml", "Pod"},
                                                                  {"nodes.yaml", "Node"},
                                                                  {"services.yaml", "Service"},
                                                                  {"namespaces.yaml", "Namespace"}};
  bool dra_given = false;
  try {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    for (const fs::path& p : entries) {
      std::string name = p.filename().string();
      if (name == "README.md" || name.starts_with(".")) continue;
      Status st;
      if (name == "cluster.yaml") {
        st = LoadCluster(p, sc, dra_given);
      } else if (auto it = kObjectFiles.find(name); it != kObjectFiles.end()) {
        st = LoadObjectsFile(p, it->second, sc);
      } else if (name == "faults.yaml") {
        auto text = ReadText(p);
        if (!text) return text.error();
        auto rules = ParseFaultsYaml(*text, p.string());
        if (!rules) return rules.error();
        sc.faults = std::move(*rules);
      } else if (name == "watch.yaml") {
        auto text = ReadText(p);
        if (!text) return text.error();
        auto events = ParseWatchYaml(*text, p.string());
        if (!events) return events.error();
        sc.watch_script = std::move(*events);
      } else if (name == "dra" && fs::is_directory(p)) {
        std::vector<fs::path> files;
        for (const auto& f : fs::directory_iterator(p)) files.push_back(f.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
          if (f.extension() != ".yaml")
            return Invalid(f.string() +
                           ": dra/ holds only .yaml files (ResourceSlices, ResourceClaims)");
          if (st = LoadObjectsFile(f, "", sc); !st) break;
        }
        if (!dra_given) sc.dra_versions = {"v1"};
      } else if (name == "exporters" && fs::is_directory(p)) {
        st = LoadExporters(p, sc);
      } else if (name == "prometheus" && fs::is_directory(p)) {
        st = LoadPrometheus(p, sc);
      } else {
        return Invalid(p.string() +
                       ": unknown scenario entry (expected cluster.yaml, pods.yaml, nodes.yaml, "
                       "services.yaml, "
                       "faults.yaml, watch.yaml, dra/, exporters/, prometheus/)");
      }
      if (!st) return st.error();
    }
  } catch (const fs::filesystem_error& e) {
    return Invalid(std::string("reading scenario ") + dir.string() + ": " + e.what());
  }
  // Entries are read in name order, so cluster.yaml (which may name the DRA versions) precedes
  // dra/.
  std::set<std::string> seen;
  for (const auto& o : sc.objects) {
    std::string key = o["kind"].get<std::string>() + " " + o["metadata"].value("namespace", "") +
                      "/" + o["metadata"]["name"].get<std::string>();
    if (!seen.insert(key).second) return Invalid(sc.dir.string() + ": duplicate object " + key);
  }
  return sc;
}

}  // namespace gpuattr::testing
