// process_* self-metrics from /proc/self (metrics/process_metrics.h).
#include "gpuattr/metrics/process_metrics.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <regex>
#include <set>
#include <sstream>

#include "gpuattr/util/strings.h"
#include "support/paths.h"

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;

TEST(ProcessMetrics, ReadsThisProcess) {
  ProcessStats s = ReadProcessStats();
  ASSERT_TRUE(s.resident_bytes && s.virtual_bytes && s.open_fds && s.cpu_seconds &&
              s.start_time_unix_seconds);
  EXPECT_GT(*s.resident_bytes, 1 << 20);
  EXPECT_GE(*s.virtual_bytes, *s.resident_bytes);
  EXPECT_GE(*s.cpu_seconds, 0);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(*s.start_time_unix_seconds, now + 1);
  EXPECT_GT(*s.start_time_unix_seconds, now - 86400);  // this test binary started today
  if (s.max_fds) {
    EXPECT_GE(*s.max_fds, *s.open_fds);
  }

  // One more open descriptor is counted as one more.
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ProcessStats more = ReadProcessStats();
  ::close(fd);
  ASSERT_TRUE(more.open_fds);
  EXPECT_EQ(*more.open_fds, *s.open_fds + 1);
}

TEST(ProcessMetrics, RendersTheClientLibraryFamiliesWithoutLabels) {
  ProcessStats s;
  s.cpu_seconds = 1.5;
  s.resident_bytes = 1048576;
  s.virtual_bytes = 2097152;
  s.open_fds = 7;
  s.max_fds = 1024;
  s.start_time_unix_seconds = 1764590400;
  const std::string text = RenderProcessMetrics(s);
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"
                              "process_cpu_seconds_total 1.5\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes 1048576\n"));
  EXPECT_THAT(text, HasSubstr("process_virtual_memory_bytes 2097152\n"));
  EXPECT_THAT(text, HasSubstr("process_open_fds 7\n"));
  EXPECT_THAT(text, HasSubstr("process_max_fds 1024\n"));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds 1764590400\n"));
  size_t helps = 0;
  for (size_t p = text.find("# HELP "); p != std::string::npos; p = text.find("# HELP ", p + 1))
    ++helps;
  EXPECT_EQ(helps, ProcessFamilies().size());
  // Unknown values leave their family out.
  ProcessStats partial;
  partial.open_fds = 3;
  EXPECT_EQ(RenderProcessMetrics(partial),
            "# HELP process_open_fds Number of open file descriptors.\n"
            "# TYPE process_open_fds gauge\nprocess_open_fds 3\n");
}

// The README metric table lists them with an empty labels column: their series carry none (not
// even `cluster`).
TEST(ProcessMetrics, ReadmeRowsHaveNoLabels) {
  std::istringstream in(gpuattr::testing::ReadFile(gpuattr::testing::SourceDir() / "README.md"));
  const std::regex row(R"(^\| `(process_[a-z_]+)` \| (?:gauge|counter) \| ([^|]*)\|)");
  std::set<std::string> documented;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, row)) continue;
    documented.insert(m[1]);
    EXPECT_EQ(Trim(m[2].str()), "") << m[1];
  }
  std::set<std::string> emitted;
  std::istringstream text(RenderProcessMetrics(ReadProcessStats()));
  while (std::getline(text, line)) {
    if (line.starts_with("#")) continue;
    std::string name = line.substr(0, line.find(' '));
    EXPECT_EQ(name.find('{'), std::string::npos) << line;
    emitted.insert(name);
  }
  std::set<std::string> families;
  for (const FamilySpec& f : ProcessFamilies()) families.insert(std::string(f.name));
  EXPECT_EQ(documented, families);
  for (const std::string& name : emitted) EXPECT_TRUE(families.count(name)) << name;
  EXPECT_GE(emitted.size(), 5u);  // process_max_fds is left out only without a limit
}

}  // namespace
}  // namespace gpuattr::metrics
