// Sharding invariants (docs/design.md#sharding) over every fixture scenario and N ∈ {2, 3, 5}: each
// run is a real KubeClusterSession (discovery, scraping, the stages, the ledger) against its own
// fake apiserver, two cycles 20 s apart, rendered through the metrics group table. Then:
//   - the union of the N shards' series (minus self-metrics and namespace series) equals the
//     unsharded output, value for value;
//   - Σ over shards of every namespace series equals the unsharded value (1e-9 relative); the
//     utilisation, a GPU-equivalent-weighted mean, recombines as such a mean;
//   - every node appears in exactly one shard; only shard 0 publishes pending pods;
//   - a shard's pod-proxy GETs go only to pods on its own nodes.
// The scenario's scripted watch events are left out: they are timing tests of the object cache
// (faults-and-watch), and their timing would differ between the runs compared here. Faults stay.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/app/run.h"
#include "gpuattr/http/server.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/kube/shard.h"
#include "gpuattr/metrics/families.h"
#include "support/fake_apiserver.h"
#include "support/fake_clock.h"
#include "support/family_collector.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Labels = std::map<std::string, std::string>;

struct Series {
  std::string family;
  Labels labels;
  double value = 0;
};

// One run: the series of its second cycle and the pods its proxy GETs went to.
struct ShardRun {
  std::map<std::string, Series> series;   // by key
  std::vector<std::string> proxied_pods;  // "namespace/pod" of every pod-proxy GET
  std::string error;
};

std::string Key(const std::string& family, const Labels& labels) {
  std::string k = family + "{";
  for (const auto& [n, v] : labels) k += n + "=\"" + v + "\",";
  return k + "}";
}

const TestPki& SharedPki() {
  static const TestPki* pki = new TestPki(MakeTestPki());
  return *pki;
}

ShardRun RunShard(const Scenario& scenario, kube::Shard shard) {
  ShardRun run;
  FakeApiServerOptions opts;
  opts.pki = SharedPki();
  FakeApiServer server(scenario, opts);
  if (Status s = server.Start(); !s.ok()) return run.error = s.message(), run;
  auto transport = server.MakeTransport();
  if (!transport.ok()) return run.error = transport.error().message, run;

  FakeClock clock;
  app::KubeSessionOptions o;
  o.clock = &clock;  // the API client keeps real time: Retry-After waits really wait
  o.sync_timeout = 20s;
  o.shard = shard;
  app::SessionList sessions;
  sessions.push_back(std::make_unique<app::KubeClusterSession>(
      "fake", std::shared_ptr<kube::Transport>(std::move(*transport)), o));
  auto store = std::make_shared<metrics::SnapshotStore>();
  app::CycleLoop loop(std::move(sessions), store, clock);
  loop.RunOnce();
  clock.Advance(20s);
  auto snapshot = loop.RunOnce();

  for (const prometheus::MetricFamily& f : metrics::BuildFamilies(*snapshot))
    for (const prometheus::ClientMetric& m : f.metric) {
      Series s;
      s.family = f.name;
      for (const auto& l : m.label) s.labels[l.name] = l.value;
      s.value = f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      run.series[Key(s.family, s.labels)] = std::move(s);
    }
  static const std::regex kPodProxy("^/api/v1/namespaces/([^/]+)/pods/([^/:]+)[^/]*/proxy");
  for (const RequestRecord& r : server.Requests()) {
    std::smatch m;
    if (std::regex_search(r.path, m, kPodProxy))
      run.proxied_pods.push_back(m[1].str() + "/" + m[2].str());
  }
  server.Stop();
  return run;
}

bool IsSelfMetric(const std::string& family) {
  // What describes the process itself: its build, its view of the apiserver, its cycles and its
  // discovery bookkeeping. Every shard publishes its own.
  static const std::set<std::string> kSelf = {"gpuattr_build_info",
                                              "gpuattr_cluster_up",
                                              "gpuattr_last_cycle_timestamp_seconds",
                                              "gpuattr_cycle_duration_seconds",
                                              "gpuattr_apiserver_requests_total",
                                              "gpuattr_discovery_candidates",
                                              "gpuattr_discovery_read_path"};
  return kSelf.count(family) > 0 || family.starts_with("process_");
}

// Values that change from run to run whatever the sharding: durations and ages measured in real
// time. Compared by presence only.
bool IsVolatile(const std::string& family) {
  return family == "gpuattr_exporter_scrape_duration_seconds" ||
         family == "gpuattr_pending_pod_seconds";
}

// A pending pod's own series. (gpuattr_namespace_pending_pods is a namespace series: every shard
// with pods of the namespace publishes it, 0 but on shard 0, and the Σ check covers it.)
bool IsPending(const std::string& family) { return family.starts_with("gpuattr_pending_pod_"); }

bool Near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// A waiting hint's idle-holder clause: shard 0 counts only the idle pods on its own nodes and
// says so ("2 idle pods on shard 0's nodes hold ..."). The clause is cut out for comparison and
// its count returned (-1 when there is none).
std::pair<std::string, int> SplitIdleClause(const std::string& message) {
  static const std::regex kClause(
      R"(; (no idle pod|(\d+) idle pods?)( on shard \d+'s nodes)? (holds?) )");
  std::smatch m;
  if (!std::regex_search(message, m, kClause)) return {message, -1};
  const int n = m[2].matched ? std::stoi(m[2].str()) : 0;
  return {m.prefix().str() + "; IDLE " + m.suffix().str(), n};
}

class ShardInvariants : public ::testing::TestWithParam<std::string> {};

