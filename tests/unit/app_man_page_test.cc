// gpuattr(1) comes from the same table and prose as --help (src/app/man_page.cc): every flag and
// key of the settings table is in it, with the topics, the exit codes, and no roff warning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpuattr/app/options.h"
#include "gpuattr/app/settings.h"
#include "support/paths.h"

namespace gpuattr::app {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Escaped(std::string text) {  // as the page writes it: hyphens as \-
  std::string out;
  for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(ManPage, HoldsEverySettingAndTheHelpProse) {
  const std::string page = ManPage();
  EXPECT_EQ(page.rfind(".TH GPUATTR 1 ", 0), 0u) << page.substr(0, 80);
  EXPECT_THAT(page, HasSubstr(".SH NAME\ngpuattr \\- whose GPUs are these"));
  EXPECT_THAT(page, HasSubstr(".SH OPTIONS\n"));
  EXPECT_THAT(page, HasSubstr(".SH \"EXIT STATUS\"\n"));
  EXPECT_THAT(page, HasSubstr(".TP\n.B 2\nbad flag, bad config file or bad value"));
  EXPECT_THAT(page, HasSubstr(".B gpuattr report\n"));
  EXPECT_THAT(page, HasSubstr(".SH \"THE REPORT COMMAND\"\n"));
  EXPECT_THAT(page, HasSubstr(Escaped("--group-by namespace|team")));
  for (const Setting& s : Settings()) {
    if (!s.flag.empty()) {
      EXPECT_THAT(page, HasSubstr(Escaped("--" + s.flag))) << s.flag;
    }
    if (!s.key.empty()) {
      EXPECT_THAT(page, HasSubstr(Escaped(s.key))) << s.key;
    }
    EXPECT_THAT(page, HasSubstr(".SS " + Escaped(std::string(GroupTitle(s.group))) + "\n"));
  }
  // Only the page's own requests start a line with '.'.
  size_t pos = 0;
  while ((pos = page.find("\n.", pos)) != std::string::npos) {
    ++pos;
    const std::string request = page.substr(pos, page.find_first_of(" \n", pos) - pos);
    EXPECT_THAT((std::vector<std::string>{".TH", ".SH", ".SS", ".TP", ".B", ".PP", ".BR", ".br",
                                          ".nf", ".fi"}),
                ::testing::Contains(request))
        << "line starts with " << request;
  }
}

// groff's own check (-ww: every warning), where groff is installed (Debian: groff-base).
TEST(ManPage, RendersWithoutRoffWarnings) {
  if (!fs::exists("/usr/bin/groff")) GTEST_SKIP() << "no /usr/bin/groff";
  const fs::path file = fs::temp_directory_path() / ("gpuattr-man-" + std::to_string(getpid()));
  std::ofstream(file) << ManPage();
  const std::string cmd = "groff -man -Tutf8 -ww -z '" + file.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  fs::remove(file);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace gpuattr::app
