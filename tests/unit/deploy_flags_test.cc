// The manifests promise flags; the binary must deliver exactly them: the args of the base
// Deployment and of the sharded StatefulSet (read straight from the YAML, no kubectl needed), with
// $(VAR) references expanded as the kubelet expands them, load as a valid configuration with the
// meaning docs/deploy.md gives them.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>

#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"
#include "support/paths.h"

namespace gpuattr::app {
namespace {

// The first container's args with $(NAME) replaced from `env` (the downward API's values).
std::vector<std::string> Args(const std::string& manifest,
                              const std::map<std::string, std::string>& env) {
  YAML::Node doc = YAML::LoadFile((testing::SourceDir() / manifest).string());
  std::vector<std::string> out;
  for (const YAML::Node& a : doc["spec"]["template"]["spec"]["containers"][0]["args"]) {
    std::string arg = a.as<std::string>();
    for (const auto& [name, value] : env)
      arg = std::regex_replace(arg, std::regex("\\$\\(" + name + "\\)"), value);
    out.push_back(arg);
  }
  return out;
}

Result<Config> Load(const std::vector<std::string>& args) {
  auto flags = ParseCommandLine(args);
  if (!flags.ok()) return flags.error();
  return LoadConfig(*flags, "", "");
}

TEST(DeployFlags, TheDeploymentsArgsAreFlagsGpuattrKnows) {
  auto c = Load(Args("config/kubernetes/base/deployment.yaml", {}));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->web.listen_address, "0.0.0.0:9787");
  EXPECT_EQ(c->state_file, "/var/lib/gpuattr/state.json");
  EXPECT_EQ(c->cluster_name, std::string(kInClusterName));
  EXPECT_EQ(c->shard.total, 1u);
}

TEST(DeployFlags, EveryStatefulSetPodIsItsOwnShard) {
  YAML::Node sts = YAML::LoadFile(
      (testing::SourceDir() / "config/kubernetes/overlays/sharded/statefulset.yaml").string());
  const uint32_t replicas = sts["spec"]["replicas"].as<uint32_t>();
  // The env var the args refer to comes from the pod's own name.
  const YAML::Node env = sts["spec"]["template"]["spec"]["containers"][0]["env"];
  ASSERT_TRUE(env.IsSequence());
  EXPECT_EQ(env[0]["name"].as<std::string>(), "POD_NAME");
  EXPECT_EQ(env[0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "metadata.name");
  for (uint32_t i = 0; i < replicas; ++i) {
    const std::string pod = sts["metadata"]["name"].as<std::string>() + "-" + std::to_string(i);
    auto c = Load(Args("config/kubernetes/overlays/sharded/statefulset.yaml", {{"POD_NAME", pod}}));
    ASSERT_TRUE(c.ok()) << pod << ": " << c.error().message;
    EXPECT_EQ(c->shard.index, i);
    EXPECT_EQ(c->shard.total, replicas);
    EXPECT_EQ(c->shard.pod, pod);
  }
  // Without the downward API the variable stays as written: a clear error, not shard 0.
  auto unexpanded = Load(Args("config/kubernetes/overlays/sharded/statefulset.yaml", {}));
  ASSERT_FALSE(unexpanded.ok());
  EXPECT_NE(unexpanded.error().message.find("not expanded"), std::string::npos)
      << unexpanded.error().message;
}

}  // namespace
}  // namespace gpuattr::app
