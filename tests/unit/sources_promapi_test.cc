// The query-API source: decoding instant-query answers, every label-repair rule, HA replica
// de-duplication and the readings per node (sources/promapi.h).
#include "gpuattr/sources/promapi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gpuattr/sources/aliases.h"

namespace gpuattr::sources {
namespace {

QuerySeries Series(LabelPairs labels, double value, double ts = 1700000000) {
  std::sort(labels.begin(), labels.end());
  return QuerySeries{std::move(labels), value, ts};
}

std::string Label(const RepairedSeries& s, std::string_view name) {
  for (const auto& [k, v] : s.labels)
    if (k == name) return v;
  return "<absent>";
}

// An exporter pod is anything named *exporter*; nodes are known for the exporter pods only.
PodLookup TestLookup() {
  PodLookup l;
  l.is_exporter = [](std::string_view, std::string_view pod) {
    return pod.find("exporter") != std::string_view::npos;
  };
  l.node_of = [](std::string_view ns, std::string_view pod) -> std::string {
    if (ns == "gpu-operator" && pod == "dcgm-exporter-abc") return "node-from-pod";
    return "";
  };
  return l;
}

RepairedSeries Repair(LabelPairs labels, double value = 1) {
  auto r = RepairSeries(Series(std::move(labels), value), TestLookup());
  EXPECT_TRUE(r.has_value());
  return r ? *r : RepairedSeries{};
}

// ---- Decoding ---------------------------------------------------------------------------------

TEST(PromApiDecode, ReadsAVectorWithSpecialValues) {
  const char body[] = R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0"},"value":[1700000000.5,"78"]},
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0"},"value":[1700000000.5,"+Inf"]},
    {"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"0"},"value":[1700000000.5,"NaN"]}]}})";
  auto d = DecodeQueryResponse(body, "query API monitoring/p:9090");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->series.size(), 3u);
  EXPECT_EQ(d->invalid_series, 0u);
  EXPECT_DOUBLE_EQ(d->series[0].value, 78);
  EXPECT_DOUBLE_EQ(d->series[0].timestamp, 1700000000.5);
  EXPECT_EQ(d->series[0].labels.front(),
            (std::pair<std::string, std::string>{"__name__", "DCGM_FI_DEV_GPU_UTIL"}));
  EXPECT_TRUE(std::isinf(d->series[1].value));
  EXPECT_TRUE(std::isnan(d->series[2].value));
}

TEST(PromApiDecode, ErrorsNameTheService) {
  const std::string src = "query API monitoring/prometheus-k8s:9090";
  for (const char* body :
       {"<html>grafana</html>", "[]",
        R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
        R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
        R"({"status":"success","data":{"resultType":"vector"}})"}) {
    auto d = DecodeQueryResponse(body, src);
    ASSERT_FALSE(d.ok()) << body;
    EXPECT_NE(d.error().message.find(src), std::string::npos) << d.error().message;
  }
  auto e = DecodeQueryResponse(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", src);
  EXPECT_NE(e.error().message.find("parse error at char 3"), std::string::npos);
}

// Members of the wrong type are errors, not exceptions: {"status": 1} once aborted the daemon
// (json::value() throws on a type mismatch; found by promapi_fuzz in CI).
TEST(PromApiDecode, WrongMemberTypesAreErrorsThatNameTheService) {
  const std::string src = "query API monitoring/prometheus-k8s:9090";
  for (const char* body : {R"({"status":1})", R"({"status":null,"error":7,"errorType":[]})",
                           R"({"status":"error","error":"boom","errorType":5})",
                           R"({"status":"success","data":{"resultType":3,"result":[]}})",
                           R"({"status":"success","data":{"resultType":{"a":1},"result":[]}})"}) {
    auto d = DecodeQueryResponse(body, src);
    ASSERT_FALSE(d.ok()) << body;
    EXPECT_NE(d.error().message.find(src), std::string::npos) << d.error().message;
  }
  auto typed = DecodeQueryResponse(R"({"status":"error","error":"boom","errorType":5})", src);
  EXPECT_NE(typed.error().message.find("error: boom"), std::string::npos) << typed.error().message;
}

// A server's words are clipped in messages (they reach the log and the status page).
TEST(PromApiDecode, ServerTextInMessagesIsClipped) {
  const std::string huge(100000, 'x');
  auto d = DecodeQueryResponse(
      R"({"status":"error","errorType":"bad_data","error":")" + huge + R"("})", "q");
  ASSERT_FALSE(d.ok());
  EXPECT_LT(d.error().message.size(), 400u) << d.error().message.size();
  EXPECT_NE(d.error().message.find("xxx..."), std::string::npos);
  auto v = DecodeQueryResponse(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"a"},"value":[1,")" +
                                   huge + R"("]}]}})",
                               "q");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->invalid_series, 1u);
  EXPECT_LT(v->first_invalid.size(), 400u);
}

