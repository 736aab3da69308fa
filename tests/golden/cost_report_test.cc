// `gpuattr report` (docs/accounting.md#the-report) on a state file written by a deterministic
// ledger run (built through the ledger's API, below): Markdown, CSV and JSON goldens in
// tests/golden/cost_report/ (UPDATE_GOLDEN=1 regenerates; review with `git diff`), the CSV read
// back by Python's csv module, and every bad input an exit 2 naming the file or the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuattr/app/options.h"
#include "gpuattr/app/report_command.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/util/utc_day.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::app {
namespace {

namespace fs = std::filesystem;
using accounting::CardAccount;
using accounting::PerBasis;
using ::testing::HasSubstr;

constexpr double kDay1 = 20'423 * 86400.0;  // 2025-12-01T00:00:00Z
constexpr double kStep = 900;               // 15 min = 0.25 GPU-hour a card: sums are exact

CardAccount Card(const std::string& node, const std::string& gpu,
                 std::vector<std::pair<kube::PodId, PerBasis>> pods) {
  CardAccount c;
  c.node = node;
  c.gpu = gpu;
  c.uuid = "GPU-" + node + "-" + gpu;
  c.model = node == "a100-node" ? "NVIDIA A100-SXM4-80GB" : "NVIDIA L4";
  PerBasis used{};
  for (auto& [id, v] : pods) {
    c.pods.push_back({id, "uid-" + id.namespace_ + "-" + id.name, v});
    for (size_t b = 0; b < accounting::kBases; ++b) used[b] += v[b];
  }
  for (size_t b = 0; b < accounting::kBases; ++b) c.idle[b] = 1 - used[b];
  return c;
}

// Two days of 15-minute cycles. The A100 (3.00 USD per GPU-hour) holds ml/train (half the card,
// 3/8 of its compute) and vision/infer (a quarter, an eighth of its memory, a quarter of its
// compute); the unpriced L4 holds web/api (whole, half busy). On day 2 from 06:00 to 12:00 a
// second L4 runs batch/job (whole, fully busy); the cycle at 18:00 fails. Teams: ml and vision
// are "research", web is "product", batch has no team label.
ledger::LedgerState DemoState() {
  ledger::Ledger l(ledger::LedgerParams{.max_gap_seconds = 1000});
  const kube::PodId train{"ml", "train"}, infer{"vision", "infer"}, api{"web", "api"},
      job{"batch", "job"};
  ledger::PodUids uids;
  for (const auto& id : {train, infer, api, job}) uids[id] = "uid-" + id.namespace_ + "-" + id.name;
  const ledger::NamespaceLabels labels = {{"ml", {{"team", "research"}}},
                                          {"vision", {{"team", "research"}}},
                                          {"web", {{"team", "product"}}},
                                          {"batch", {}}};
  for (double t = kDay1; t <= kDay1 + 2 * 86400 - kStep; t += kStep) {
    if (t == kDay1 + 86400 + 18 * 3600) {
      l.BreakInterval();
      continue;
    }
    std::vector<CardAccount> cards = {
        Card("a100-node", "0", {{train, {0.5, 0.5, 0.375}}, {infer, {0.25, 0.125, 0.25}}}),
        Card("l4-node", "0", {{api, {1, 1, 0.5}}})};
    std::vector<std::optional<double>> prices = {3.0, std::nullopt};
    const double hour2 = (t - kDay1 - 86400) / 3600;
    if (hour2 >= 6 && hour2 < 12) {
      cards.push_back(Card("l4-node", "1", {{job, {1, 1, 1}}}));
      prices.push_back(std::nullopt);
    }
    ledger::LedgerView view;
    l.RecordGpuHours(cards, prices, "USD", t, &uids, view, labels);
  }
  return l.state();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuattr-report-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path Write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return path / name;
  }
};

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome RunReport(std::vector<std::string> args) {
  std::ostringstream out, err;
  Outcome o;
  o.code = RunReportCommand(args, out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

class CostReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    state_ = dir_->Write("state.json", ledger::EncodeStateFile({{"demo", DemoState()}})).string();
  }
  static void TearDownTestSuite() { delete dir_; }
  static Outcome Report(const std::string& group_by, const std::string& output) {
    return RunReport({"--from", "2025-12-01", "--to", "2025-12-02", "--group-by", group_by,
                      "--output", output, "--state.file", state_});
  }
  static TempDir* dir_;
  static std::string state_;
};
TempDir* CostReport::dir_ = nullptr;
std::string CostReport::state_;