TEST_P(ShardInvariants, ShardsAddUpToTheUnshardedOutput) {
  auto loaded = LoadScenario(FixturePath("scenarios/" + GetParam()));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  Scenario scenario = std::move(*loaded);
  scenario.watch_script.clear();

  const ShardRun whole = RunShard(scenario, {});
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  ASSERT_FALSE(whole.series.empty());
  // The objects, to know each pod's node.
  std::map<std::string, std::string> pod_node;
  for (const nlohmann::json& obj : scenario.objects)
    if (obj.value("kind", "") == "Pod")
      pod_node[obj["metadata"].value("namespace", "default") + "/" +
               obj["metadata"].value("name", "")] = obj["spec"].value("nodeName", "");

  for (uint32_t n : {2u, 3u, 5u}) {
    SCOPED_TRACE(GetParam() + " with " + std::to_string(n) + " shards");
    std::vector<ShardRun> shards;
    for (uint32_t i = 0; i < n; ++i) {
      shards.push_back(RunShard(scenario, {i, n}));
      ASSERT_TRUE(shards.back().error.empty()) << shards.back().error;
    }

    std::map<std::string, std::set<uint32_t>> node_shards;  // node label → shards using it
    std::map<std::string, double> namespace_sum;            // key → Σ over shards
    std::map<std::string, std::vector<std::pair<double, uint32_t>>> util;  // → (value, shard)
    std::set<std::string> union_keys;
    for (uint32_t i = 0; i < n; ++i) {
      // A shard's pod-proxy GETs go to pods on its nodes only.
      for (const std::string& pod : shards[i].proxied_pods) {
        auto it = pod_node.find(pod);
        ASSERT_NE(it, pod_node.end()) << pod;
        EXPECT_TRUE(kube::OwnsNode({i, n}, it->second))
            << "shard " << i << " read " << pod << " on node " << it->second;
      }
      for (const auto& [key, s] : shards[i].series) {
        if (IsSelfMetric(s.family)) continue;
        union_keys.insert(key);
        if (IsPending(s.family) || (s.family == "gpuattr_namespace_pending_pods" && s.value != 0)) {
          EXPECT_EQ(i, 0u) << "shard " << i << " published " << key << " " << s.value;
        }
        if (auto node = s.labels.find("node"); node != s.labels.end() && !node->second.empty())
          node_shards[node->second].insert(i);
        if (s.family.starts_with("gpuattr_namespace_")) {
          if (s.family == "gpuattr_namespace_utilization_ratio")
            util[key].push_back({s.value, i});
          else
            namespace_sum[key] += s.value;
          continue;
        }
        if (s.family == "gpuattr_pending_pod_hint") {
          // The idle clause aside, the same hint as without shards; never more idle pods.
          auto [shown, idle] = SplitIdleClause(s.labels.at("message"));
          bool found = false;
          for (const auto& [wkey, w] : whole.series) {
            if (w.family != s.family || w.labels.at("pod") != s.labels.at("pod") ||
                w.labels.at("namespace") != s.labels.at("namespace"))
              continue;
            auto [wshown, widle] = SplitIdleClause(w.labels.at("message"));
            EXPECT_EQ(shown, wshown);
            EXPECT_LE(idle, widle);
            found = true;
            union_keys.erase(key);
            union_keys.insert(wkey);
          }
          EXPECT_TRUE(found) << key;
          continue;
        }
        auto w = whole.series.find(key);
        ASSERT_NE(w, whole.series.end())
            << "shard " << i << " published " << key << ", which the unsharded run does not";
        if (!IsVolatile(s.family)) {
          EXPECT_DOUBLE_EQ(s.value, w->second.value) << key << " in shard " << i;
        }
      }
    }
    // Union = unsharded (self-metrics aside).
    for (const auto& [key, s] : whole.series) {
      if (IsSelfMetric(s.family)) continue;
      EXPECT_TRUE(union_keys.count(key)) << "no shard published " << key;
    }
    for (const auto& key : union_keys)
      EXPECT_TRUE(whole.series.count(key)) << "shards published " << key << " beyond the whole";
    // Σ of namespace series.
    auto whole_value = [&](const std::string& key) {
      auto it = whole.series.find(key);
      return it == whole.series.end() ? std::nan("") : it->second.value;
    };
    for (const auto& [key, sum] : namespace_sum)
      EXPECT_TRUE(Near(sum, whole_value(key)))
          << key << ": Σ shards " << sum << " vs " << whole_value(key);
    // The utilisation is a mean over the namespace's pods whose utilisation is known, weighted by
    // their GPU-equivalents (a plain mean when none has any): each shard's value recombines with
    // the weights of its own pods' series.
    for (const auto& [key, parts] : util) {
      double weighted = 0, weight = 0, plain = 0, count = 0;
      for (auto [u, shard] : parts) {
        const ShardRun& run = shards[shard];
        const std::string& ns = run.series.at(key).labels.at("namespace");
        double w = 0, k = 0;
        for (const auto& [pkey, p] : run.series) {
          if (p.family != "gpuattr_pod_utilization_ratio" || p.labels.at("namespace") != ns)
            continue;
          auto g = run.series.find(Key("gpuattr_pod_gpu_equivalents", p.labels));
          w += g == run.series.end() ? 0 : g->second.value;
          k += 1;
        }
        weighted += u * w;
        weight += w;
        plain += u * k;
        count += k;
      }
      const double combined = weight > 0 ? weighted / weight : count > 0 ? plain / count : 0;
      EXPECT_TRUE(Near(combined, whole_value(key)))
          << key << ": shards recombine to " << combined << " vs " << whole_value(key);
    }
    for (const auto& [node, in] : node_shards)
      EXPECT_EQ(in.size(), 1u) << "node " << node << " appears in " << in.size() << " shards";
  }
}

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(FixturePath("scenarios")))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryScenario, ShardInvariants, ::testing::ValuesIn(ScenarioNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace gpuattr::testing