TEST(PromApiDecode, SkipsAndCountsMalformedEntries) {
  const char body[] = R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"a"},"value":[1,"1"]},
    {"value":[1,"1"]},
    {"metric":{"__name__":"b"},"value":[1,"twelve"]},
    {"metric":{"__name__":"c"},"value":"1"},
    {"metric":{"__name__":"d","x":5},"value":[1,"1"]}]}})";
  auto d = DecodeQueryResponse(body, "q");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->series.size(), 1u);
  EXPECT_EQ(d->invalid_series, 4u);
  EXPECT_NE(d->first_invalid.find("result 1"), std::string::npos) << d->first_invalid;
}

// ---- Label repair -----------------------------------------------------------------------------

TEST(PromApiRepair, ExportedLabelsWinOverTheTargetsPodLabels) {
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"namespace", "gpu-operator"},
                             {"pod", "dcgm-exporter-abc"},
                             {"container", "nvidia-dcgm-exporter"},
                             {"exported_namespace", "ml"},
                             {"exported_pod", "llm-0"},
                             {"exported_container", "vllm"}});
  EXPECT_EQ(r.name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(Label(r, "namespace"), "ml");
  EXPECT_EQ(Label(r, "pod"), "llm-0");
  EXPECT_EQ(Label(r, "container"), "vllm");
  EXPECT_EQ(Label(r, "exported_pod"), "<absent>");
  EXPECT_EQ(Label(r, "__name__"), "<absent>");
}

TEST(PromApiRepair, WithExportedPodTheTargetsContainerDoesNotStay) {
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"namespace", "gpu-operator"},
                             {"pod", "dcgm-exporter-abc"},
                             {"container", "nvidia-dcgm-exporter"},
                             {"exported_namespace", "ml"},
                             {"exported_pod", "llm-0"}});
  EXPECT_EQ(Label(r, "pod"), "llm-0");
  EXPECT_EQ(Label(r, "container"), "<absent>");
}

TEST(PromApiRepair, ASeriesWhosePodIsTheExporterItselfIsUnattributed) {
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "3"},
                             {"namespace", "gpu-operator"},
                             {"pod", "dcgm-exporter-abc"},
                             {"container", "nvidia-dcgm-exporter"}});
  EXPECT_EQ(Label(r, "namespace"), "<absent>");
  EXPECT_EQ(Label(r, "pod"), "<absent>");
  EXPECT_EQ(Label(r, "container"), "<absent>");
  EXPECT_EQ(Label(r, "gpu"), "3");
}

TEST(PromApiRepair, AWorkloadPodLabelIsKept) {
  // honorLabels: true keeps dcgm-exporter's own pod label, which names the workload.
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"namespace", "ml"},
                             {"pod", "llm-0"},
                             {"container", "vllm"}});
  EXPECT_EQ(Label(r, "namespace"), "ml");
  EXPECT_EQ(Label(r, "pod"), "llm-0");
  EXPECT_EQ(Label(r, "container"), "vllm");
}

TEST(PromApiRepair, PodNameSpellingMeansPodIsTheScrapeTarget) {
  // dcgm-exporter -o: the workload is pod_name/pod_namespace; `pod` is whatever was scraped.
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"namespace", "monitoring"},
                             {"pod", "telemetry-7f9"},
                             {"pod_namespace", "ml"},
                             {"pod_name", "llm-0"}});
  EXPECT_EQ(Label(r, "pod"), "<absent>");
  EXPECT_EQ(Label(r, "namespace"), "<absent>");
  EXPECT_EQ(Label(r, "pod_name"), "llm-0");
  EXPECT_EQ(Label(r, "pod_namespace"), "ml");
}

TEST(PromApiRepair, DropsPrometheusTargetAndReplicaLabels) {
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"UUID", "GPU-1"},
                             {"instance", "10.0.0.1:9400"},
                             {"job", "dcgm"},
                             {"endpoint", "gpu-metrics"},
                             {"service", "dcgm-exporter"},
                             {"prometheus", "monitoring/k8s"},
                             {"prometheus_replica", "prometheus-k8s-0"},
                             {"__replica__", "b"}});
  LabelPairs expected = {{"UUID", "GPU-1"}, {"gpu", "0"}};
  EXPECT_EQ(r.labels, expected);
  for (const char* n : {"instance", "job", "endpoint", "service", "prometheus",
                        "prometheus_replica", "__replica__"})
    EXPECT_TRUE(IsDroppedTargetLabel(n)) << n;
  EXPECT_FALSE(IsDroppedTargetLabel("gpu"));
}

