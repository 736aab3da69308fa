#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "gpuattr/app/run.h"
#include "gpuattr/app/shutdown.h"
#include "gpuattr/util/clock.h"
#include "gpuattr/util/log.h"
#include "support/fake_clock.h"

namespace gpuattr::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// A scripted cluster: answers `up` (changeable between cycles), counts its cycles, and can block
// inside RunCycle until Cancel() is called.
class FakeSession : public ClusterSession {
 public:
  explicit FakeSession(std::string name, bool up = true) : up_(up), name_(std::move(name)) {}
  std::string Cluster() const override { return name_; }
  model::CycleResult RunCycle() override {
    model::CycleResult r;
    int n = ++cycles_;
    if (block_until_cancel_) {
      std::unique_lock<std::mutex> lock(mu_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait_for(lock, 10s, [&] { return cancelled_; });
    }
    r.up = up_.load();
    if (!r.up) r.errors.push_back("apiserver \"https://10.0.0.1\" refused the connection <x>");
    if (r.up && with_output_) {
      auto out = std::make_shared<model::CycleOutput>();
      out->ledger.recorded_unix = n;  // tells the cycles apart
      r.output = out;
    }
    if (sleep_.count() > 0) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, sleep_, [&] { return cancelled_; });
    }
    r.apiserver_requests[{"list", "pods", "200"}] = static_cast<uint64_t>(n);
    return r;
  }
  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  bool WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return entered_; });
  }

  std::atomic<int> cycles_{0};
  std::atomic<bool> up_;
  bool block_until_cancel_ = false;
  bool with_output_ = false;
  std::chrono::milliseconds sleep_{0};  // each cycle takes this long (or until Cancel)
  bool cancelled_ = false;

 private:
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
};

class AppLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Shutdown::Instance().Reset();
    log::SetSink([this](std::string_view l) {
      std::lock_guard<std::mutex> lock(log_mu_);
      lines_.emplace_back(l);
    });
  }
  void TearDown() override {
    log::ResetSink();
    Shutdown::Instance().Uninstall();
    Shutdown::Instance().Reset();
  }
  std::string Logs() {
    std::lock_guard<std::mutex> lock(log_mu_);
    std::string all;
    for (const auto& l : lines_) all += l + "\n";
    return all;
  }
  std::mutex log_mu_;
  std::vector<std::string> lines_;
};

TEST_F(AppLoopTest, PublishesOnlyCompleteSnapshotsAndKeepsLastSuccess) {
  auto store = std::make_shared<metrics::SnapshotStore>();
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("a"));
  sessions.push_back(std::make_unique<FakeSession>("b", false));
  auto* a = static_cast<FakeSession*>(sessions[0].get());
  CycleLoop loop(std::move(sessions), store);

  auto before = store->Get();
  EXPECT_FALSE(before->complete);
  ASSERT_EQ(before->clusters.size(), 2u);
  EXPECT_EQ(before->clusters[0].cluster, "a");

  auto first = loop.RunOnce();
  EXPECT_EQ(store->Get(), first);
  EXPECT_TRUE(first->complete);
  EXPECT_TRUE(first->clusters[0].latest.up);
  EXPECT_TRUE(first->clusters[0].last_success_unix_seconds.has_value());
  EXPECT_FALSE(first->clusters[1].latest.up);
  EXPECT_FALSE(first->clusters[1].last_success_unix_seconds.has_value());
  ASSERT_EQ(first->clusters[1].latest.errors.size(), 1u);
  EXPECT_EQ(first->clusters[0].latest.apiserver_requests.at({"list", "pods", "200"}), 1u);

  a->up_ = false;  // the cluster goes away: the last success time stays, marking stale data
  auto second = loop.RunOnce();
  EXPECT_FALSE(second->clusters[0].latest.up);
  EXPECT_EQ(second->clusters[0].last_success_unix_seconds,
            first->clusters[0].last_success_unix_seconds);
  EXPECT_EQ(second->clusters[0].cycles, 2u);
  EXPECT_EQ(second->clusters[0].latest.apiserver_requests.at({"list", "pods", "200"}), 2u);
  // The snapshot published earlier is immutable: readers holding it see the old values.
  EXPECT_TRUE(first->clusters[0].latest.up);

  std::string logs = Logs();
  EXPECT_THAT(logs, HasSubstr("level=info msg=\"cycle finished\" cluster=a up=true"));
  EXPECT_THAT(logs, HasSubstr("level=warn msg=\"cycle error\" cluster=b err="));
}

