// The readers against real exporter captures in ../shared/fixtures-real (skipped when absent).
// Expected numbers come from that folder's README and the files themselves, in base units.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/process.h"
#include "support/paths.h"
#include "support/readings_format.h"

namespace gpuattr::sources {
namespace {

namespace fs = std::filesystem;
using gpuattr::testing::ReadFile;
using gpuattr::testing::RealFixturesDir;

constexpr double kMiB = 1048576.0;

struct Real {
  std::string body;
  expo::Exposition exposition;
  Classification classification;
};

// Loads a real capture, or nullopt (the caller skips) when the folder or file is absent.
std::optional<Real> Load(const std::string& name) {
  auto dir = RealFixturesDir();
  if (!dir || !fs::exists(*dir / name)) return std::nullopt;
  Real r;
  r.body = ReadFile(*dir / name);
  expo::Parse(r.body, r.exposition);
  r.classification = ClassifyBody(r.body);
  return r;
}

#define LOAD_OR_SKIP(var, name)                               \
  auto var##_opt = Load(name);                                \
  if (!var##_opt) GTEST_SKIP() << "no real fixture " << name; \
  Real& var = *var##_opt

const DcgmRecord* Find(const DcgmReadings& r, std::string_view gpu,
                       std::optional<std::string_view> instance = std::nullopt) {
  for (const DcgmRecord& rec : r.records) {
    if (rec.device.gpu != gpu) continue;
    if (instance.has_value() != rec.device.gpu_instance.has_value()) continue;
    if (instance && *rec.device.gpu_instance != *instance) continue;
    return &rec;
  }
  return nullptr;
}

TEST(SourcesRealFixtures, EveryFileReadsWithoutCrashAndIsClassified) {
  auto dir = RealFixturesDir();
  if (!dir) GTEST_SKIP() << "no ../shared/fixtures-real";
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(*dir)) {
    if (entry.path().extension() != ".prom") continue;
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string body = ReadFile(entry.path());
    expo::Exposition e;
    expo::Parse(body, e);
    // Every reader copes with every body, whatever it is.
    EXPECT_GT(e.samples.size(), 0u);  // lines damaged by a reporter's markup cost only themselves
    DcgmReadings d = ReadDcgm(e);
    ProcessReadings p = ReadProcess(e);
    InferenceReadings i = ReadInference(e);
    EXPECT_EQ(d.stats.samples, e.samples.size());
    EXPECT_EQ(p.stats.samples, e.samples.size());
    EXPECT_EQ(i.stats.samples, e.samples.size());
    const Classification c = ClassifyBody(body);
    EXPECT_NE(c.kind, BodyKind::kUnrecognised) << c.reason;
    const std::string name = entry.path().filename().string();
    if (name.starts_with("dcgm") || name.starts_with("gpu-operator")) {
      EXPECT_EQ(c.kind, BodyKind::kDcgm);
      EXPECT_FALSE(d.records.empty());
    }
  }
  EXPECT_GE(files, 1u);
}

// A paste's markup (code fences, a cut marker, a cut-off line) costs only the damaged lines.
TEST(SourcesRealFixtures, ReporterMarkupKeepsTheGoodLines) {
  auto dir = RealFixturesDir();
  if (!dir) GTEST_SKIP() << "no ../shared/fixtures-real";
  auto readings_without_lines = [](std::string_view body) {
    expo::Exposition e;
    expo::Parse(body, e);
    DcgmReadings r = ReadDcgm(e);
    for (DcgmRecord& rec : r.records) rec.first_line = 0;
    return std::pair{FormatReadings(r), e.error_count};
  };
  for (const auto& entry : fs::directory_iterator(*dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("dcgm")) continue;
    SCOPED_TRACE(name);
    const std::string body = ReadFile(entry.path());
    const size_t mid = body.find('\n', body.size() / 2);
    ASSERT_NE(mid, std::string::npos);
    const std::string pasted = "```\n" + body.substr(0, mid + 1) + "[... 40 lines cut ...]\n" +
                               body.substr(mid + 1) + "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UU\n```\n";
    auto [clean, clean_errors] = readings_without_lines(body);
    auto [damaged, damaged_errors] = readings_without_lines(pasted);
    EXPECT_EQ(damaged, clean);
    EXPECT_GE(damaged_errors, clean_errors + 3);
  }
}

TEST(SourcesRealFixtures, DcgmPodLabels) {
  LOAD_OR_SKIP(f, "dcgm_pod_labels.prom");
  EXPECT_EQ(f.classification.kind, BodyKind::kDcgm);
  EXPECT_EQ(f.exposition.error_count, 0u);
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 4u);
  const DcgmRecord* g0 = Find(r, "0");
  ASSERT_NE(g0, nullptr);
  EXPECT_EQ(g0->device.uuid, "GPU-aaaa");
  EXPECT_EQ(g0->device.hostname, "node-a");
  EXPECT_EQ(g0->device.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0->device.device, "nvidia0");
  EXPECT_DOUBLE_EQ(*g0->values.gpu_util, 0.87);
  EXPECT_DOUBLE_EQ(*g0->values.temperature_celsius, 71);
  EXPECT_DOUBLE_EQ(*g0->values.power_watts, 310.5);
  EXPECT_DOUBLE_EQ(*g0->values.memory_used_bytes, 70000 * kMiB);
  EXPECT_DOUBLE_EQ(*g0->values.memory_free_bytes, 11000 * kMiB);
  for (std::string_view gpu : {"0", "1"}) {
    const DcgmRecord* g = Find(r, gpu);
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(g->pod.has_value());
    EXPECT_EQ(g->pod->id.namespace_, "ml");
    EXPECT_EQ(g->pod->id.name, "vllm-0");
    EXPECT_EQ(g->pod->container, "vllm");
  }
  EXPECT_DOUBLE_EQ(*Find(r, "1")->values.power_watts, 200.5);
  EXPECT_DOUBLE_EQ(*Find(r, "1")->values.gpu_util, 0.43);
  const DcgmRecord* g2 = Find(r, "2");
  ASSERT_TRUE(g2->pod.has_value());
  EXPECT_EQ(g2->pod->id.namespace_, "embeddings");
  EXPECT_EQ(g2->pod->id.name, "tei-7d9f-x1");
  EXPECT_DOUBLE_EQ(*g2->values.gpu_util, 0.12);
  EXPECT_DOUBLE_EQ(*g2->values.memory_used_bytes, 4096 * kMiB);
  const DcgmRecord* g3 = Find(r, "3");
  EXPECT_FALSE(g3->pod.has_value());  // pod="" is no pod
  EXPECT_DOUBLE_EQ(*g3->values.power_watts, 55);
  EXPECT_DOUBLE_EQ(*g3->values.memory_used_bytes + *g3->values.memory_free_bytes, 81000 * kMiB);
  EXPECT_EQ(r.stats.samples_used, 20u);  // 5 families × 4 GPUs
}

TEST(SourcesRealFixtures, DcgmXidExtra) {
  LOAD_OR_SKIP(f, "dcgm-xid-extra.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_DOUBLE_EQ(*Find(r, "0")->values.last_xid, 0);
  EXPECT_DOUBLE_EQ(*Find(r, "2")->values.last_xid, 31);
  EXPECT_DOUBLE_EQ(*Find(r, "3")->values.last_xid, 79);
  EXPECT_FALSE(Find(r, "3")->pod.has_value());
  EXPECT_FALSE(Find(r, "0")->values.health_status.has_value());  // not exported: absent
}

TEST(SourcesRealFixtures, DcgmMig) {
  LOAD_OR_SKIP(f, "dcgm_mig.prom");
  EXPECT_EQ(f.classification.kind, BodyKind::kDcgm);
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 4u);
  struct Slice {
    const char* gpu;
    const char* id;
    const char* profile;
    const char* pod;
    double util;
    double used_mib;
    double free_mib;
  };
  const Slice slices[] = {{"0", "7", "1g.10gb", "transcription-0", 0.42, 6000, 3700},
                          {"0", "8", "1g.10gb", "transcription-1", 0.05, 5900, 3800},
                          {"0", "9", "1g.10gb", "ocr-0", 0.9, 9000, 700},
                          {"1", "1", "3g.40gb", "vllm-0", 0.77, 38000, 2000}};
  for (const Slice& s : slices) {
    SCOPED_TRACE(std::string(s.gpu) + ":" + s.id);
    const DcgmRecord* rec = Find(r, s.gpu, s.id);
    ASSERT_NE(rec, nullptr);
    EXPECT_EQ(rec->device.mig_profile, s.profile);
    ASSERT_TRUE(rec->pod.has_value());
    EXPECT_EQ(rec->pod->id.name, s.pod);
    EXPECT_FALSE(rec->values.gpu_util.has_value());  // MIG: no GPU_UTIL, PROF stands in
    EXPECT_DOUBLE_EQ(*rec->values.gr_engine_active, s.util);
    EXPECT_DOUBLE_EQ(*rec->values.memory_used_bytes, s.used_mib * kMiB);
    EXPECT_DOUBLE_EQ(*rec->values.memory_free_bytes, s.free_mib * kMiB);
  }
  EXPECT_EQ(Find(r, "0", "9")->pod->id.namespace_, "it-dgx2");
  EXPECT_EQ(Find(r, "0", "7")->device.uuid, "GPU-aaaa");  // the parent card's UUID
  EXPECT_EQ(Find(r, "0"), nullptr);                       // no whole-card line
}

TEST(SourcesRealFixtures, Enricher) {
  LOAD_OR_SKIP(f, "enricher.prom");
  EXPECT_EQ(f.classification.kind, BodyKind::kProcess);
  ProcessReadings r = ReadProcess(f.exposition);
  ASSERT_EQ(r.processes.size(), 4u);
  double vllm_bytes = 0, device0_bytes = 0;
  double vllm_max_util = 0;
  for (const ProcessReading& p : r.processes) {
    ASSERT_TRUE(p.pod.has_value());
    if (p.uuid == "GPU-aaaa") device0_bytes += *p.memory_bytes;
    if (p.pod->id.namespace_ == "ml" && p.pod->id.name == "vllm-0") {
      vllm_bytes += *p.memory_bytes;
      vllm_max_util = std::max(vllm_max_util, *p.utilization);
      EXPECT_EQ(p.gpu, "0");
    }
    if (p.pod->id.name == "tei-2") {
      EXPECT_EQ(p.gpu, "1");
      EXPECT_EQ(p.uuid, "GPU-bbbb");
    }
  }
  EXPECT_DOUBLE_EQ(vllm_bytes, 51200 * kMiB);
  EXPECT_DOUBLE_EQ(vllm_max_util, 0.6);
  EXPECT_DOUBLE_EQ(device0_bytes, 71680 * kMiB);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].uuid, "GPU-aaaa");
  EXPECT_DOUBLE_EQ(*r.devices[0].memory_total_bytes, 81920 * kMiB);
  EXPECT_DOUBLE_EQ(*r.devices[0].power_watts, 400);
  EXPECT_DOUBLE_EQ(*r.devices[1].power_watts, 100);
  EXPECT_FALSE(r.devices[0].temperature_celsius.has_value());
}