TEST(PromApiRepair, NodeComesFromNodeLabelsInOrder) {
  const LabelPairs base = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                           {"gpu", "0"},
                           {"Hostname", "host-label"},
                           {"namespace", "gpu-operator"},
                           {"pod", "dcgm-exporter-abc"}};
  auto with = [&](LabelPairs extra) {
    LabelPairs l = base;
    l.insert(l.end(), extra.begin(), extra.end());
    return Repair(l);
  };
  EXPECT_EQ(with({{"node", "n1"}, {"kubernetes_node", "n2"}, {"nodename", "n3"}}).node, "n1");
  EXPECT_EQ(with({{"kubernetes_node", "n2"}, {"nodename", "n3"}}).node, "n2");
  EXPECT_EQ(with({{"nodename", "n3"}}).node, "n3");
  RepairedSeries r = with({{"node", "n1"}, {"kubernetes_node", "n2"}});
  EXPECT_EQ(Label(r, "node"), "<absent>");  // consumed, not part of the identity
  EXPECT_EQ(Label(r, "kubernetes_node"), "<absent>");
  // No node label: the scraped exporter pod's node, when the cluster knows the pod.
  EXPECT_EQ(with({}).node, "node-from-pod");
}

TEST(PromApiRepair, NodeFallsBackToHostnameLabels) {
  // The exporter pod is unknown to the cluster objects: Hostname, then hostname.
  EXPECT_EQ(Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                    {"gpu", "0"},
                    {"Hostname", "h1"},
                    {"hostname", "h2"},
                    {"pod", "other-exporter"}})
                .node,
            "h1");
  EXPECT_EQ(Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", "0"}, {"hostname", "h2"}}).node,
            "h2");
  RepairedSeries none = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", "0"}});
  EXPECT_EQ(none.node, "");
}

TEST(PromApiRepair, EmptyLabelsAreAbsentAndNamelessSeriesAreRejected) {
  RepairedSeries r = Repair({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                             {"gpu", "0"},
                             {"exported_pod", ""},
                             {"pod", "llm-0"},
                             {"namespace", "ml"}});
  EXPECT_EQ(Label(r, "pod"), "llm-0");  // an empty exported_pod does not win
  EXPECT_FALSE(RepairSeries(Series({{"gpu", "0"}}, 1), TestLookup()).has_value());
}

// ---- De-duplication ---------------------------------------------------------------------------

TEST(PromApiDedup, HaReplicasBecomeOneSeriesAndTheFreshestValueWins) {
  std::vector<RepairedSeries> s;
  for (auto [replica, ts, v] : {std::tuple{"prometheus-k8s-0", 100.0, 250.0},
                                std::tuple{"prometheus-k8s-1", 103.5, 260.0}}) {
    auto r = RepairSeries(Series({{"__name__", "DCGM_FI_DEV_POWER_USAGE"},
                                  {"gpu", "0"},
                                  {"instance", "10.0.0.1:9400"},
                                  {"prometheus_replica", replica}},
                                 v, ts),
                          TestLookup());
    ASSERT_TRUE(r);
    s.push_back(*r);
  }
  auto other = RepairSeries(Series({{"__name__", "DCGM_FI_DEV_POWER_USAGE"}, {"gpu", "1"}}, 70, 90),
                            TestLookup());
  s.push_back(*other);
  EXPECT_EQ(DeduplicateReplicas(s), 1u);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(Label(s[0], "gpu"), "0");
  EXPECT_DOUBLE_EQ(s[0].value, 260);
  EXPECT_DOUBLE_EQ(s[0].timestamp, 103.5);
  EXPECT_EQ(Label(s[1], "gpu"), "1");
}

TEST(PromApiDedup, EqualTimestampsKeepTheFirstAndDifferentSeriesStay) {
  auto make = [](std::string gpu, std::string replica, double v) {
    return *RepairSeries(
        Series({{"__name__", "DCGM_FI_DEV_FB_USED"}, {"gpu", gpu}, {"__replica__", replica}}, v, 5),
        TestLookup());
  };
  std::vector<RepairedSeries> s = {make("0", "a", 1), make("0", "b", 2), make("1", "a", 3),
                                   make("1", "b", 3)};
  EXPECT_EQ(DeduplicateReplicas(s), 2u);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].value, 1);
  EXPECT_DOUBLE_EQ(s[1].value, 3);
  std::vector<RepairedSeries> distinct = {make("0", "a", 1), make("1", "a", 1)};
  EXPECT_EQ(DeduplicateReplicas(distinct), 0u);
  EXPECT_EQ(distinct.size(), 2u);
}

