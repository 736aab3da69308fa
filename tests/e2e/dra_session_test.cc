// DRA end to end: the kube session against the fake apiserver serving fixtures/scenarios/dra over
// TLS on 127.0.0.1. ResourceSlices and ResourceClaims reach the session's ClusterObjects at the
// best version served, their holders become tier-3 candidate pods, and a cluster without DRA (or
// forbidding it) costs no error and no request loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "gpuattr/allocation/types.h"
#include "gpuattr/app/kube_session.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/session_harness.h"

namespace gpuattr::discovery {
namespace {

using app::KubeClusterSession;
using app::KubeSessionOptions;

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::seconds;
using testing::FakeApiServer;
using ::testing::HasSubstr;
using testing::Scenario;

constexpr char kDraPrefix[] = "/apis/resource.k8s.io";
constexpr char kGpu0Uuid[] = "GPU-5e1f0a3c-9b7d-4c2e-8a6f-0d1e2f3a4b50";
constexpr char kGpu1Uuid[] = "GPU-5e1f0a3c-9b7d-4c2e-8a6f-0d1e2f3a4b51";
constexpr char kMigCardUuid[] = "GPU-5e1f0a3c-9b7d-4c2e-8a6f-0d1e2f3a4b52";

Scenario LoadDra() {
  auto sc = testing::LoadScenario(testing::FixturePath("scenarios/dra"));
  EXPECT_TRUE(sc.ok()) << sc.error().message;
  return sc.ok() ? std::move(*sc) : Scenario{};
}

// The dra scenario's objects rewritten in resource.k8s.io/v1beta1 shape: device attributes and
// capacity under `basic`, requests' deviceClassName/allocationMode/count inline.
void ToV1beta1(Scenario& sc) {
  for (json& o : sc.objects) {
    const std::string kind = o.value("kind", "");
    if (kind == "ResourceSlice") {
      for (json& d : o["spec"]["devices"]) {
        json basic = json::object();
        for (const char* key : {"attributes", "capacity"}) {
          if (d.contains(key)) {
            basic[key] = d[key];
            d.erase(key);
          }
        }
        d["basic"] = basic;
      }
    } else if (kind == "ResourceClaim") {
      for (json& r : o["spec"]["devices"]["requests"]) {
        for (auto& [key, value] : r["exactly"].items()) r[key] = value;
        r.erase("exactly");
      }
    }
    if (kind == "ResourceSlice" || kind == "ResourceClaim")
      o["apiVersion"] = "resource.k8s.io/v1beta1";
  }
  sc.dra_versions = {"v1beta1"};
}

struct Harness : testing::SessionHarness {
  // `real_api_clock`: the client (and the informers' waits) on the system clock, so that a long
  // wait (the 10-minute retry after a 403) really waits instead of returning at once.
  ::testing::AssertionResult Start(Scenario sc, bool real_api_clock = false) {
    KubeSessionOptions options;
    options.cache.services = false;
    return SessionHarness::Start(std::move(sc), std::move(options), real_api_clock);
  }

