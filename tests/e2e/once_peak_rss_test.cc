// The peak RSS e2e tests assert for `gpuattr --once` (support/once_run.h) is gpuattr's own: not
// the test process's, which a child spawned from it inherits in its ru_maxrss (the kernel carries
// the peak of the address space a process exec'ed from). Both directions: a test holding 256 MiB
// does not make a small run look big, and a program that does hold memory is reported with it.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "support/once_run.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class OncePeakRss : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuattr-peak-rss-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OncePeakRss, TheTestsOwnMemoryIsNotCounted) {
  std::vector<char> held(256u << 20);
  std::memset(held.data(), 1, held.size());  // resident, in this process
  const OnceRun r = RunGpuattr({"--version"}, dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  std::cout << "[ peak rss ] gpuattr --version while the test holds 256 MiB: " << r.max_rss_kib
            << " KiB\n";
  EXPECT_GT(r.max_rss_kib, 0);
  EXPECT_LT(r.max_rss_kib, 64 * 1024);
  EXPECT_EQ(held[held.size() - 1], 1);
}

TEST_F(OncePeakRss, WhatTheProgramHoldsIsCounted) {
  // A shell holding a 64 MB string.
  const fs::path file = dir_ / "rss";
  Child c = SpawnChild({GPUATTR_BINARY_DIR "/tests/gpuattr-peak-rss", file.string(), "/bin/sh",
                        "-c", "a=$(head -c 64000000 /dev/zero | tr '\\000' x); echo ${#a}"},
                       EnvironmentWithout({}), dir_);
  ASSERT_GT(c.pid, 0);
  ASSERT_EQ(WaitChild(c.pid, 60s), 0) << SlurpFile(c.err);
  EXPECT_EQ(SlurpFile(c.out), "64000000\n");
  const long kib = std::stol(SlurpFile(file));
  std::cout << "[ peak rss ] a shell holding 64 MB: " << kib << " KiB\n";
  EXPECT_GT(kib, 64'000'000 / 1024);
}

}  // namespace
}  // namespace gpuattr::testing