TEST_F(AppLoopTest, ClustersRunInParallel) {
  // Each session waits (bounded) until the other one has started: only a parallel loop lets both
  // see each other.
  struct Rendezvous {
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
  };
  class MeetSession : public ClusterSession {
   public:
    MeetSession(std::string n, Rendezvous& r) : name_(std::move(n)), r_(r) {}
    std::string Cluster() const override { return name_; }
    model::CycleResult RunCycle() override {
      std::unique_lock<std::mutex> lock(r_.mu);
      r_.arrived++;
      r_.cv.notify_all();
      model::CycleResult res;
      res.up = r_.cv.wait_for(lock, 5s, [&] { return r_.arrived >= 2; });
      return res;
    }

   private:
    std::string name_;
    Rendezvous& r_;
  };
  Rendezvous r;
  SessionList sessions;
  sessions.push_back(std::make_unique<MeetSession>("x", r));
  sessions.push_back(std::make_unique<MeetSession>("y", r));
  CycleLoop loop(std::move(sessions), std::make_shared<metrics::SnapshotStore>());
  auto snap = loop.RunOnce();
  EXPECT_TRUE(snap->clusters[0].latest.up);
  EXPECT_TRUE(snap->clusters[1].latest.up);
}

// docs/design.md#honest-status: a failed cycle keeps the last good cycle's output served unchanged,
// for up to stale_after after the last success; then it is dropped (and the cluster is down).
TEST_F(AppLoopTest, LastGoodOutputIsServedUntilStaleAfterThenDropped) {
  FakeClock clock;
  auto store = std::make_shared<metrics::SnapshotStore>();
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("a"));
  auto* a = static_cast<FakeSession*>(sessions[0].get());
  a->with_output_ = true;
  LoopOptions options;
  options.stale_after = std::chrono::minutes(5);
  CycleLoop loop(std::move(sessions), store, clock, options);

  auto good = loop.RunOnce();
  ASSERT_TRUE(good->clusters[0].latest.output);
  const auto output = good->clusters[0].latest.output;
  const double success = *good->clusters[0].last_success_unix_seconds;

  a->up_ = false;
  clock.Advance(std::chrono::minutes(4));
  auto failing = loop.RunOnce();
  EXPECT_FALSE(failing->clusters[0].latest.up);
  EXPECT_EQ(failing->clusters[0].latest.output, output);  // the very same, unchanged
  EXPECT_EQ(failing->clusters[0].last_success_unix_seconds, success);
  EXPECT_EQ(failing->clusters[0].last_attempt_unix_seconds, success + 240);

  clock.Advance(std::chrono::seconds(61));  // 5 min 1 s after the last success
  auto stale = loop.RunOnce();
  EXPECT_EQ(stale->clusters[0].latest.output, nullptr);
  EXPECT_EQ(stale->clusters[0].last_success_unix_seconds, success);
  EXPECT_TRUE(stale->complete);  // still ready: gpuattr's own series are served
  EXPECT_THAT(Logs(), HasSubstr("no longer served"));

  a->up_ = true;  // back: fresh output again
  auto back = loop.RunOnce();
  ASSERT_TRUE(back->clusters[0].latest.output);
  EXPECT_NE(back->clusters[0].latest.output, output);
  EXPECT_GT(*back->clusters[0].last_success_unix_seconds, success);
}