  size_t DraRequests() const { return server->CountRequests("", kDraPrefix); }
};

std::string Errors(const model::CycleResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

const attribution::Device* FindDevice(const attribution::Attribution& a, const std::string& gpu,
                                      std::optional<std::string> instance) {
  for (const auto& d : a.devices)
    if (d.id.gpu == gpu && d.id.gpu_instance == instance) return &d;
  return nullptr;
}

std::vector<kube::PodId> Pods(std::initializer_list<std::pair<const char*, const char*>> l) {
  std::vector<kube::PodId> out;
  for (const auto& [ns, name] : l) out.push_back({ns, name});
  return out;
}

size_t GpuPodsOf(const attribution::Attribution& a, const std::string& ns) {
  for (const auto& n : a.namespaces)
    if (n.name == ns) return n.gpu_pods;
  return 0;
}

// The objects of the dra scenario, whatever version they were read at.
void ExpectDraObjects(const kube::ClusterObjects& objects) {
  ASSERT_EQ(objects.resource_slices.size(), 1u);
  const kube::ResourceSlice& slice = objects.resource_slices.begin()->second;
  EXPECT_EQ(slice.driver, "gpu.nvidia.com");
  EXPECT_EQ(slice.node_name, "dgx-a");
  ASSERT_EQ(slice.devices.size(), 4u);
  size_t migs = 0;
  for (const auto& d : slice.devices) {
    if (d.type != "mig") continue;
    ++migs;
    EXPECT_EQ(d.parent_uuid, kMigCardUuid);
    EXPECT_EQ(d.profile, "3g.40gb");
    EXPECT_EQ(d.memory_bytes, int64_t{40} << 30);
  }
  EXPECT_EQ(migs, 2u);
  EXPECT_EQ(slice.devices[0].uuid, kGpu0Uuid);
  EXPECT_EQ(slice.devices[1].uuid, kGpu1Uuid);
  ASSERT_EQ(objects.resource_claims.size(), 3u);
  const kube::ResourceClaim& llm = objects.resource_claims.at("ml/llm-dra-0-gpu-7kq2x");
  EXPECT_TRUE(llm.allocated);
  ASSERT_EQ(llm.results.size(), 1u);
  EXPECT_EQ(llm.results[0].device, "gpu-0");
  ASSERT_EQ(llm.reserved_for.size(), 1u);
  EXPECT_EQ(llm.reserved_for[0].name, "llm-dra-0");
  const kube::ResourceClaim& eight = objects.resource_claims.at("ml/eight-gpus");
  EXPECT_FALSE(eight.allocated);
  ASSERT_EQ(eight.requests.size(), 1u);
  EXPECT_EQ(eight.requests[0].device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(eight.requests[0].count, 8);
  EXPECT_EQ(objects.resource_claims.at("research/notebook-mig-slice").results.at(0).device,
            "gpu-2-mig-3g40gb-0");
}

TEST(DraSession, ClaimsNameTheCandidatePodsOfDevicesWithoutPodLabels) {
  Harness h;
  ASSERT_TRUE(h.Start(LoadDra()));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up) << Errors(r);
  EXPECT_EQ(Errors(r), "");
  EXPECT_TRUE(r.notes.empty());
  auto input = h.LastInput();
  ExpectDraObjects(*input->objects);  // the first cycle already sees DRA
  for (const auto& d : h.session->object_cache().DraStatuses()) {
    EXPECT_EQ(d.state, kube::DraState::kWatching) << d.resource;
    EXPECT_EQ(d.version, "v1") << d.resource;
    EXPECT_TRUE(d.synced) << d.resource;
  }

  ASSERT_NE(r.output, nullptr);
  const attribution::Attribution& a = r.output->attribution;
  const auto* gpu0 = FindDevice(a, "0", std::nullopt);
  ASSERT_NE(gpu0, nullptr);
  EXPECT_EQ(gpu0->tier, attribution::Tier::kDcgmNoPod);
  EXPECT_FALSE(gpu0->pods.has_value());  // never guessed
  EXPECT_EQ(gpu0->candidate_pods, Pods({{"ml", "llm-dra-0"}}));
  const auto* gpu1 = FindDevice(a, "1", std::nullopt);
  ASSERT_NE(gpu1, nullptr);
  EXPECT_TRUE(gpu1->candidate_pods.empty());  // DRA knows it, and nobody holds it
  for (const char* instance : {"1", "2"}) {
    const auto* slice = FindDevice(a, "2", std::string(instance));
    ASSERT_NE(slice, nullptr) << instance;
    EXPECT_EQ(slice->uuid, kMigCardUuid);
    EXPECT_EQ(slice->candidate_pods, Pods({{"research", "notebook-mig"}})) << instance;
  }
  EXPECT_TRUE(a.pods.empty());        // no owner guessed: power stays unattributed
  EXPECT_EQ(GpuPodsOf(a, "ml"), 1u);  // llm-dra-0; big-train is Pending and unbound
  EXPECT_EQ(GpuPodsOf(a, "research"), 1u);

  // Holding a DRA GPU makes the serving pod an inference target.
  bool llm_probed = false;
  for (const auto& p : r.discovery->probes) {
    if (p.candidate.pod != "llm-dra-0") continue;
    llm_probed = true;
    EXPECT_THAT(p.candidate.why,
                HasSubstr("holds a DRA GPU device (claim ml/llm-dra-0-gpu-7kq2x)"));
  }
  EXPECT_TRUE(llm_probed);

  // DRA through the decoder, the cache and the allocation stage together: the
  // node's 4 DRA devices, 2 of them held, and the 8-GPU claim hinted.
  ASSERT_NE(r.output, nullptr);
  const allocation::Allocation& alloc = r.output->allocation;
  ASSERT_EQ(alloc.nodes.size(), 1u);
  EXPECT_EQ(alloc.nodes[0].node, "dgx-a");
  EXPECT_EQ(alloc.nodes[0].capacity, 4);
  EXPECT_EQ(alloc.nodes[0].requested, 2);
  ASSERT_EQ(alloc.pending.size(), 1u);
  EXPECT_EQ(alloc.pending[0].pod, (kube::PodId{"ml", "big-train"}));
  EXPECT_EQ(alloc.pending[0].hint.code, "dra_exceeds_node_max");
  EXPECT_EQ(alloc.pending[0].hint.text,
            "Needs 8 gpu on one node (claim eight-gpus); the most any node offers is 2.");

  // Steady state: the watches carry on, no further LIST of anything.
  const size_t lists = h.server->CountRequests("list");
  EXPECT_EQ(h.server->CountRequests("list", std::string(kDraPrefix) + "/v1/resourceslices"), 1u);
  EXPECT_EQ(h.server->CountRequests("list", std::string(kDraPrefix) + "/v1/resourceclaims"), 1u);
  for (int i = 0; i < 3; ++i) {
    model::CycleResult again = h.session->RunCycle();
    EXPECT_TRUE(again.up) << Errors(again);
  }
  EXPECT_EQ(h.server->CountRequests("list"), lists);
}

TEST(DraSession, ClaimChangesArriveByWatch) {
  Harness h;
  ASSERT_TRUE(h.Start(LoadDra()));
  ASSERT_TRUE(h.session->RunCycle().up);
  const size_t lists = h.server->CountRequests("list");
  ASSERT_TRUE(h.server->Delete("resourceclaims", "research", "notebook-mig-slice").ok());
  bool gone = false;
  for (int i = 0; i < 400 && !gone; ++i) {  // bounded: up to ~10 s
    gone = h.session->object_cache().Snapshot()->resource_claims.count(
               "research/notebook-mig-slice") == 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(gone);
  model::CycleResult r = h.session->RunCycle();
  ASSERT_NE(r.output, nullptr);
  const auto* slice = FindDevice(r.output->attribution, "2", std::string("1"));
  ASSERT_NE(slice, nullptr);
  EXPECT_TRUE(slice->candidate_pods.empty());  // DRA still knows the card: its slices are free
  EXPECT_EQ(h.server->CountRequests("list"), lists);
}

TEST(DraSession, ReadsV1beta1BodiesWhenOnlyV1beta1IsServed) {
  Scenario sc = LoadDra();
  ToV1beta1(sc);
  Harness h;
  ASSERT_TRUE(h.Start(std::move(sc)));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up) << Errors(r);
  EXPECT_EQ(Errors(r), "");
  ExpectDraObjects(*h.LastInput()->objects);
  for (const auto& d : h.session->object_cache().DraStatuses()) EXPECT_EQ(d.version, "v1beta1");
  // One discovery GET chose the version: no LIST was wasted on v1 or v1beta2.
  EXPECT_EQ(h.server->CountRequests("", std::string(kDraPrefix) + "/v1/"), 0u);
  EXPECT_EQ(h.server->CountRequests("", std::string(kDraPrefix) + "/v1beta2/"), 0u);
  ASSERT_NE(r.output, nullptr);
  EXPECT_EQ(FindDevice(r.output->attribution, "0", std::nullopt)->candidate_pods,
            Pods({{"ml", "llm-dra-0"}}));
}

TEST(DraSession, MovesToTheNextVersionOnlyOn404) {
  Scenario sc = LoadDra();
  sc.dra_versions = {"v1", "v1beta2"};
  // v1 is listed by discovery but its LISTs answer 404 (as an apiserver without that storage).
  testing::FaultRule not_served;
  not_served.path_prefix = std::string(kDraPrefix) + "/v1/";
  not_served.status = 404;
  sc.faults.push_back(not_served);
  Harness h;
  ASSERT_TRUE(h.Start(std::move(sc)));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up) << Errors(r);
  EXPECT_EQ(Errors(r), "");  // a 404 on the way is no error
  ExpectDraObjects(*h.LastInput()->objects);
  for (const auto& d : h.session->object_cache().DraStatuses()) {
    EXPECT_EQ(d.state, kube::DraState::kWatching);
    EXPECT_EQ(d.version, "v1beta2");
  }
  EXPECT_EQ(h.server->CountRequests("list", std::string(kDraPrefix) + "/v1/"), 2u);  // one a kind
}

TEST(DraSession, NoDraGroupIsSkippedQuietly) {
  Scenario sc = LoadDra();
  sc.dra_versions.clear();  // the group is not served: every resource.k8s.io path is 404
  Harness h;
  ASSERT_TRUE(h.Start(std::move(sc)));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up) << Errors(r);
  EXPECT_EQ(Errors(r), "");
  EXPECT_TRUE(r.notes.empty());
  const size_t after_first = h.DraRequests();
  EXPECT_EQ(after_first, 1u);  // the group's discovery document, once for both kinds
  for (int i = 0; i < 4; ++i) {
    model::CycleResult again = h.session->RunCycle();
    EXPECT_TRUE(again.up) << Errors(again);
    EXPECT_EQ(Errors(again), "");
    EXPECT_TRUE(again.notes.empty());
  }
  EXPECT_EQ(h.DraRequests(), after_first);  // no retries
  EXPECT_EQ(h.server->CountRequests("list", kDraPrefix), 0u);
  for (const auto& d : h.session->object_cache().DraStatuses())
    EXPECT_EQ(d.state, kube::DraState::kAbsent) << d.resource;
  auto objects = h.session->object_cache().Snapshot();
  EXPECT_TRUE(objects->resource_slices.empty());
  EXPECT_TRUE(objects->resource_claims.empty());
}

TEST(DraSession, ForbiddenClaimsGiveOneNoteNotAnErrorLoop) {
  Scenario sc = LoadDra();
  testing::FaultRule forbidden;
  forbidden.path_prefix = std::string(kDraPrefix) + "/v1/resourceclaims";
  forbidden.status = 403;
  sc.faults.push_back(forbidden);
  Harness h;
  ASSERT_TRUE(h.Start(std::move(sc), /*real_api_clock=*/true));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up) << Errors(r);  // DRA is optional: the cluster stays up
  EXPECT_EQ(Errors(r), "");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_THAT(r.notes[0], HasSubstr("cannot list resource \"resourceclaims\""));
  EXPECT_THAT(r.notes[0], HasSubstr("config/kubernetes/clusterrole.yaml"));
  EXPECT_THAT(r.notes[0], HasSubstr("gpuattr-reader"));
  for (int i = 0; i < 4; ++i) {
    model::CycleResult again = h.session->RunCycle();
    EXPECT_TRUE(again.up);
    EXPECT_EQ(Errors(again), "");
    EXPECT_EQ(again.notes, r.notes);  // the same single note, not one more per cycle
  }
  // One LIST of claims, no retry loop (the next try is 10 minutes away); slices are watched.
  EXPECT_EQ(h.server->CountRequests("", std::string(kDraPrefix) + "/v1/resourceclaims"), 1u);
  EXPECT_EQ(h.server->CountRequests("list", std::string(kDraPrefix) + "/v1/resourceslices"), 1u);
  auto objects = h.session->object_cache().Snapshot();
  EXPECT_EQ(objects->resource_slices.size(), 1u);
  EXPECT_TRUE(objects->resource_claims.empty());
  for (const auto& d : h.session->object_cache().DraStatuses()) {
    if (d.resource == "resourceclaims") {
      EXPECT_EQ(d.state, kube::DraState::kForbidden);
    } else {
      EXPECT_EQ(d.state, kube::DraState::kWatching);
    }
  }
}

}  // namespace
}  // namespace gpuattr::discovery
