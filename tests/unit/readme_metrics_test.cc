// Docs are a tested contract: every family gpuattr can emit is in the README's metric table with
// its type, and the table lists nothing gpuattr does not emit.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/process_metrics.h"
#include "support/paths.h"

namespace gpuattr::metrics {
namespace {

// family name → type ("gauge"/"counter") from rows like "| `gpuattr_x` | gauge | ... |".
std::map<std::string, std::string> ReadmeFamilies() {
  std::istringstream in(gpuattr::testing::ReadFile(gpuattr::testing::SourceDir() / "README.md"));
  std::map<std::string, std::string> out;
  const std::regex row(R"(^\| `((?:gpuattr|process)_[a-z0-9_]+)` \| (gauge|counter) \|)");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, row)) out[m[1]] = m[2];
  return out;
}

TEST(ReadmeMetrics, EveryTabledFamilyIsDocumentedWithItsType) {
  const auto documented = ReadmeFamilies();
  ASSERT_FALSE(documented.empty()) << "README.md has no metric table rows";
  size_t tabled = 0;
  for (const FamilyGroup* g : FamilyGroups()) {
    for (const FamilySpec& f : g->families) {
      ++tabled;
      auto it = documented.find(std::string(f.name));
      ASSERT_NE(it, documented.end())
          << f.name << " (group " << g->name << ") is missing from the README metric table";
      EXPECT_EQ(it->second, MetricTypeName(f.type))
          << f.name;
    }
  }
  for (const FamilySpec& f : ProcessFamilies()) {  // /metrics appends them at each scrape
    ++tabled;
    auto it = documented.find(std::string(f.name));
    ASSERT_NE(it, documented.end()) << f.name << " is missing from the README metric table";
    EXPECT_EQ(it->second, MetricTypeName(f.type))
        << f.name;
  }
  EXPECT_EQ(documented.size(), tabled) << "the README lists a family gpuattr does not emit";
}

}  // namespace
}  // namespace gpuattr::metrics
