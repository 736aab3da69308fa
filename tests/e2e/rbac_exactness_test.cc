// RBAC exactness: the gpuattr binary runs against the fake apiserver for every fixture scenario;
// every request in the server's log must be allowed by the ClusterRole in
// config/kubernetes/base/clusterrole.yaml (read through the proxies), or, reading directly, by
// the one of config/kubernetes/components/direct (no proxy rights), and every grant of that
// ClusterRole (each verb on each resource, each verb on each non-resource URL) must be used by some
// scenario. The requests are turned into RBAC attributes (API group, resource, subresource, verb,
// or non-resource path) the way the apiserver's request-info parser does, and matched by a small
// rule evaluator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "support/direct_exporters.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// One request as RBAC sees it.
struct Attributes {
  bool resource_request = false;
  std::string group, resource, subresource, verb;  // resource requests
  std::string path;                                // non-resource requests
  std::string Text() const {
    if (!resource_request) return verb + " " + path;
    return verb + " " + (group.empty() ? "core" : group) + "/" + resource +
           (subresource.empty() ? "" : "/" + subresource);
  }
};

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream ss(path);
  for (std::string seg; std::getline(ss, seg, '/');)
    if (!seg.empty()) out.push_back(seg);
  return out;
}

bool WatchQuery(const std::string& query) {
  std::stringstream ss(query);
  for (std::string kv; std::getline(ss, kv, '&');)
    if (kv == "watch=1" || kv == "watch=true") return true;
  return false;
}

// The apiserver's request-info rules for GET requests: /api/v1/... and /apis/GROUP/VERSION/...
// with at least a resource are resource requests; everything else (/apis, /apis/GROUP, /version)
// is a non-resource URL.
Attributes Classify(const std::string& method, const std::string& path, const std::string& query) {
  Attributes a;
  a.path = path;
  a.verb = method == "GET" ? "get" : "other:" + method;
  std::vector<std::string> segs = Split(path);
  std::vector<std::string> rest;
  if (segs.size() >= 3 && segs[0] == "api") {
    rest.assign(segs.begin() + 2, segs.end());
  } else if (segs.size() >= 4 && segs[0] == "apis") {
    a.group = segs[1];
    rest.assign(segs.begin() + 3, segs.end());
  } else {
    return a;  // non-resource
  }
  a.resource_request = true;
  if (rest[0] == "namespaces" && rest.size() >= 3) rest.erase(rest.begin(), rest.begin() + 2);
  a.resource = rest[0];
  const bool named = rest.size() >= 2;
  if (rest.size() >= 3) a.subresource = rest[2];
  if (method == "GET") a.verb = WatchQuery(query) ? "watch" : named ? "get" : "list";
  return a;
}

struct Rule {
  std::set<std::string> groups, resources, verbs, urls;
  std::string Text() const {
    auto join = [](const std::set<std::string>& s) {
      std::string o;
      for (const auto& e : s) o += (o.empty() ? "" : ",") + e;
      return o;
    };
    return urls.empty() ? "[" + join(groups) + "] " + join(resources) + ": " + join(verbs)
                        : join(urls) + ": " + join(verbs);
  }
};

