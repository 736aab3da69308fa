// The memory limit the process runs under: its cgroup's (a container's `resources.limits.memory`,
// a systemd unit's MemoryMax), v2 or v1, as Prometheus' --auto-gomemlimit finds it. Used to size
// the default scrape concurrency (docs/security.md#memory).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace gpuattr {

// The smallest limit on the way from the process's cgroup to the root: `proc_self_cgroup` is the
// text of /proc/self/cgroup, `root` where the hierarchy is mounted (/sys/fs/cgroup). None when no
// cgroup on the way has a limit ("max", or v1's "unlimited" 2^63 rounded to pages), or the files
// are not there (not Linux, no cgroup mount).
std::optional<uint64_t> CgroupMemoryLimit(std::string_view proc_self_cgroup,
                                          const std::filesystem::path& root);

// The same for this process (/proc/self/cgroup under /sys/fs/cgroup).
std::optional<uint64_t> ProcessMemoryLimit();

}  // namespace gpuattr
