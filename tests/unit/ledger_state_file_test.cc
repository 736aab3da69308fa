// The state file: its JSON format, atomic writes, the default location, surviving bad files and
// unwritable directories, and a restart that keeps idle runs and energy counters.
#include "gpuattr/ledger/state_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "gpuattr/ledger/atomic_file.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/ledger/state_path.h"
#include "gpuattr/util/log.h"
#include "support/paths.h"
#include "support/temp_dir.h"

namespace gpuattr::ledger {
namespace {

namespace fs = std::filesystem;
using gpuattr::testing::TempDir;
using ::testing::HasSubstr;

// Captures warn and info lines while alive.
class LogCapture {
 public:
  LogCapture() : level_(log::GetLevel()) {
    log::SetLevel(log::Level::kInfo);
    log::SetSink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() {
    log::ResetSink();
    log::SetLevel(level_);
  }
  std::vector<std::string> Lines(const std::string& level) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : lines_)
      if (l.find("level=" + level) != std::string::npos) out.push_back(l);
    return out;
  }

 private:
  log::Level level_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

std::vector<fs::path> Listing(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

LedgerState SampleState() {
  LedgerState s;
  s.last_cycle_unix = 1764474000.125;
  s.pods[{"ml", "trainer-0"}] = PodRecord{.uid = "6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f80",
                                          .node = "gpu-1",
                                          .idle_since_unix = 1764470000.5,
                                          .last_idle_unix = 1764473980.125,
                                          .joules = 5400.25,
                                          .last_power_watts = 250.0,
                                          .last_power_unix = 1764473990.125};
  PodRecord notebook;  // only a node: nothing else is known
  notebook.node = "gpu-2";
  s.pods[{"ml", "notebook"}] = notebook;
  s.namespaces["ml"] =
      NamespaceRecord{9000.75, 1764474000.125, {{1764470400.5, 8000.5}, {1764474000.125, 9000.75}}};
  s.namespaces["gone"] = NamespaceRecord{12.5, 1764400000};
  return s;
}

LedgerState StateAt(double last_cycle_unix) {
  LedgerState s;
  s.last_cycle_unix = last_cycle_unix;
  return s;
}

attribution::Attribution OnePod(double watts, bool idle) {
  attribution::Attribution a;
  a.cluster = "kind-gpu";
  attribution::Pod p;
  p.id = {"ml", "trainer-0"};
  p.node = "gpu-1";
  p.power_watts = watts;
  p.idle = idle;
  a.pods.push_back(p);
  return a;
}

// --- format -------------------------------------------------------------------------------------

TEST(StateCodec, RoundTripsEveryField) {
  StateFileContents c{{"kind-gpu", SampleState()}, {"prod \"eu\"", LedgerState{}}};
  const std::string text = EncodeStateFile(c);
  EXPECT_THAT(text, HasSubstr("\"format\": \"gpuattr-state\""));
  EXPECT_THAT(text, HasSubstr("\"version\": 2"));
  auto back = DecodeStateFile(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, c);
}

TEST(StateCodec, ReadsAFileWithoutEnergyMarks) {
  // Files written before namespaces kept energy marks: the counters load, the marks start empty.
  auto back = DecodeStateFile(
      "{\"format\": \"gpuattr-state\", \"version\": 1, \"clusters\": {\"c\": {\"namespaces\": "
      "[{\"namespace\": \"ml\", \"joules\": 7.5, \"last_seen_unix\": 100}]}}}");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->at("c").namespaces.at("ml"), (NamespaceRecord{7.5, 100, {}}));
}

TEST(StateCodec, RejectsTruncatedForeignAndNewerFiles) {
  const std::string good = EncodeStateFile({{"c", SampleState()}});
  for (const std::string& bad :
       {good.substr(0, good.size() / 2), std::string(""), std::string("{\"hello\": 1}"),
        std::string("[1, 2]"), std::string("{\"format\": \"gpuattr-state\", \"version\": 3}"),
        std::string("{\"format\": \"gpuattr-state\", \"version\": 1, \"clusters\": {\"c\": "
                    "{\"pods\": [{\"namespace\": \"a\"}]}}}"),
        std::string("{\"format\": \"gpuattr-state\", \"version\": 1, \"clusters\": {\"c\": "
                    "{\"last_cycle_unix\": \"yesterday\"}}}"),
        std::string("{\"format\": \"gpuattr-state\", \"version\": 1, \"clusters\": {\"c\": "
                    "{\"namespaces\": [{\"namespace\": \"a\", \"joules\": 1, \"marks\": "
                    "[{\"unix\": 5}]}]}}}")}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(DecodeStateFile(bad).ok());
  }
  auto foreign = DecodeStateFile("{\"hello\": 1}");
  EXPECT_THAT(foreign.error().message, HasSubstr("not a gpuattr state file"));
  auto newer = DecodeStateFile("{\"format\": \"gpuattr-state\", \"version\": 3}");
  EXPECT_THAT(newer.error().message, HasSubstr("unsupported state file version 3"));
}

// A file written before UIDs and observation times were kept: its records were all written at
// the last cycle, so that is when each pod was last seen idle and its power last measured.
TEST(StateCodec, ReadsFilesWrittenBeforeUidsAndObservationTimes) {
  auto old = DecodeStateFile(R"({"format": "gpuattr-state", "version": 1, "clusters": {"c": {
      "last_cycle_unix": 1000.5,
      "pods": [{"namespace": "ml", "pod": "a", "node": "n1", "idle_since_unix": 900,
                "joules": 50, "last_power_watts": 100},
               {"namespace": "ml", "pod": "b", "node": "n1"}],
      "namespaces": [{"namespace": "ml", "joules": 50, "last_seen_unix": 1000.5}]}}})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  const LedgerState& s = old->at("c");
  const PodRecord& a = s.pods.at({"ml", "a"});
  EXPECT_EQ(a.uid, "");
  EXPECT_EQ(a.idle_since_unix, 900.0);
  EXPECT_EQ(a.last_idle_unix, 1000.5);
  EXPECT_EQ(a.last_power_unix, 1000.5);
  const PodRecord& b = s.pods.at({"ml", "b"});
  EXPECT_FALSE(b.last_idle_unix.has_value());  // no run, no power: nothing to date
  EXPECT_FALSE(b.last_power_unix.has_value());

  // Such a record continues with the pod it names, and takes its UID.
  Ledger ledger(LedgerParams{}, s);
  attribution::Attribution attr;
  attr.cluster = "c";
  attribution::Pod p;
  p.id = {"ml", "a"};
  p.node = "n1";
  p.power_watts = 100;
  p.idle = true;
  attr.pods.push_back(p);
  const PodUids uids = {{{"ml", "a"}, "uid-a"}};
  LedgerView v = ledger.Record(attr, 1020.5, &uids);
  std::vector<PodLedgerRef> rows;
  ForEachPodLedger(v, attr.pods, [&](const PodLedgerRef& r) { rows.push_back(r); });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, p.id);
  EXPECT_EQ(rows[0].idle_seconds, 120.5);
  ASSERT_TRUE(rows[0].energy_joules);
  EXPECT_DOUBLE_EQ(*rows[0].energy_joules, 50 + 2000);
  EXPECT_EQ(ledger.state().pods.at({"ml", "a"}).uid, "uid-a");
}