// ---- Readings ---------------------------------------------------------------------------------

TEST(PromApiRead, GroupsByNodeAndReadsThroughTheExporterReaders) {
  std::vector<RepairedSeries> s;
  auto add = [&](LabelPairs l, double v) {
    auto r = RepairSeries(Series(std::move(l), v), TestLookup());
    ASSERT_TRUE(r);
    s.push_back(*r);
  };
  add({{"__name__", "DCGM_FI_DEV_FB_USED"},
       {"gpu", "0"},
       {"UUID", "GPU-a"},
       {"node", "n1"},
       {"exported_namespace", "ml"},
       {"exported_pod", "llm-0"},
       {"pod", "dcgm-exporter-abc"}},
      1024);
  add({{"__name__", "DCGM_FI_DEV_POWER_USAGE"}, {"gpu", "0"}, {"UUID", "GPU-a"}, {"node", "n1"}},
      300);
  add({{"__name__", "DCGM_FI_DEV_POWER_USAGE"}, {"gpu", "0"}, {"UUID", "GPU-b"}, {"node", "n2"}},
      200);
  add({{"__name__", "gpu_process_memory_bytes"},
       {"uuid", "GPU-b"},
       {"gpu", "0"},
       {"pid", "42"},
       {"node", "n2"},
       {"exported_namespace", "web"},
       {"exported_pod", "api-1"},
       {"pod", "gpu-process-exporter-x"}},
      2048);
  add({{"__name__", "go_goroutines"}, {"node", "n1"}}, 12);  // not a needed family: ignored

  std::vector<PromNodeReadings> r = ReadPromSeries(s);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].node, "n1");
  ASSERT_TRUE(r[0].dcgm);
  EXPECT_FALSE(r[0].process);
  // FB_USED (MiB → bytes, via the alias table) with the pod, and POWER without: two identities.
  ASSERT_EQ(r[0].dcgm->records.size(), 2u);
  const DcgmRecord& with_pod = r[0].dcgm->records[0];
  ASSERT_TRUE(with_pod.pod);
  EXPECT_EQ(with_pod.pod->id.namespace_, "ml");
  EXPECT_EQ(with_pod.pod->id.name, "llm-0");
  EXPECT_DOUBLE_EQ(*with_pod.values.memory_used_bytes, 1024.0 * 1048576);
  EXPECT_FALSE(r[0].dcgm->records[1].pod);
  EXPECT_DOUBLE_EQ(*r[0].dcgm->records[1].values.power_watts, 300);

  EXPECT_EQ(r[1].node, "n2");
  ASSERT_TRUE(r[1].dcgm);
  ASSERT_TRUE(r[1].process);
  ASSERT_EQ(r[1].process->processes.size(), 1u);
  ASSERT_TRUE(r[1].process->processes[0].pod);
  EXPECT_EQ(r[1].process->processes[0].pod->id.name, "api-1");
  EXPECT_DOUBLE_EQ(*r[1].process->processes[0].memory_bytes, 2048);
}

TEST(PromApiQueries, SelectNeededFamiliesFromTheAliasTable) {
  std::vector<std::string> families = NeededFamilies();
  for (const DcgmFieldAlias& a : DcgmFieldAliases())
    EXPECT_TRUE(std::binary_search(families.begin(), families.end(), std::string(a.name)))
        << a.name;
  for (const ProcessMetricAlias& a : ProcessMetricAliases())
    EXPECT_TRUE(std::binary_search(families.begin(), families.end(), std::string(a.name)))
        << a.name;
  const std::string sel = NeededFamiliesSelector();
  EXPECT_TRUE(sel.starts_with("{__name__=~\"")) << sel;
  EXPECT_NE(sel.find("|DCGM_FI_DEV_POWER_USAGE|"), std::string::npos);
  EXPECT_NE(sel.find("gpu_process_memory_bytes"), std::string::npos);
  EXPECT_EQ(ProbeQuery(), "count by (__name__) (" + sel + ")");
  EXPECT_EQ(DataQuery(), sel);
}

}  // namespace
}  // namespace gpuattr::sources
