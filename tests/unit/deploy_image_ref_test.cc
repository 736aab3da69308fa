// The manifests' image (docs/deploy.md#the-image): `kubectl kustomize` of the top folder, the base
// and every overlay names one pullable reference, registry/path:tag, the default the release step
// sets (ghcr.io/gpuattr/gpuattr:<version>), never a bare `gpuattr:0.1.0` that no registry serves;
// and an overlay of a user's own retargets every variant with one `images:` entry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "support/paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultImage = "ghcr.io/gpuattr/gpuattr";

// stdout of `cmd` (stderr dropped), and whether it exited 0.
std::pair<bool, std::string> Capture(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return {false, ""};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, out};
}

// The images of every container and init container `kubectl kustomize dir` renders.
std::multiset<std::string> Images(const fs::path& dir) {
  const auto [ok, out] = Capture("timeout 120 kubectl kustomize '" + dir.string() + "'");
  EXPECT_TRUE(ok) << "kubectl kustomize " << dir;
  std::multiset<std::string> images;
  for (const YAML::Node& d : YAML::LoadAll(out)) {
    if (!d.IsMap() || !d["spec"] || !d["spec"]["template"]) continue;
    const YAML::Node pod = d["spec"]["template"]["spec"];
    for (const char* list : {"containers", "initContainers"})
      if (pod[list])
        for (const YAML::Node& c : pod[list]) images.insert(c["image"].as<std::string>());
  }
  return images;
}

class DeployImageRef : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto [ok, version] = Capture("timeout 30 kubectl version --client -o yaml");
    if (!ok) GTEST_SKIP() << "kubectl is not installed: `kubectl kustomize` is not checked";
    if (version.find("minor: \"1\"") != std::string::npos ||
        std::regex_search(version, std::regex(R"(minor: "(1[0-9]|20)\+?")")))
      GTEST_SKIP() << "kubectl is older than 1.21 (its kustomize is too old)";
  }
};

TEST_F(DeployImageRef, EveryVariantNamesThePullableDefault) {
  const fs::path kube = SourceDir() / "config/kubernetes";
  std::vector<fs::path> dirs = {kube, kube / "base"};
  for (const auto& e : fs::directory_iterator(kube / "overlays")) dirs.push_back(e.path());
  // registry host (with a dot or a port) / path : tag, or @sha256:digest.
  const std::regex pullable(
      R"re(([a-z0-9-]+\.)+[a-z0-9-]+(:[0-9]+)?(/[a-z0-9._-]+)+(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[0-9a-f]{64}))re");
  std::set<std::string> seen;
  for (const fs::path& dir : dirs) {
    const auto images = Images(dir);
    EXPECT_FALSE(images.empty()) << dir;
    for (const std::string& image : images) {
      EXPECT_TRUE(std::regex_match(image, pullable)) << dir << " names " << image;
      EXPECT_EQ(image.rfind(std::string(kDefaultImage) + ":", 0), 0u) << dir << ": " << image;
      seen.insert(image);
    }
  }
  EXPECT_EQ(seen.size(), 1u) << "every variant runs the same image: "
                             << ::testing::PrintToString(seen);
}

TEST_F(DeployImageRef, OneImagesEntryRetargetsEveryVariant) {
  char tmpl[] = "/tmp/gpuattr-image-ref-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  for (const char* variant : {"overlays/servicemonitor", "overlays/sharded"}) {
    const fs::path target = SourceDir() / "config/kubernetes" / variant;
    std::ofstream(dir / "kustomization.yaml")
        << "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - "
        << fs::relative(target, dir).string() << "\nimages:\n  - {name: " << kDefaultImage
        << ", newName: registry.example.com/team/gpuattr, newTag: 9.9.9}\n";
    const auto images = Images(dir);
    EXPECT_FALSE(images.empty()) << variant;
    for (const std::string& image : images)
      EXPECT_EQ(image, "registry.example.com/team/gpuattr:9.9.9") << variant;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuattr::testing