// --- location -----------------------------------------------------------------------------------

TEST(StatePath, DefaultsToTheXdgStateDirectory) {
  EXPECT_EQ(*ResolveStateFilePath("", "/x/state", "/home/u"), "/x/state/gpuattr/state.json");
  EXPECT_EQ(*ResolveStateFilePath("", nullptr, "/home/u"),
            "/home/u/.local/state/gpuattr/state.json");
  EXPECT_EQ(*ResolveStateFilePath("", "relative/dir", "/home/u"),  // ignored, as XDG says
            "/home/u/.local/state/gpuattr/state.json");
  EXPECT_EQ(*ResolveStateFilePath("/var/lib/g.json", "/x", "/home/u"), "/var/lib/g.json");
  EXPECT_EQ(*ResolveStateFilePath("~/g.json", nullptr, "/home/u"), "/home/u/g.json");
  auto none = ResolveStateFilePath("", nullptr, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("--state.file"));
}

// --- writing ------------------------------------------------------------------------------------

TEST(AtomicFile, ReplacesTheFileCreatesDirectoriesAndLeavesNoTemporaryFile) {
  TempDir dir;
  const fs::path path = dir / "a/b/state.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "one").ok());
  ASSERT_TRUE(WriteFileAtomically(path.string(), "two").ok());
  EXPECT_EQ(gpuattr::testing::ReadFile(path), "two");
  EXPECT_EQ(Listing(path.parent_path()), std::vector<fs::path>{path});
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AtomicFile, AnUnwritablePlaceIsAnErrorNamingThePath) {
  TempDir dir;
  std::ofstream(dir / "plain-file") << "x";  // a file where a directory should be
  const fs::path path = dir / "plain-file/state.json";
  Status s = WriteFileAtomically(path.string(), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr((dir / "plain-file").string()));
}