TEST(AppLoopRecord, FailedCyclesKeepOutputAndDiscoveryAndTheSuccessTime) {
  model::ClusterSnapshot c;
  model::CycleResult good;
  good.up = true;
  good.output = std::make_shared<model::CycleOutput>();
  auto report = std::make_shared<discovery::DiscoveryReport>();
  report->exporters.resize(2);
  report->exporters[0].pod = "dcgm-a";
  report->exporters[0].up = true;
  report->exporters[1].pod = "dcgm-b";
  report->exporters[1].reason = "HTTP 503";
  report->probes.resize(1);
  good.discovery = report;
  RecordCycle(c, good, 0.5, 1000);
  EXPECT_EQ(c.last_success_unix_seconds, 1000.0);

  model::CycleResult bad;  // the apiserver is down: no discovery either
  bad.errors = {"down"};
  RecordCycle(c, bad, 0.2, 1020);
  EXPECT_EQ(c.latest.output, good.output);
  // The last report stays, but its exporters were not read this cycle: published down.
  ASSERT_TRUE(c.latest.discovery);
  ASSERT_EQ(c.latest.discovery->exporters.size(), 2u);
  EXPECT_FALSE(c.latest.discovery->exporters[0].up);
  EXPECT_THAT(c.latest.discovery->exporters[0].reason, HasSubstr("cycle failed"));
  EXPECT_EQ(c.latest.discovery->exporters[1].reason, "HTTP 503");  // was down already: as it was
  EXPECT_EQ(c.latest.discovery->probes.size(), 1u);
  EXPECT_TRUE(good.discovery->exporters[0].up);  // the published report itself is not changed
  EXPECT_EQ(c.last_success_unix_seconds, 1000.0);
  EXPECT_EQ(c.last_attempt_unix_seconds, 1020.0);
  EXPECT_EQ(c.cycles, 2u);

  model::CycleResult silent;  // discovery ran (every exporter failed), the cycle did not
  silent.discovery = std::make_shared<discovery::DiscoveryReport>();
  silent.output = std::make_shared<model::CycleOutput>();  // a failed cycle's output is ignored
  RecordCycle(c, silent, 0.2, 1040);
  EXPECT_EQ(c.latest.discovery, silent.discovery);  // the fresh report says why
  EXPECT_EQ(c.latest.output, good.output);

  EXPECT_FALSE(DropStale(c, 1300, 300));  // exactly stale_after: still served
  EXPECT_TRUE(DropStale(c, 1300.5, 300));
  EXPECT_EQ(c.latest.output, nullptr);
  EXPECT_FALSE(DropStale(c, 2000, 300));  // nothing left to drop
}

// docs/design.md#clusters-are-independent: clusters are independent. One cluster's cycle takes 3 s
// (a dead target); the other's data keeps its 100 ms interval meanwhile, each of its cycles
// published at once.
TEST_F(AppLoopTest, ASlowClusterNeverDelaysAnotherOnesData) {
  ASSERT_TRUE(Shutdown::Instance().Install().ok());
  auto store = std::make_shared<metrics::SnapshotStore>();
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("healthy"));
  sessions.push_back(std::make_unique<FakeSession>("dead-target"));
  auto* healthy = static_cast<FakeSession*>(sessions[0].get());
  auto* slow = static_cast<FakeSession*>(sessions[1].get());
  slow->sleep_ = 3s;
  CycleLoop loop(std::move(sessions), store);
  auto done = std::async(std::launch::async, [&] { loop.RunUntilShutdown(100ms); });

  // Watch what is published, as a scraper would: the healthy cluster's cycle count, by time.
  std::vector<std::pair<double, uint64_t>> seen;  // (seconds since start, healthy cycles)
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 1500ms) {
    auto snap = store->Get();
    uint64_t n = snap->clusters[0].cycles;
    if (seen.empty() || seen.back().second != n)
      seen.emplace_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), n);
    std::this_thread::sleep_for(5ms);
  }
  auto mid = store->Get();
  EXPECT_EQ(mid->clusters[1].cycles, 0u);  // the slow one is still in its first cycle
  EXPECT_FALSE(mid->complete);             // so not every cluster has finished one yet
  ASSERT_GE(seen.size(), 2u);
  // ~15 cycles in 1.5 s at 100 ms; allow a loaded machine a third of that.
  EXPECT_GE(seen.back().second, 5u);
  // The healthy cluster's publications keep (about) its interval: the typical gap is the
  // interval, and no gap comes near the slow cluster's 3 s.
  std::vector<double> gaps;
  for (size_t i = 1; i < seen.size(); ++i) gaps.push_back(seen[i].first - seen[i - 1].first);
  std::sort(gaps.begin(), gaps.end());
  EXPECT_LT(gaps[gaps.size() / 2], 0.3);
  EXPECT_LT(gaps.back(), 1.5);

  // SIGTERM while the slow cycle still runs: it is cancelled, and the loop ends promptly.
  const auto stop_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, 2s);
  EXPECT_TRUE(slow->cancelled_);
  EXPECT_GE(healthy->cycles_, 7);
}