TEST(SourcesRealFixtures, VllmV1Idle) {
  LOAD_OR_SKIP(f, "vllm_v1_idle.prom");
  EXPECT_EQ(f.classification.kind, BodyKind::kVllm);
  InferenceReadings r = ReadInference(f.exposition);
  ASSERT_EQ(r.models.size(), 1u);
  const InferenceReading& m = r.models[0];
  EXPECT_EQ(m.kind, EngineKind::kVllm);
  EXPECT_EQ(m.model, "gemma-4-E4B-it");
  EXPECT_EQ(m.model_name, "/models/gemma-4-E4B-it");
  EXPECT_EQ(m.engines, 1u);
  EXPECT_DOUBLE_EQ(*m.requests_running, 0);
  EXPECT_DOUBLE_EQ(*m.requests_waiting, 0);
  EXPECT_DOUBLE_EQ(*m.kv_cache_usage, 0);
  EXPECT_DOUBLE_EQ(*m.ttft_count, 16700);
  EXPECT_NEAR(*m.ttft_seconds_sum, 1936.82, 0.01);
  EXPECT_NEAR(*m.prefix_cache_hits_total / *m.prefix_cache_queries_total, 0.524, 0.001);
  EXPECT_DOUBLE_EQ(*m.generation_tokens_total, 1.32798e+06);
  EXPECT_DOUBLE_EQ(*m.prompt_tokens_total, 5.542562e+06);
  EXPECT_DOUBLE_EQ(*m.preemptions_total, 0);
  EXPECT_DOUBLE_EQ(m.request_success_total.at("stop"), 16699);
  EXPECT_EQ(m.request_success_total.size(), 5u);
  EXPECT_GE(r.stats.ignored_families, 2u);  // waiting_by_reason, engine_sleep_state, ...
}