std::vector<Rule> LoadClusterRole(const fs::path& file) {
  std::vector<Rule> rules;
  YAML::Node role = YAML::LoadFile(file.string());
  for (const YAML::Node& r : role["rules"]) {
    Rule rule;
    auto read = [&](const char* key, std::set<std::string>& into) {
      if (r[key])
        for (const YAML::Node& v : r[key]) into.insert(v.as<std::string>());
    };
    read("apiGroups", rule.groups);
    read("resources", rule.resources);
    read("verbs", rule.verbs);
    read("nonResourceURLs", rule.urls);
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool Has(const std::set<std::string>& s, const std::string& v) {
  return s.count(v) > 0 || s.count("*") > 0;
}

// As the RBAC authorizer matches one rule.
bool Allows(const Rule& rule, const Attributes& a) {
  if (!Has(rule.verbs, a.verb)) return false;
  if (!a.resource_request) {
    for (const std::string& url : rule.urls)
      if (url == a.path || url == "*" ||
          (url.ends_with("*") && a.path.starts_with(url.substr(0, url.size() - 1))))
        return true;
    return false;
  }
  if (!rule.urls.empty() || !Has(rule.groups, a.group)) return false;
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  return Has(rule.resources, combined) ||
         (!a.subresource.empty() && rule.resources.count("*/" + a.subresource));
}

// Every single grant of the role: (group, resource, verb) and (url, verb).
std::set<std::string> Grants(const std::vector<Rule>& rules) {
  std::set<std::string> out;
  for (const Rule& r : rules)
    for (const std::string& v : r.verbs) {
      for (const std::string& url : r.urls) out.insert(v + " " + url);
      for (const std::string& g : r.groups)
        for (const std::string& res : r.resources)
          out.insert(v + " " + (g.empty() ? "core" : g) + "/" + res);
    }
  return out;
}

TEST(RbacEvaluator, ClassifiesRequestsAsTheApiserverDoes) {
  Attributes list = Classify("GET", "/api/v1/pods", "limit=500");
  EXPECT_EQ(list.Text(), "list core/pods");
  EXPECT_EQ(Classify("GET", "/api/v1/pods", "watch=1&resourceVersion=5").Text(), "watch core/pods");
  EXPECT_EQ(Classify("GET", "/api/v1/namespaces/ml/pods/x:9400/proxy/metrics", "").Text(),
            "get core/pods/proxy");
  EXPECT_EQ(Classify("GET", "/api/v1/namespaces/m/services/p:9090/proxy/api/v1/query", "q").Text(),
            "get core/services/proxy");
  EXPECT_EQ(Classify("GET", "/apis/resource.k8s.io/v1/resourceslices", "").Text(),
            "list resource.k8s.io/resourceslices");
  EXPECT_EQ(Classify("GET", "/apis/resource.k8s.io", "").Text(), "get /apis/resource.k8s.io");
  EXPECT_EQ(Classify("GET", "/api/v1/namespaces/ml/pods/x", "").Text(), "get core/pods");
  EXPECT_EQ(Classify("POST", "/api/v1/namespaces/ml/pods", "").Text(), "other:POST core/pods");

  Rule pods{{""}, {"pods"}, {"list", "watch"}, {}};
  EXPECT_TRUE(Allows(pods, list));
  EXPECT_FALSE(Allows(pods, Classify("GET", "/api/v1/namespaces/ml/pods/x", "")));
  EXPECT_FALSE(Allows(pods, Classify("GET", "/api/v1/namespaces/ml/pods/x:1/proxy/m", "")));
  EXPECT_FALSE(Allows(pods, Classify("GET", "/apis/example.com/v1/pods", "")));
  Rule url{{}, {}, {"get"}, {"/apis/resource.k8s.io"}};
  EXPECT_TRUE(Allows(url, Classify("GET", "/apis/resource.k8s.io", "")));
  EXPECT_FALSE(Allows(url, Classify("GET", "/apis", "")));
}

// Runs gpuattr --once against every fixture scenario and checks every request against the role
// in `role_file`: each is allowed, and each grant is used by some scenario. `direct`: the pods
// have addresses and their exporters listen there, and gpuattr reads them directly
// (docs/deploy.md#direct-scraping).
void ExpectExactness(const fs::path& role_file, bool direct) {
  const std::vector<Rule> rules = LoadClusterRole(role_file);
  ASSERT_FALSE(rules.empty());
  std::set<std::string> used;
  size_t requests = 0;
  std::vector<std::string> scenarios;
  for (const auto& e : fs::directory_iterator(FixturePath("scenarios")))
    if (e.is_directory()) scenarios.push_back(e.path().filename().string());
  std::sort(scenarios.begin(), scenarios.end());
  for (const std::string& name : scenarios) {
    SCOPED_TRACE(name);
    auto sc = LoadScenario(FixturePath("scenarios/" + name));
    ASSERT_TRUE(sc.ok()) << sc.error().message;
    std::optional<DirectExporters> exporters;
    if (direct) exporters.emplace(*sc);
    FakeApiServer server(std::move(*sc));
    ASSERT_TRUE(server.Start().ok());
    if (exporters) {
      ASSERT_TRUE(exporters->Start(server).ok());
    }
    char tmpl[] = "/tmp/gpuattr-rbac-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig").ok());
    Child c = SpawnChild({DaemonBinary(), "--once", "--kubeconfig", (dir / "kubeconfig").string(),
                          "--state.file", (dir / "state.json").string(), "--log.level", "error",
                          "--scrape.path", direct ? "direct" : "proxy"},
                         EnvironmentWithout({}), dir);
    const int code = WaitChild(c.pid, 60s);
    EXPECT_TRUE(code == 0 || code == 1) << code << SlurpFile(c.err);
    if (exporters) exporters->Stop();
    server.Stop();  // ends the watches: the log is complete
    for (const RequestRecord& r : server.Requests()) {
      ++requests;
      const Attributes a = Classify(r.method, r.path, r.query);
      bool allowed = false;
      for (const Rule& rule : rules) {
        if (!Allows(rule, a)) continue;
        allowed = true;
        if (a.resource_request)
          used.insert(a.verb + " " + (a.group.empty() ? "core" : a.group) + "/" +
                      (a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource));
        else
          for (const std::string& url : rule.urls)
            if (url == a.path) used.insert(a.verb + " " + url);
      }
      EXPECT_TRUE(allowed) << "not allowed by the ClusterRole: " << a.Text() << " (" << r.method
                           << " " << r.path << (r.query.empty() ? "" : "?") << r.query.substr(0, 60)
                           << ")";
    }
    fs::remove_all(dir);
  }
  EXPECT_GT(requests, 0u);
  for (const std::string& grant : Grants(rules))
    EXPECT_TRUE(used.count(grant))
        << "the ClusterRole grants \"" << grant << "\", which no scenario uses";
}

TEST(RbacExactness, EveryRequestIsAllowedAndEveryGrantIsUsed) {
  ExpectExactness(SourceDir() / "config" / "kubernetes" / "base" / "clusterrole.yaml",
                  /*direct=*/false);
}

// The direct variant's role (components/direct) has no proxy rights, and needs none.
TEST(RbacExactness, DirectVariantNeedsNoProxyRights) {
  const fs::path role =
      SourceDir() / "config" / "kubernetes" / "components" / "direct" / "clusterrole.yaml";
  for (const Rule& r : LoadClusterRole(role))
    for (const std::string& res : r.resources)
      EXPECT_FALSE(res.ends_with("/proxy")) << "the direct role grants " << res;
  ExpectExactness(role, /*direct=*/true);
}

}  // namespace
}  // namespace gpuattr::testing