// Someone plants a symlink where the temporary file goes, pointing at a file of the user's: the
// write must neither follow it (truncating the victim) nor fail; the symlink is left alone.
TEST(AtomicFile, ASymlinkAtTheTemporaryNameIsNotFollowed) {
  TempDir dir;
  const fs::path path = dir / "state.json";
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path planted = dir / ("state.json.tmp." + std::to_string(::getpid()));
  fs::create_symlink(victim, planted);
  ASSERT_TRUE(WriteFileAtomically(path.string(), "new state").ok());
  EXPECT_EQ(gpuattr::testing::ReadFile(victim), "precious");
  EXPECT_EQ(gpuattr::testing::ReadFile(path), "new state");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(path)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(planted)));
  // A dangling symlink (to a file that does not exist yet) is not followed either.
  fs::remove(planted);
  const fs::path nowhere = dir / "created-through-the-link";
  fs::create_symlink(nowhere, planted);
  ASSERT_TRUE(WriteFileAtomically(path.string(), "again").ok());
  EXPECT_FALSE(fs::exists(nowhere));
  EXPECT_EQ(gpuattr::testing::ReadFile(path), "again");
}

// Two daemons on one state file would overwrite each other's counters: the second is refused,
// naming the file and the holder; once the first is gone, the file can be taken again.
TEST(StateFile, ASecondExclusiveOpenIsRefusedNamingTheFileAndTheHolder) {
  TempDir dir;
  const std::string path = (dir / "sub/state.json").string();
  auto first = StateFile::OpenExclusive(path);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = StateFile::OpenExclusive(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(second.error().message, HasSubstr("state file \"" + path + "\" is in use"));
  EXPECT_THAT(second.error().message, HasSubstr("(pid " + std::to_string(::getpid()) + ")"));
  EXPECT_THAT(second.error().message, HasSubstr(path + ".lock"));
  // The read-only view (--once) needs no lock.
  EXPECT_TRUE(StateFile::Open(path, false)->path() == path);
  first->reset();
  auto third = StateFile::OpenExclusive(path);
  EXPECT_TRUE(third.ok());
}

TEST(StateFile, MissingFileIsAFreshStartWithoutWarning) {
  TempDir dir;
  LogCapture logs;
  auto f = StateFile::Open((dir / "state.json").string(), true);
  EXPECT_EQ(f->Load("kind-gpu"), LedgerState{});
  EXPECT_TRUE(logs.Lines("warn").empty());
  EXPECT_FALSE(fs::exists(dir / "state.json"));  // nothing written before a cycle
}

TEST(StateFile, SaveWritesAFileTheNextProcessReads) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  {
    auto f = StateFile::Open(path, true);
    f->Save("kind-gpu", SampleState());
  }
  auto again = StateFile::Open(path, true);
  EXPECT_EQ(again->Load("kind-gpu"), SampleState());
  EXPECT_EQ(again->Load("other"), LedgerState{});
}

TEST(StateFile, KeepsTheSectionsOfClustersNotRunningNow) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  StateFile::Open(path, true)->Save("old-cluster", SampleState());
  StateFile::Open(path, true)->Save("kind-gpu", StateAt(5));
  auto f = StateFile::Open(path, true);
  EXPECT_EQ(f->Load("old-cluster"), SampleState());
  EXPECT_EQ(f->Load("kind-gpu").last_cycle_unix, 5);
}

void ExpectMovedAsideAndFreshStart(const std::string& contents) {
  TempDir dir;
  const fs::path path = dir / "state.json";
  std::ofstream(path) << contents;
  LogCapture logs;
  auto f = StateFile::Open(path.string(), true);
  EXPECT_EQ(f->Load("kind-gpu"), LedgerState{});
  EXPECT_FALSE(fs::exists(path));
  auto files = Listing(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string aside = files[0].string();
  EXPECT_THAT(aside, HasSubstr("state.json.bad-"));
  EXPECT_EQ(gpuattr::testing::ReadFile(files[0]), contents);  // kept for a look, untouched
  auto warnings = logs.Lines("warn");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr(path.string()));
  EXPECT_THAT(warnings[0], HasSubstr(aside));
  // And the fresh start works: the next save writes a good file at the old name.
  f->Save("kind-gpu", SampleState());
  EXPECT_EQ(StateFile::Open(path.string(), true)->Load("kind-gpu"), SampleState());
}