TEST_F(CostReport, MatchesTheGoldens) {
  for (const std::string group_by : {"namespace", "team"})
    for (const auto& [output, ext] : std::vector<std::pair<std::string, std::string>>{
             {"markdown", "md"}, {"csv", "csv"}, {"json", "json"}}) {
      const Outcome o = Report(group_by, output);
      ASSERT_EQ(o.code, kExitOk) << o.err;
      EXPECT_EQ(o.err, "");
      auto r = gpuattr::testing::CompareGolden(
          gpuattr::testing::SourceDir() / "tests/golden/cost_report" / (group_by + "." + ext),
          o.out);
      EXPECT_TRUE(r.ok) << r.message;
    }
}

// The hand check of the goldens. Day 1: 95 accrued intervals (the first cycle only starts the
// counters) of 0.25 h on two cards = 47.5 card-hours; day 2: 96 intervals (the one ending at
// midnight is day 2's) minus the failed cycle's two = 94 on two cards, plus the second L4's 23
// intervals from 06:15 (its first cycle at 06:00 only starts it) = 211 × 0.25 = 52.75.
// ml/train: 0.5 of the A100 over 95 + 94 intervals = 23.625 GPU-hours, 70.875 USD.
TEST_F(CostReport, NumbersWorkedOutByHand) {
  const Outcome o = Report("namespace", "csv");
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_THAT(o.out, HasSubstr("\r\n2025-12-01,2025-12-02,demo,namespace,ml,ml,23.625,23.625,"
                               "17.71875,5.90625,USD,70.875,70.875,53.15625,17.71875\r\n"));
  EXPECT_THAT(o.out, HasSubstr(",cards,,100.25,100.25,100.25,,USD,141.75,141.75,141.75,\r\n"));
  EXPECT_THAT(o.out, HasSubstr(",namespace,batch,batch,5.75,5.75,5.75,0,,,,,\r\n"));
}

// Python's csv module reads it as finance tools would: one header, 15 fields a row, and per
// basis the groups + idle = the total = the cards' hours.
TEST_F(CostReport, CsvReadsBackWithPythonsCsvModule) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const Outcome o = Report("team", "csv");
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const fs::path csv = dir_->Write("report.csv", o.out);
  const fs::path script = dir_->Write("check.py", R"py(import csv, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
assert len(rows) == 6, rows
kinds = [r["kind"] for r in rows]
assert kinds == ["team", "team", "team", "idle", "total", "cards"], kinds
assert [r["group"] for r in rows[:3]] == ["product", "research", "(no team)"], rows
assert rows[1]["namespaces"] == "ml vision", rows[1]
for b in ("allocation", "memory", "usage"):
    col = b + "_gpu_hours"
    parts = sum(float(r[col]) for r in rows if r["kind"] in ("team", "idle"))
    total, cards = float(rows[4][col]), float(rows[5][col])
    assert abs(parts - total) < 1e-6 and abs(total - cards) < 1e-6, (b, parts, total, cards)
    assert "e" not in rows[4][col].lower()
assert rows[0]["allocation_cost"] == "" and rows[1]["currency"] == "USD", rows
print("ok")
)py");
  const std::string cmd = "python3 '" + script.string() + "' '" + csv.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out, "ok\n");
}

TEST_F(CostReport, ARangeWithoutDataIsAllZeroAndBalanced) {
  const Outcome o =
      RunReport({"--from", "2024-01-01", "--to", "2024-01-31", "--state.file", state_});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_THAT(o.out, HasSubstr("0 days with data"));
  EXPECT_THAT(o.out, HasSubstr("Check: namespaces + idle = 0 / 0 / 0 GPU-hours"));
}

void ExpectUsageError(const std::vector<std::string>& args, const std::string& names) {
  const Outcome o = RunReport(args);
  EXPECT_EQ(o.code, kExitUsage) << o.out;
  EXPECT_THAT(o.err, HasSubstr(names));
  EXPECT_EQ(o.out, "");
}

