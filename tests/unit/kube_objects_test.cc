#include "gpuattr/kube/objects.h"

#include <gtest/gtest.h>

namespace gpuattr::kube {
namespace {

TEST(Objects, ExtendedResources) {
  EXPECT_TRUE(IsExtendedResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsExtendedResource("nvidia.com/mig-1g.10gb"));
  EXPECT_TRUE(IsExtendedResource("nvidia.com/gpu.shared"));
  EXPECT_FALSE(IsExtendedResource("cpu"));
  EXPECT_FALSE(IsExtendedResource("memory"));
  EXPECT_FALSE(IsExtendedResource("ephemeral-storage"));
  EXPECT_FALSE(IsExtendedResource("pods"));
  EXPECT_FALSE(IsExtendedResource("hugepages-2Mi"));
}

TEST(Objects, FindByNamespaceAndName) {
  ClusterObjects objs;
  Pod p;
  p.namespace_ = "ml";
  p.name = "trainer";
  objs.pods[p.Key()] = p;
  Node n;
  n.name = "gpu-1";
  objs.nodes[n.Key()] = n;
  Service s;
  s.namespace_ = "monitoring";
  s.name = "prometheus";
  objs.services[s.Key()] = s;

  ASSERT_NE(objs.FindPod("ml", "trainer"), nullptr);
  EXPECT_EQ(objs.FindPod("ml", "trainer")->name, "trainer");
  EXPECT_EQ(objs.FindPod("other", "trainer"), nullptr);
  EXPECT_NE(objs.FindNode("gpu-1"), nullptr);
  EXPECT_EQ(objs.FindNode("gpu-2"), nullptr);
  EXPECT_NE(objs.FindService("monitoring", "prometheus"), nullptr);
  EXPECT_EQ(objs.FindService("monitoring", "grafana"), nullptr);
}

TEST(Objects, SidecarIsAnInitContainerThatRestartsAlways) {
  Container c;
  EXPECT_FALSE(c.IsSidecar());
  c.restart_policy = "Always";
  EXPECT_TRUE(c.IsSidecar());
}

}  // namespace
}  // namespace gpuattr::kube