TEST(StateFile, TruncatedFileIsMovedAsideWithOneWarning) {
  const std::string good = EncodeStateFile({{"kind-gpu", SampleState()}});
  ExpectMovedAsideAndFreshStart(good.substr(0, good.size() - 40));
}

TEST(StateFile, ForeignJsonFileIsMovedAsideWithOneWarning) {
  ExpectMovedAsideAndFreshStart("{\"apiVersion\": \"v1\", \"kind\": \"Config\"}\n");
}

TEST(StateFile, BinaryGarbageIsMovedAsideWithOneWarning) {
  ExpectMovedAsideAndFreshStart(std::string("\x00\xff\x13garbage", 10));
}

// The attack of issue 25: a state file edited to publish 1.8e308 J or -1e20 J. Out-of-range
// numbers make the file unusable, like a corrupt one, naming the field and the range.
TEST(StateCodec, RejectsNumbersOutOfRange) {
  for (const char* value : {"1.7e308", "-1e20", "-0.5", "1.000001e18"}) {
    SCOPED_TRACE(value);
    const std::string text =
        std::string(R"({"format": "gpuattr-state", "version": 1, "clusters": {"c": {
        "namespaces": [{"namespace": "ml", "joules": )") +
        value + "}]}}}";
    auto r = DecodeStateFile(text);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("namespaces[0].joules is out of range"));
    EXPECT_THAT(r.error().message, HasSubstr("from 0 to 1e18"));
  }
  auto edge = DecodeStateFile(R"({"format": "gpuattr-state", "version": 1, "clusters": {"c": {
      "namespaces": [{"namespace": "ml", "joules": 1e18, "last_seen_unix": -0.0}]}}})");
  ASSERT_TRUE(edge.ok()) << edge.error().message;
  EXPECT_EQ(edge->at("c").namespaces.at("ml").joules, 1e18);
}

// A file past kMaxStateFileBytes is not decoded at all (an 86 MB file peaked at 800 MB): it is
// moved aside like a corrupt one, and the warning says why.
TEST(StateFile, OversizedFileIsMovedAsideWithOneWarning) {
  std::string big = EncodeStateFile({{"kind-gpu", SampleState()}});
  big.append(kMaxStateFileBytes + 1 - big.size(), ' ');  // still valid JSON, one byte too many
  ExpectMovedAsideAndFreshStart(big);
  TempDir dir;
  const fs::path path = dir / "state.json";
  std::ofstream(path) << big;
  LogCapture logs;
  StateFile::Open(path.string(), true);
  ASSERT_EQ(logs.Lines("warn").size(), 1u);
  EXPECT_THAT(logs.Lines("warn")[0], HasSubstr("larger than the 32 MiB a state file may have"));
  // At the cap itself the file is read.
  big.pop_back();
  std::ofstream(path) << big;
  EXPECT_EQ(StateFile::Open(path.string(), true)->Load("kind-gpu"), SampleState());
}

TEST(StateFile, ReadOnlyNeverChangesTheDisk) {
  TempDir dir;
  const fs::path path = dir / "state.json";
  std::ofstream(path) << "{broken";
  LogCapture logs;
  auto f = StateFile::Open(path.string(), false);
  EXPECT_EQ(logs.Lines("warn").size(), 1u);
  f->Save("kind-gpu", SampleState());
  EXPECT_EQ(f->Load("kind-gpu"), SampleState());  // in memory
  EXPECT_EQ(gpuattr::testing::ReadFile(path), "{broken");
  EXPECT_EQ(Listing(dir.path()), std::vector<fs::path>{path});
}