TEST_F(CostReport, BadInputIsExitTwoNamingTheFileOrFlag) {
  const std::vector<std::string> range = {"--from", "2025-12-01", "--to", "2025-12-02"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = range;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::string empty = dir_->Write("empty.json", "").string();
  const std::string corrupt = dir_->Write("corrupt.json", "{\"format\": \"gpuattr-st").string();
  const std::string missing = (dir_->path / "missing.json").string();
  ExpectUsageError(with({"--state.file", empty}), empty + ": empty");
  ExpectUsageError(with({"--state.file", corrupt}), corrupt + ": ");
  ExpectUsageError(with({"--state.file", missing}), missing + ": cannot be read");
  ExpectUsageError({"--from", "2025-12-32", "--to", "2025-12-02", "--state.file", state_},
                   "--from: \"2025-12-32\" is not a date");
  ExpectUsageError({"--from", "2025-12-02", "--to=2025-12-01", "--state.file", state_},
                   "--from 2025-12-02 is after --to 2025-12-01");
  ExpectUsageError(with({"--group-by", "pod", "--state.file", state_}), "--group-by");
  ExpectUsageError(with({"--output", "xlsx", "--state.file", state_}), "--output");
  ExpectUsageError(with({"--state.file", state_, "--cluster", "prod"}), "--cluster");
  ExpectUsageError({"--to", "2025-12-02", "--state.file", state_}, "--from: missing");
  ExpectUsageError(with({"--frm", "x"}), "\"--frm\"");
  const std::string two =
      dir_->Write("two.json", ledger::EncodeStateFile({{"a", DemoState()}, {"b", {}}})).string();
  ExpectUsageError(with({"--state.file", two}), "several clusters (a, b): name one with --cluster");
  const Outcome chosen =
      RunReport(with({"--state.file", two, "--cluster", "a", "--output", "json"}));
  EXPECT_EQ(chosen.code, kExitOk) << chosen.err;
  EXPECT_THAT(chosen.out, HasSubstr("\"cluster\": \"a\""));
}

// The binary itself: `gpuattr report` is dispatched before any flag or config is read (main.cc).
// Skipped when the daemon is not built next to the tests (a build of the unit tests alone).
TEST_F(CostReport, TheBinaryRunsTheReportCommand) {
  const fs::path binary = fs::path(GPUATTR_BINARY_DIR) / "gpuattr";
  if (!fs::exists(binary)) GTEST_SKIP() << "no " << binary;
  const fs::path run = dir_->path / "run";
  fs::create_directories(run);
  auto spawn = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {binary.string(), "report"});
    gpuattr::testing::Child c = gpuattr::testing::SpawnChild(args, {"HOME=/nonexistent"}, run);
    EXPECT_GT(c.pid, 0);
    return std::make_pair(gpuattr::testing::WaitChild(c.pid, std::chrono::seconds(30)), c);
  };
  auto [ok, child] = spawn(
      {"--from", "2025-12-01", "--to", "2025-12-02", "--output", "csv", "--state.file", state_});
  EXPECT_EQ(ok, kExitOk);
  EXPECT_EQ(gpuattr::testing::SlurpFile(child.out), Report("namespace", "csv").out);
  auto [bad, failed] = spawn({"--from", "2025-12-01", "--to", "2025-12-02"});  // no state file
  EXPECT_EQ(bad, kExitUsage);
  EXPECT_THAT(gpuattr::testing::SlurpFile(failed.err), HasSubstr("gpuattr report: "));
}

TEST(CostReportCsv, QuotesFieldsAsRfc4180Says) {
  report::CostReport r;
  r.cluster = "lab, \"west\"";
  r.groups.push_back({"a,b", {}, {}, {}, false});
  const std::string csv = report::RenderCostCsv(r);
  EXPECT_THAT(csv, HasSubstr(",\"lab, \"\"west\"\"\",namespace,\"a,b\","));
  EXPECT_EQ(report::PlainDecimal(1e-7, 6), "0");
  EXPECT_EQ(report::PlainDecimal(-0.25, 6), "-0.25");
  EXPECT_EQ(report::PlainDecimal(12345678.5, 2), "12345678.5");
}

}  // namespace
}  // namespace gpuattr::app
