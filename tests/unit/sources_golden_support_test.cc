// The golden-file helper in tests/support (used by the sources goldens and the attribution's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "support/golden.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Sets or clears UPDATE_GOLDEN for one scope, restoring the previous value.
class ScopedUpdateGolden {
 public:
  explicit ScopedUpdateGolden(const char* value) {
    if (const char* old = std::getenv("UPDATE_GOLDEN")) old_ = old;
    if (value) {
      setenv("UPDATE_GOLDEN", value, 1);
    } else {
      unsetenv("UPDATE_GOLDEN");
    }
  }
  ~ScopedUpdateGolden() {
    if (old_) {
      setenv("UPDATE_GOLDEN", old_->c_str(), 1);
    } else {
      unsetenv("UPDATE_GOLDEN");
    }
  }

 private:
  std::optional<std::string> old_;
};

fs::path TempDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("gpuattr-golden-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(GoldenSupport, LineDiffShowsOnlyTheChangedLinesWithContext) {
  EXPECT_EQ(LineDiff("a\nb\n", "a\nb\n"), "");
  std::string d = LineDiff("l1\nl2\nl3\nl4\nl5\nl6\nl7\n", "l1\nl2\nl3\nL4\nl5\nl6\nl7\nl8\n");
  EXPECT_THAT(d, HasSubstr("-l4\n+L4\n"));
  EXPECT_THAT(d, HasSubstr("+l8\n"));
  EXPECT_THAT(d, HasSubstr(" l3\n"));  // context
  EXPECT_THAT(d, HasSubstr("@@ golden line"));
  EXPECT_THAT(d, ::testing::Not(HasSubstr("l1")));  // far from any change
}

TEST(GoldenSupport, LineDiffIsBounded) {
  std::string a, b;
  for (int i = 0; i < 500; ++i) {
    a += "x" + std::to_string(i) + "\n";
    b += "y" + std::to_string(i) + "\n";
  }
  std::string d = LineDiff(a, b, 20);
  EXPECT_THAT(d, HasSubstr("diff truncated"));
  EXPECT_LT(std::count(d.begin(), d.end(), '\n'), 30);
}

TEST(GoldenSupport, MismatchMissingAndUpdate) {
  ScopedUpdateGolden off(nullptr);
  const fs::path dir = TempDir("cmp");
  const fs::path golden = dir / "g.txt";

  GoldenResult missing = CompareGolden(golden, "x\n");
  EXPECT_FALSE(missing.ok);
  EXPECT_THAT(missing.message, HasSubstr("missing"));
  EXPECT_THAT(missing.message, HasSubstr("UPDATE_GOLDEN=1"));

  {
    ScopedUpdateGolden on("1");
    EXPECT_TRUE(UpdateGoldenRequested());
    EXPECT_TRUE(CompareGolden(golden, "one\ntwo\n").ok);
  }
  EXPECT_FALSE(UpdateGoldenRequested());
  EXPECT_EQ(ReadFile(golden), "one\ntwo\n");
  EXPECT_TRUE(CompareGolden(golden, "one\ntwo\n").ok);

  GoldenResult changed = CompareGolden(golden, "one\nthree\n");
  EXPECT_FALSE(changed.ok);
  EXPECT_THAT(changed.message, HasSubstr(golden.string()));
  EXPECT_THAT(changed.message, HasSubstr("-two\n+three\n"));
  fs::remove_all(dir);
}

TEST(GoldenSupport, ZeroMeansNoUpdate) {
  ScopedUpdateGolden zero("0");
  EXPECT_FALSE(UpdateGoldenRequested());
}

}  // namespace
}  // namespace gpuattr::testing