TEST(SourcesRealFixtures, H100NonMigKubernetes) {
  LOAD_OR_SKIP(f, "dcgm-exporter-490-h100-nonmig-k8s.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 3u);
  const DcgmRecord* g0 = Find(r, "0");
  ASSERT_TRUE(g0->pod.has_value());
  EXPECT_EQ(g0->pod->id.namespace_, "default");
  EXPECT_EQ(g0->pod->id.name, "dcgmproftester2");
  EXPECT_EQ(g0->device.pci_bus_id, "00000000:8D:00.0");
  EXPECT_EQ(g0->driver_version, "550.144.03");
  EXPECT_EQ(g0->device.hostname, "computeinstance-e00c1p6dpy98xytphp");
  EXPECT_FALSE(Find(r, "1")->pod.has_value());  // pod labels absent
  EXPECT_FALSE(Find(r, "2")->pod.has_value());
  EXPECT_DOUBLE_EQ(*Find(r, "2")->values.gpu_util, 0);
}

TEST(SourcesRealFixtures, A30MigPowerRepeated) {
  LOAD_OR_SKIP(f, "dcgm-exporter-317-a30-mig-power-repeated.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 6u);
  for (const char* id : {"3", "4", "5", "6"}) {
    const DcgmRecord* s = Find(r, "0", id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_EQ(s->device.mig_profile, "1g.6gb");
    EXPECT_NEAR(*s->values.power_watts, 52.7, 0.1);  // the card's power, repeated per slice
  }
  EXPECT_DOUBLE_EQ(*Find(r, "1", "3")->values.power_watts, 56.121);
  EXPECT_DOUBLE_EQ(*Find(r, "1", "4")->values.power_watts, 56.127);
}

TEST(SourcesRealFixtures, T4ViaGpuOperator) {
  LOAD_OR_SKIP(f, "gpu-operator-340-t4-with-pod.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 1u);
  const DcgmRecord& t4 = r.records[0];
  EXPECT_EQ(t4.device.model, "Tesla T4");
  EXPECT_EQ(t4.device.hostname, "nvidia-dcgm-exporter-ml2wh");  // the exporter pod, not a node
  ASSERT_TRUE(t4.pod.has_value());
  EXPECT_EQ(t4.pod->id.name, "dcgmproftester");
  EXPECT_DOUBLE_EQ(*t4.values.memory_free_bytes, 15109 * kMiB);
  EXPECT_DOUBLE_EQ(*t4.values.last_xid, 0);
  EXPECT_EQ(r.stats.ignored_families, 2u);  // ENC_UTIL, DEC_UTIL
}

TEST(SourcesRealFixtures, A5000NoPod) {
  LOAD_OR_SKIP(f, "dcgm-exporter-363-a5000-no-pod.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_FALSE(r.records[0].pod.has_value());
  EXPECT_DOUBLE_EQ(*r.records[0].values.gpu_util, 0);
  EXPECT_DOUBLE_EQ(*r.records[0].values.memory_used_bytes, 21383 * kMiB);
  EXPECT_EQ(r.records[0].driver_version, "550.54.15");
}

TEST(SourcesRealFixtures, MpsVirtualGpus) {
  LOAD_OR_SKIP(f, "dcgm-exporter-pr432-mps-vgpu.prom");
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 2u);  // one device line per sharing pod, kept apart
  EXPECT_EQ(r.records[0].device.uuid, r.records[1].device.uuid);
  EXPECT_EQ(r.records[0].pod->vgpu, "1");
  EXPECT_EQ(r.records[1].pod->vgpu, "3");
  EXPECT_EQ(r.records[1].pod->id.namespace_, "vllm-inference");
  EXPECT_DOUBLE_EQ(*r.records[0].values.memory_used_bytes, 15866 * kMiB);
  EXPECT_DOUBLE_EQ(*r.records[1].values.memory_used_bytes, 15866 * kMiB);
  EXPECT_TRUE(r.records[0].driver_version.empty());
}

TEST(SourcesRealFixtures, OldNamesAndOldNamespaceLabels) {
  LOAD_OR_SKIP(f, "dcgm-exporter-272-a100-mig-old-namespace.prom");
  EXPECT_EQ(f.classification.kind, BodyKind::kDcgm);
  DcgmReadings r = ReadDcgm(f.exposition);
  ASSERT_EQ(r.records.size(), 5u);
  for (const auto& [gpu, id] : {std::pair{"0", "1"}, {"0", "2"}, {"1", "1"}, {"3", "1"}}) {
    const DcgmRecord* s = Find(r, gpu, id);
    ASSERT_NE(s, nullptr) << gpu << ":" << id;
    EXPECT_FALSE(s->pod.has_value());  // empty pod_name/pod_namespace
    EXPECT_DOUBLE_EQ(*s->values.gr_engine_active, 0);
  }
  EXPECT_EQ(Find(r, "0", "2")->device.mig_profile, "4g.40gb");
  const DcgmRecord* g4 = Find(r, "4");
  ASSERT_NE(g4, nullptr);
  EXPECT_EQ(g4->device.uuid, "GPU-931446e6-0413-2864-5b76-11227dcda4ae");  // lower-case `uuid`
  ASSERT_TRUE(g4->pod.has_value());
  EXPECT_EQ(g4->pod->id.namespace_, "ai-1");
  EXPECT_EQ(g4->pod->id.name, "d85np-t6mdg");
  EXPECT_EQ(g4->pod->container, "-grpc-pod");
  EXPECT_DOUBLE_EQ(*g4->values.gr_engine_active, 0.008246);
}

}  // namespace
}  // namespace gpuattr::sources
