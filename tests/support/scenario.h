// A scenario is everything the fake apiserver serves: Kubernetes objects, exporter bodies behind
// the pod proxy, Prometheus answers behind the service proxy, injected faults and a script of
// watch events. It is loaded from fixtures/scenarios/NAME/ (format: fixtures/scenarios/README.md)
// or built in code by tests. Loading errors name the file and line at fault.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuattr/util/status.h"

namespace gpuattr::testing {

// One fault-injection rule (faults.yaml or FakeApiServer::AddFault). A request matches when every
// given matcher matches; the first matching rule that still has uses left is applied.
struct FaultRule {
  std::string path_prefix;     // matched against the path without the query ("" = any)
  std::string path_regex;      // ECMAScript regex searched in the path ("" = any)
  std::string verb;            // list | watch | get | proxy ("" = any)
  std::string query_contains;  // substring of the raw query string ("" = any)

  std::chrono::milliseconds delay{0};  // wait before answering
  int status = 0;                      // answer with this code and a Kubernetes Status (0 = don't)
  int retry_after = -1;                // Retry-After seconds (with status 429/503)
  std::string message;                 // Status message override
  std::string body;                    // raw body instead of a Status
  long long truncate_at = -1;          // send this many bytes of the real body, then close
  long long oversize_bytes = -1;       // answer with this many bytes of valid-looking exposition
  int times = 0;                       // apply to the first N matches only (0 = always)

  std::string source;  // "faults.yaml:12" for messages
};

// Answer of a Prometheus-compatible query API for one query (service proxy /api/v1/query).
struct PromAnswer {
  enum class Match { kExact, kContains, kRegex };
  Match match = Match::kExact;
  std::string pattern;
  int status = 200;
  std::string body;  // the full JSON response
};

// One scripted watch event (watch.yaml). It is applied as a mutation of the server's state, so a
// client that lists and then watches from the list's resourceVersion always sees it.
struct ScriptedEvent {
  std::string type;           // ADDED | MODIFIED | DELETED
  nlohmann::json object;      // the full object (ADDED, MODIFIED by replacement)
  std::string resource;       // pods | nodes | services | resourceslices | resourceclaims
  std::string ref_namespace;  // DELETED / MODIFIED of an existing object by reference
  std::string ref_name;
  nlohmann::json patch;  // MODIFIED by reference: a JSON merge patch (RFC 7386)
  std::chrono::milliseconds delay{0};
  int after_watch = 0;  // armed by the N-th WATCH of `resource` (0: armed at server start)
  std::string source;   // "watch.yaml:3"
};

struct Scenario {
  std::string name;
  std::filesystem::path dir;  // empty for scenarios built in code

  std::string git_version = "v1.30.4";  // /version; minor is derived from it
  // resource.k8s.io versions served, preferred first (e.g. {"v1", "v1beta1"}); empty: no DRA group.
  std::vector<std::string> dra_versions;
  // cluster.yaml `body_sequences: loop`: exporter body sequences start over after the last body
  // (a demo that stays live); default `repeat_last`: the last body repeats.
  bool loop_body_sequences = false;

  // Objects in apiserver JSON (kind and apiVersion included), in file order.
  std::vector<nlohmann::json> objects;

  // Pod proxy bodies, key "namespace/pod:port"; a sequence is served in turn, the last repeated.
  std::map<std::string, std::vector<std::string>> exporter_bodies;
  // Service proxy query answers, key "namespace/service:port", first match wins.
  std::map<std::string, std::vector<PromAnswer>> prometheus;

  std::vector<FaultRule> faults;
  std::vector<ScriptedEvent> watch_script;
};

// Loads fixtures/scenarios/NAME/ (any directory in that format).
Result<Scenario> LoadScenario(const std::filesystem::path& dir);

// Parses YAML text holding Kubernetes objects: several documents and/or `kind: *List` with items.
// `source` names the file in error messages ("pods.yaml:12:3: ..."); `default_kind` is used for
// items without `kind`.
Result<std::vector<nlohmann::json>> ParseObjectsYaml(const std::string& text,
                                                     const std::string& source,
                                                     const std::string& default_kind = "");
Result<std::vector<FaultRule>> ParseFaultsYaml(const std::string& text, const std::string& source);
Result<std::vector<ScriptedEvent>> ParseWatchYaml(const std::string& text,
                                                  const std::string& source);
Result<std::vector<PromAnswer>> ParsePromAnswersYaml(const std::string& text,
                                                     const std::string& source);

// YAML (1.2 core schema: quoted scalars are strings; plain ones may be int, float, bool or null)
// to JSON, as kubectl converts manifests. Throws YAML::Exception only for invalid nodes.
nlohmann::json YamlTextToJson(const std::string& text);

// Kubernetes plural resource name for a kind ("Pod" → "pods"), "" when the fake does not serve it.
std::string ResourceForKind(const std::string& kind);

// Key of an exporter body: "namespace/pod:port".
std::string ExporterKey(const std::string& ns, const std::string& pod, const std::string& port);

}  // namespace gpuattr::testing