TEST(StateFile, UnwritableDirectoryWarnsOnceNamingThePathAndRecovers) {
  TempDir dir;
  std::ofstream(dir / "blocked") << "x";  // a file where the directory should be
  const fs::path path = dir / "blocked/state.json";
  LogCapture logs;
  auto f = StateFile::Open(path.string(), true);
  for (int cycle = 0; cycle < 3; ++cycle) f->Save("kind-gpu", SampleState());
  EXPECT_TRUE(f->write_failing());
  auto warnings = logs.Lines("warn");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr(path.string()));
  EXPECT_EQ(f->Load("kind-gpu"), SampleState());  // still counting in memory

  fs::remove(dir / "blocked");
  f->Save("kind-gpu", SampleState());
  EXPECT_FALSE(f->write_failing());
  EXPECT_EQ(logs.Lines("info").size(), 1u);  // "state file written again"
  EXPECT_EQ(StateFile::Open(path.string(), true)->Load("kind-gpu"), SampleState());
}

TEST(StateFile, SessionsOfSeveralClustersSaveConcurrently) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  auto f = StateFile::Open(path, true);
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c)
    threads.emplace_back([&, c] {
      for (int i = 1; i <= 20; ++i) f->Save("cluster-" + std::to_string(c), StateAt(i));
    });
  for (auto& t : threads) t.join();
  auto back = StateFile::Open(path, true);
  for (int c = 0; c < 3; ++c)
    EXPECT_EQ(back->Load("cluster-" + std::to_string(c)).last_cycle_unix, 20);
}

// A session takes its sections: the file writes them from the session's state and, alone, keeps
// no copy (the memory of a second ledger at scale); sections of other clusters stay as read.
TEST(StateFile, ALoneSessionsSectionIsWrittenFromItsOwnState) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  {
    auto f = StateFile::Open(path, true);
    f->Save("old-cluster", SampleState());
    f->Save("kind-gpu", StateAt(5));
  }
  auto f = StateFile::Open(path, true);
  StateFile::Sections taken = f->Take("kind-gpu");
  EXPECT_EQ(taken.ledger.last_cycle_unix, 5);
  EXPECT_EQ(f->Load("kind-gpu"), LedgerState{});  // moved out, not copied
  const LedgerState live = StateAt(9);
  rightsizing::RightsizingState sizing;
  sizing.last_cycle_unix = 9;
  f->Save("kind-gpu", live, &sizing);
  EXPECT_EQ(f->Load("kind-gpu"), LedgerState{});  // still no copy
  auto back = StateFile::Open(path, true);
  EXPECT_EQ(back->Load("kind-gpu"), live);
  EXPECT_EQ(back->LoadRightsizing("kind-gpu"), sizing);
  EXPECT_EQ(back->Load("old-cluster"), SampleState());
}

// Two sessions share the file: each write has both clusters' latest sections.
TEST(StateFile, SessionsSharingTheFileEachWriteTheOthersLatest) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  auto f = StateFile::Open(path, true);
  f->Take("a");
  f->Take("b");
  f->Save("a", StateAt(1));
  f->Save("b", StateAt(2));
  f->Save("a", StateAt(3));
  auto back = StateFile::Open(path, true);
  EXPECT_EQ(back->Load("a").last_cycle_unix, 3);
  EXPECT_EQ(back->Load("b").last_cycle_unix, 2);
}

// --- restart ------------------------------------------------------------------------------------

// Write the state, build a new Ledger from the file, continue: the idle run and the counters go
// on as if gpuattr had not stopped.
TEST(StateFile, ARestartKeepsTheIdleRunAndTheCounters) {
  TempDir dir;
  const std::string path = (dir / "state.json").string();
  {
    auto f = StateFile::Open(path, true);
    Ledger ledger(LedgerParams{}, f->Load("kind-gpu"));
    ledger.Record(OnePod(100, true), 1000);
    ledger.Record(OnePod(100, true), 1020);
    f->Save("kind-gpu", ledger.state());
  }
  auto f = StateFile::Open(path, true);
  Ledger restarted(LedgerParams{}, f->Load("kind-gpu"));
  const attribution::Attribution a = OnePod(100, true);
  LedgerView v = restarted.Record(a, 1060);  // one missed cycle while restarting
  std::vector<PodLedgerRef> rows;
  ForEachPodLedger(v, a.pods, [&](const PodLedgerRef& r) { rows.push_back(r); });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].idle_seconds, 60.0);
  ASSERT_TRUE(rows[0].energy_joules);
  EXPECT_DOUBLE_EQ(*rows[0].energy_joules, 6000);
  ASSERT_EQ(v.namespaces.size(), 1u);
  EXPECT_DOUBLE_EQ(v.namespaces[0].energy_joules, 6000);
}

}  // namespace
}  // namespace gpuattr::ledger