TEST_F(AppLoopTest, SigtermStopsTheLoopDuringTheWait) {
  ASSERT_TRUE(Shutdown::Instance().Install().ok());
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("a"));
  auto* a = static_cast<FakeSession*>(sessions[0].get());
  CycleLoop loop(std::move(sessions), std::make_shared<metrics::SnapshotStore>());
  // An interval of an hour: only the signal can end the wait.
  auto done = std::async(std::launch::async, [&] { loop.RunUntilShutdown(std::chrono::hours(1)); });
  for (int i = 0; i < 1000 && a->cycles_ == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(a->cycles_, 1);
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  bool stopped = done.wait_for(10s) == std::future_status::ready;
  if (!stopped) Shutdown::Instance().Request();  // unblock before failing
  EXPECT_TRUE(stopped) << "the loop did not stop after SIGTERM";
  done.wait();
  EXPECT_TRUE(Shutdown::Instance().Requested());
  EXPECT_EQ(a->cycles_, 1);
}

// SIGHUP asks the loop's thread whether to reload. An unusable configuration (false) changes
// nothing: no extra cycle, the loop and its sessions go on, the pipe is drained (no busy
// wake-ups). A usable one (true) cancels the sessions and returns kReload, not a shutdown.
TEST_F(AppLoopTest, SighupAsksWhetherToReloadAndOnlyAYesEndsTheLoop) {
  ASSERT_TRUE(Shutdown::Instance().Install().ok());
  ASSERT_TRUE(Shutdown::Instance().InstallReload().ok());
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("a"));
  auto* a = static_cast<FakeSession*>(sessions[0].get());
  auto store = std::make_shared<metrics::SnapshotStore>();
  CycleLoop loop(std::move(sessions), store);
  std::atomic<int> asked{0};
  std::atomic<bool> accept{false};
  auto done = std::async(std::launch::async, [&] {
    return loop.RunUntilShutdown(std::chrono::hours(1), [&] {
      ++asked;
      if (!accept.load()) loop.SetConfigReload({false, 7});
      return accept.load();
    });
  });
  struct StopOnFailure {  // a failed assertion must not leave the loop (and `done`) waiting
    ~StopOnFailure() { Shutdown::Instance().Request(); }
  } stop_on_failure;
  for (int i = 0; i < 1000 && a->cycles_ == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(a->cycles_, 1);

  ASSERT_EQ(kill(getpid(), SIGHUP), 0);
  for (int i = 0; i < 1000 && asked == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(asked, 1);
  for (int i = 0; i < 1000 && Shutdown::Instance().ReloadRequested(); ++i)
    std::this_thread::sleep_for(1ms);
  ASSERT_FALSE(Shutdown::Instance().ReloadRequested());
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(Shutdown::Instance().WaitFor(50ms));  // drained: a wait lasts its time again
  EXPECT_GE(std::chrono::steady_clock::now() - before, 45ms);
  EXPECT_EQ(done.wait_for(100ms), std::future_status::timeout);
  EXPECT_EQ(a->cycles_, 1);  // the cluster's hour-long wait went on
  ASSERT_TRUE(store->Get()->config_reload);
  EXPECT_FALSE(store->Get()->config_reload->last_successful);
  EXPECT_FALSE(a->cancelled_);

  accept = true;
  ASSERT_EQ(kill(getpid(), SIGHUP), 0);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(done.get(), LoopEnd::kReload);
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(a->cancelled_);
  EXPECT_FALSE(Shutdown::Instance().Requested());
  EXPECT_EQ(loop.TakeSessions().size(), 1u);
}

TEST_F(AppLoopTest, ShutdownMidCycleCancelsTheSessions) {
  ASSERT_TRUE(Shutdown::Instance().Install().ok());
  SessionList sessions;
  sessions.push_back(std::make_unique<FakeSession>("slow"));
  auto* slow = static_cast<FakeSession*>(sessions[0].get());
  slow->block_until_cancel_ = true;
  CycleLoop loop(std::move(sessions), std::make_shared<metrics::SnapshotStore>());
  auto done = std::async(std::launch::async, [&] { return loop.RunOnce(); });
  ASSERT_TRUE(slow->WaitEntered());
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(slow->cancelled_);
  EXPECT_TRUE(done.get()->complete);
}

TEST_F(AppLoopTest, ShutdownWaitEndsOnRequestAndOnlyThen) {
  ASSERT_TRUE(Shutdown::Instance().Install().ok());
  EXPECT_FALSE(Shutdown::Instance().WaitFor(20ms));  // nobody asked: the wait simply ends
  EXPECT_FALSE(Shutdown::Instance().Requested());
  std::thread other([] { Shutdown::Instance().Request(); });
  EXPECT_TRUE(Shutdown::Instance().WaitFor(10s));
  other.join();
  EXPECT_TRUE(Shutdown::Instance().WaitFor(0ms));  // stays requested for every later wait
  Shutdown::Instance().Reset();
  EXPECT_FALSE(Shutdown::Instance().Requested());
}

TEST_F(AppLoopTest, OncePrintsTheExpositionAndExitsZero) {
  Config cfg;
  cfg.once = true;
  cfg.clusters = {{"ctx-a", "lab"}};
  SessionFactory factory = [](const Config& c) -> Result<SessionList> {
    SessionList s;
    for (const auto& cl : c.clusters) s.push_back(std::make_unique<FakeSession>(cl.Label()));
    return s;
  };
  std::ostringstream out, err;
  EXPECT_EQ(app::Run(cfg, factory, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 1\n"));
  EXPECT_THAT(out.str(), HasSubstr("gpuattr_apiserver_requests_total{cluster=\"lab\""));
  EXPECT_EQ(err.str(), "");
}

TEST_F(AppLoopTest, OnceFailsClearlyWhenNoClusterAnswers) {
  Config cfg;
  cfg.once = true;
  cfg.clusters = {{"a", ""}, {"b", ""}};
  SessionFactory factory = [](const Config& c) -> Result<SessionList> {
    SessionList s;
    for (const auto& cl : c.clusters) s.push_back(std::make_unique<FakeSession>(cl.Label(), false));
    return s;
  };
  std::ostringstream out, err;
  EXPECT_EQ(app::Run(cfg, factory, out, err), kExitFailure);
  EXPECT_THAT(err.str(), HasSubstr("gpuattr: no cluster answered"));
  EXPECT_THAT(err.str(), HasSubstr("a: apiserver \"https://10.0.0.1\" refused the connection"));
  EXPECT_THAT(out.str(), HasSubstr("gpuattr_cluster_up{cluster=\"b\"} 0\n"));
}

TEST_F(AppLoopTest, FactoryErrorsAreUsageErrorsNamingTheCause) {
  Config cfg;
  cfg.once = true;
  SessionFactory factory = [](const Config&) -> Result<SessionList> {
    return MakeError(ErrorCode::kNotFound, "context \"nope\" not found in /home/me/.kube/config");
  };
  std::ostringstream out, err;
  EXPECT_EQ(app::Run(cfg, factory, out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("context \"nope\" not found"));
  EXPECT_EQ(out.str(), "");
}

TEST_F(AppLoopTest, CredentialsAreReadFromFilesAndErrorsNameTheFile) {
  char path[] = "/tmp/gpuattr-pw-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "s3cret\n", 7), 7);
  close(fd);
  auto ok = ReadCredentials({{"prom", path}});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)[0].password, "s3cret");
  auto missing = ReadCredentials({{"prom", "/nonexistent/pw"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/pw"));
  EXPECT_THAT(missing.error().message, Not(HasSubstr("s3cret")));
  unlink(path);
}

}  // namespace
}  // namespace gpuattr::app
