// Issue 25's login flood against the gpuattr binary: basic auth from a web config file (bcrypt
// cost 10, ~0.1 s a check), 120 connections sending a wrong password at once. bcrypt runs on one
// thread with at most 64 logins waiting (docs/security.md#serving): the rest are refused at once
// (503, counted as gpuattr_http_refused_total{reason="login_queue_full"}), and Prometheus's
// remembered credentials are answered within 100 ms throughout.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/http/basic_auth.h"
#include "support/fake_apiserver.h"
#include "support/generated_cluster.h"
#include "support/paths.h"
#include "support/raw_client.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr char kRight[] = "Authorization: Basic cHJvbWV0aGV1czpyaWdodA==\r\n";  // prometheus:right
constexpr char kWrong[] = "Authorization: Basic cHJvbWV0aGV1czp3cm9uZw==\r\n";  // prometheus:wrong

// The value of `series` (name and labels as printed) in an exposition, or -1.
double ValueOf(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

TEST(LoginQueue, WrongPasswordsAreRefusedWhenTheQueueIsFullARememberedLoginWithin100Ms) {
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-login-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto hash = http::BcryptHash("right", 10);  // the usual cost
  ASSERT_TRUE(hash.ok());
  std::ofstream(dir / "web.yml") << "basic_auth_users:\n  prometheus: '" << *hash << "'\n";
  GeneratedClusterSpec spec;
  spec.nodes = 2;
  FakeApiServer api(GenerateCluster(spec));
  ASSERT_TRUE(api.Start().ok());
  KubeconfigOptions lab;
  lab.context = "lab";
  ASSERT_TRUE(api.WriteKubeconfig(dir / "kubeconfig", lab).ok());
  Child c =
      SpawnChild({DaemonBinary(), "--kubeconfig", (dir / "kubeconfig").string(),
                  "--web.config.file", (dir / "web.yml").string(), "--web.listen-address",
                  "127.0.0.1:0", "--interval", "2s", "--state.file", (dir / "state.json").string()},
                 EnvironmentWithout({"KUBECONFIG"}), dir);
  ASSERT_GT(c.pid, 0);
  struct Stop {
    Child& c;
    fs::path dir;
    ~Stop() {
      kill(c.pid, SIGTERM);
      WaitChild(c.pid, 10s);
      fs::remove_all(dir);
    }
  } stop{c, dir};
  const int port = WaitForServingPort(c.err, 10s, 1, ".* basic_auth=true");
  ASSERT_GT(port, 0) << SlurpFile(c.err);

  // A request from the scraper's address (127.0.0.1); its status, its time and what it got.
  auto get = [&](const std::string& path, const std::string& auth) {
    const auto start = SteadyClock::now();
    Raw r(port);
    r.Send(Get(path, auth));
    const std::string got = r.ReadResponse(10s);
    return std::make_tuple(StatusOf(got),
                           std::chrono::duration<double, std::milli>(SteadyClock::now() - start),
                           BodyOf(got));
  };
  // The first cycle, and the right password paid for once: remembered from now on.
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {  // <= 60 s
    ready = std::get<0>(get("/readyz", kRight)) == 200;
    if (!ready) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(ready) << SlurpFile(c.err);
  ASSERT_EQ(std::get<0>(get("/metrics", kWrong)), 401);  // bcrypt is idle: checked and refused

  // 120 guesses from 127.0.0.30 and .31 (60 each: under the per-peer cap of 64), all sent before
  // any is answered.
  std::vector<std::unique_ptr<Raw>> guessers;
  for (int i = 0; i < 120; ++i) {
    guessers.push_back(std::make_unique<Raw>(port, "127.0.0." + std::to_string(30 + i / 60)));
    ASSERT_TRUE(guessers.back()->connected()) << i << ": " << guessers.back()->error();
  }
  for (auto& g : guessers) ASSERT_TRUE(g->Send(Get("/metrics", kWrong)));
  std::this_thread::sleep_for(300ms);  // the guesses are queued and bcrypt is busy with them

  std::vector<double> took;
  for (int i = 0; i < 10; ++i) {
    const auto [status, ms, body] = get("/metrics", kRight);
    EXPECT_EQ(status, 200);
    took.push_back(ms.count());
    std::this_thread::sleep_for(50ms);
  }
  size_t unauthorized = 0, queue_full = 0;
  for (auto& g : guessers) {
    const int status = StatusOf(g->ReadResponse(60s));
    unauthorized += status == 401;
    queue_full += status == 503;
  }
  const double slowest = *std::max_element(took.begin(), took.end());
  std::cout << "[ login    ] 120 wrong passwords against the binary: remembered login took at most "
            << slowest << " ms (10 tries); guesses answered 401: " << unauthorized
            << ", 503 (login queue full): " << queue_full << "\n";
  EXPECT_LT(slowest, 100.0);
  EXPECT_EQ(unauthorized + queue_full, 120u) << "every guess is answered";
  EXPECT_GT(queue_full, 0u) << "one login in bcrypt, at most 64 waiting";
  EXPECT_GE(unauthorized, 64u) << "the 64 that waited are checked and refused";

  // Counted by reason, as of the next publication (every 2 s).
  std::string metrics;
  double counted_full = -1, counted_unauthorized = -1;
  for (int i = 0; i < 100 && (counted_full != static_cast<double>(queue_full) ||
                              counted_unauthorized != static_cast<double>(unauthorized + 1));
       ++i) {  // <= 10 s
    std::this_thread::sleep_for(100ms);
    metrics = std::get<2>(get("/metrics", kRight));
    counted_full = ValueOf(metrics, "gpuattr_http_refused_total{reason=\"login_queue_full\"}");
    counted_unauthorized = ValueOf(metrics, "gpuattr_http_refused_total{reason=\"unauthorized\"}");
  }
  EXPECT_EQ(counted_full, static_cast<double>(queue_full));
  EXPECT_EQ(counted_unauthorized, static_cast<double>(unauthorized + 1));  // + the one before
}

}  // namespace
}  // namespace gpuattr::testing
