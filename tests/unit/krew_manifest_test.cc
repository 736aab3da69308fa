// config/krew/gpuattr.yaml, the krew manifest template of `kubectl gpuattr`
// (docs/install.md#kubectl-gpuattr): krew's Plugin shape, the placeholders the release step fills,
// and files that the tarball holds (scripts/packaging.cmake). No network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <string>

#include "support/paths.h"

namespace gpuattr::testing {
namespace {

using ::testing::HasSubstr;

TEST(KrewManifest, IsAPluginTemplateTheReleaseFills) {
  const std::string text = ReadFile(SourceDir() / "config/krew/gpuattr.yaml");
  YAML::Node m;
  ASSERT_NO_THROW(m = YAML::Load(text));
  EXPECT_EQ(m["apiVersion"].as<std::string>(), "krew.googlecontainers.github.io/v1alpha2");
  EXPECT_EQ(m["kind"].as<std::string>(), "Plugin");
  EXPECT_EQ(m["metadata"]["name"].as<std::string>(), "gpuattr");  // kubectl gpuattr
  const YAML::Node spec = m["spec"];
  EXPECT_EQ(spec["version"].as<std::string>(), "{{VERSION}}");
  EXPECT_FALSE(spec["shortDescription"].as<std::string>().empty());
  EXPECT_LE(spec["shortDescription"].as<std::string>().size(), 50u) << "krew's limit";
  EXPECT_EQ(spec["homepage"].as<std::string>().rfind("https://", 0), 0u);
  ASSERT_TRUE(spec["platforms"].IsSequence());
  ASSERT_GE(spec["platforms"].size(), 1u);
  for (const YAML::Node& p : spec["platforms"]) {
    const YAML::Node labels = p["selector"]["matchLabels"];
    EXPECT_TRUE(labels["os"] && labels["arch"]);
    const std::string os = labels["os"].as<std::string>(), arch = labels["arch"].as<std::string>();
    const std::string uri = p["uri"].as<std::string>();
    EXPECT_EQ(uri.rfind("https://", 0), 0u) << uri;
    // The tarball's name as CPack makes it: gpuattr-<version>-<os>-<arch>.tar.gz.
    EXPECT_THAT(uri, HasSubstr("/gpuattr-{{VERSION_NUMBER}}-" + os + "-" + arch + ".tar.gz"));
    EXPECT_TRUE(
        std::regex_match(p["sha256"].as<std::string>(), std::regex(R"(\{\{SHA256_[A-Z0-9_]+\}\})")))
        << "a placeholder the release fills";
    // The binary krew links as kubectl-gpuattr: started by that name, gpuattr is the plugin.
    EXPECT_EQ(p["bin"].as<std::string>(), "gpuattr");
    bool binary = false;
    for (const YAML::Node& f : p["files"])
      if (f["from"].as<std::string>() == "usr/local/bin/gpuattr") binary = true;
    EXPECT_TRUE(binary) << "the tarball holds usr/local/bin/gpuattr";
  }
}

}  // namespace
}  // namespace gpuattr::testing
