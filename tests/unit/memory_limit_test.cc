// The process's memory limit from its cgroup (util/memory_limit.h), on cgroup trees written in a
// temporary directory as the kernel lays them out.
#include "gpuattr/util/memory_limit.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace gpuattr {
namespace {

namespace fs = std::filesystem;
using gpuattr::testing::TempDir;

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

TEST(CgroupMemoryLimit, V2TheContainersLimit) {
  TempDir root;
  Write(root / "kubepods/pod1/ctr/memory.max", "536870912");
  Write(root / "kubepods/pod1/memory.max", "max");
  EXPECT_EQ(CgroupMemoryLimit("0::/kubepods/pod1/ctr\n", root.path()), uint64_t{512} << 20);
}

TEST(CgroupMemoryLimit, V2TheLeastOnTheWayToTheRoot) {
  TempDir root;
  Write(root / "user.slice/app.service/memory.max", "max");
  Write(root / "user.slice/memory.max", "1073741824");
  EXPECT_EQ(CgroupMemoryLimit("0::/user.slice/app.service\n", root.path()), uint64_t{1} << 30);
}

TEST(CgroupMemoryLimit, V2InsideACgroupNamespace) {
  TempDir root;  // a container sees its own cgroup as the root
  Write(root / "memory.max", "268435456");
  EXPECT_EQ(CgroupMemoryLimit("0::/\n", root.path()), uint64_t{256} << 20);
}

TEST(CgroupMemoryLimit, NoLimitAnywhereIsNone) {
  TempDir root;
  Write(root / "a/memory.max", "max");
  EXPECT_EQ(CgroupMemoryLimit("0::/a\n", root.path()), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimit("0::/missing\n", root.path()), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimit("", root.path()), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimit("not a cgroup line\n", root.path()), std::nullopt);
}

TEST(CgroupMemoryLimit, V1MemoryControllerAndItsUnlimitedValue) {
  TempDir root;
  Write(root / "memory/docker/abc/memory.limit_in_bytes", "9223372036854771712");  // unlimited
  EXPECT_EQ(CgroupMemoryLimit("4:memory:/docker/abc\n", root.path()), std::nullopt);
  Write(root / "memory/docker/def/memory.limit_in_bytes", "2147483648");
  EXPECT_EQ(CgroupMemoryLimit("7:cpuset\n5:cpu,memory:/docker/def\n", root.path()),
            uint64_t{2} << 30);
}

TEST(CgroupMemoryLimit, AValueThatIsNotANumberIsIgnored) {
  TempDir root;
  Write(root / "a/memory.max", "12x");
  EXPECT_EQ(CgroupMemoryLimit("0::/a\n", root.path()), std::nullopt);
}

}  // namespace
}  // namespace gpuattr
