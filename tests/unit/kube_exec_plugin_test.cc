// Exec credential plugins: ExecCredential parsing, KUBERNETES_EXEC_INFO, PATH lookup, and real
// runs of small shell scripts (started directly, through their shebang). No network.
#include "gpuattr/kube/exec_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "gpuattr/util/log.h"

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kV1 = "client.authentication.k8s.io/v1";

TEST(Rfc3339, ParsesUtcOffsetsAndFractions) {
  auto t = ParseRfc3339("2026-11-30T01:02:03Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count(),
            1796000523);
  auto offset = ParseRfc3339("2026-11-30T03:02:03+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset, *t);
  auto west = ParseRfc3339("2026-11-29T23:32:03-01:30");
  ASSERT_TRUE(west);
  EXPECT_EQ(*west, *t);
  auto frac = ParseRfc3339("2026-11-30T01:02:03.250Z");
  ASSERT_TRUE(frac);
  EXPECT_EQ(*frac - *t, std::chrono::milliseconds(250));
  EXPECT_EQ(ParseRfc3339("2999-01-01T00:00:00Z"), system_clock::time_point::max());
  for (const char* bad :
       {"", "2026-11-30", "2026-11-30T01:02:03", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-30T01:02:03Zjunk", "2026-11-30T1:02:03Z", "2026-11-30T01:02:03.Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
  }
}

TEST(ExecCredentialParse, TokenCertAndExpiry) {
  auto tok = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"abc","expirationTimestamp":"2026-11-30T01:02:03Z"}})",
      kV1, "plugin");
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ(tok->token, "abc");
  EXPECT_EQ(tok->expiry, ParseRfc3339("2026-11-30T01:02:03Z"));
  auto cert = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
          "status":{"clientCertificateData":"C","clientKeyData":"K"}})",
      "client.authentication.k8s.io/v1beta1", "plugin");
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(cert->client_cert_pem, "C");
  EXPECT_EQ(cert->client_key_pem, "K");
  EXPECT_FALSE(cert->expiry);
}

TEST(ExecCredentialParse, ErrorsExplainWithoutQuotingOutput) {
  struct Case {
    std::string out, expect;
  };
  const Case cases[] = {
      {"token-secret-xyz not json", "not a JSON ExecCredential (parse error at byte"},
      {R"(["token-secret-xyz"])", "not a JSON ExecCredential object"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Other"})", "has kind \"Other\""},
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"token-secret-xyz"}})",
       "asks for apiVersion \"client.authentication.k8s.io/v1\" but the plugin returned "
       "\"client.authentication.k8s.io/v1beta1\""},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})", "no status"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
       "neither a token nor"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientKeyData":"token-secret-xyz"}})",
       "only one of clientCertificateData and clientKeyData"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"token-secret-xyz","expirationTimestamp":"tomorrow"}})",
       "expirationTimestamp \"tomorrow\" is not RFC 3339"},
  };
  for (const auto& c : cases) {
    auto r = ParseExecCredential(c.out, kV1, "exec plugin \"p\"");
    ASSERT_FALSE(r.ok()) << c.out;
    EXPECT_THAT(r.error().message, HasSubstr(c.expect)) << c.out;
    EXPECT_THAT(r.error().message, HasSubstr("exec plugin \"p\": "));
    EXPECT_THAT(r.error().message, Not(HasSubstr("token-secret-xyz")));
  }
}

TEST(ExecInfo, ClusterOnlyWhenProvideClusterInfo) {
  ExecPluginRun run;
  run.config.api_version = kV1;
  run.server = "https://1.2.3.4:6443";
  run.ca_pem = "PEM";
  run.tls_server_name = "kubernetes";
  run.proxy_url = "http://proxy:3128";
  auto plain = nlohmann::json::parse(BuildExecInfo(run));
  EXPECT_EQ(plain, nlohmann::json::parse(
                       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                           "spec":{"interactive":false}})"));
  run.config.provide_cluster_info = true;
  run.config.cluster_config_json = R"({"x":1})";
  auto info = nlohmann::json::parse(BuildExecInfo(run));
  EXPECT_EQ(
      info["spec"]["cluster"],
      nlohmann::json::parse(R"({"server":"https://1.2.3.4:6443","tls-server-name":"kubernetes",
              "certificate-authority-data":"UEVN","proxy-url":"http://proxy:3128","config":{"x":1}})"));
}

// Ours, then the plugin's env, then KUBERNETES_EXEC_INFO: a later entry replaces the first one of
// its name where it stands (a prefix of another name is not its name); new names are appended.
TEST(ExecEnvironment, LaterEntriesReplaceEarlierOnesInPlace) {
  ExecPluginRun run;
  run.config.api_version = kV1;
  run.config.env = {{"HOME", "/plugin"},
                    {"KUBERNETES_EXEC_INFO", "from the kubeconfig"},
                    {"TOKEN_DIR", "/t"},
                    {"HOME", "/again"}};
  const char* ours[] = {"PATH=/bin", "HOME=/root", "HOMEDIR=/x", "HOME=/second", nullptr};
  const std::string info = "KUBERNETES_EXEC_INFO=" + BuildExecInfo(run);
  EXPECT_EQ(BuildExecEnvironment(run, ours),
            (std::vector<std::string>{"PATH=/bin", "HOME=/again", "HOMEDIR=/x", "HOME=/second",
                                      info, "TOKEN_DIR=/t"}));
  EXPECT_EQ(BuildExecEnvironment(ExecPluginRun{}, nullptr),
            (std::vector<std::string>{"KUBERNETES_EXEC_INFO=" + BuildExecInfo(ExecPluginRun{})}));
}

class ExecRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-exec-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    log::SetSink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      logs_.emplace_back(line);
    });
    run_.config.api_version = kV1;
    run_.user_name = "u";
    run_.kubeconfig_path = "/path/kubeconfig";
  }
  void TearDown() override {
    log::ResetSink();
    fs::remove_all(dir_);
  }
  std::string Script(const std::string& name, const std::string& body) {
    fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  std::string AllLogs() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const auto& l : logs_) all += l + "\n";
    return all;
  }
  fs::path dir_;
  ExecPluginRun run_;
  std::mutex mu_;
  std::vector<std::string> logs_;
};

TEST_F(ExecRunTest, RunsWithArgsEnvAndLogsStderrButNotStdout) {
  run_.config.command =
      Script("p.sh",
             "echo \"warming up $1\" >&2\n"
             "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
             "\"status\":{\"token\":\"%s-%s\"}}' \"$API\" \"$2\" \"$SECRET_SUFFIX\"\n");
  run_.config.args = {"cache", "stdout-token"};
  run_.config.env = {{"API", kV1}, {"SECRET_SUFFIX", "zz"}};
  auto cred = RunExecPlugin(run_);
  ASSERT_TRUE(cred.ok()) << cred.error().message;
  EXPECT_EQ(cred->token, "stdout-token-zz");
  std::string logs = AllLogs();
  EXPECT_THAT(logs, HasSubstr("warming up cache"));
  EXPECT_THAT(logs, HasSubstr("level=warn"));
  EXPECT_THAT(logs, Not(HasSubstr("stdout-token")));
}

// The plugin's stderr may hold a device-login code: it goes to the log, never into the error
// (which reaches CycleResult errors and the status page).
TEST_F(ExecRunTest, NonZeroExitReportsTheCodeAndLeavesStderrToTheLog) {
  run_.config.command =
      Script("p.sh",
             "echo first >&2\necho 'To sign in, enter the code DEVCODE-42 at the login page' >&2\n"
             "echo '{\"partial\":\"secret-on-stdout\"}'\nexit 3\n");
  auto cred = RunExecPlugin(run_);
  ASSERT_FALSE(cred.ok());
  EXPECT_EQ(cred.error().message, "exec plugin \"" + run_.config.command +
                                      "\" (user \"u\" in /path/kubeconfig) exited with code 3 "
                                      "(its stderr is in gpuattr's log)");
  EXPECT_THAT(AllLogs(), HasSubstr("DEVCODE-42"));
  EXPECT_THAT(AllLogs(), Not(HasSubstr("secret-on-stdout")));
}

// A chatty plugin cannot flood the log: long lines are cut, and lines past the first 20 are
// counted, not logged.
TEST_F(ExecRunTest, StderrIsTruncatedInTheLog) {
  run_.config.command = Script("p.sh",
                               "head -c 5000 /dev/zero | tr '\\0' x >&2\necho >&2\n"
                               "i=0; while [ $i -lt 50 ]; do echo \"line-$i\" >&2; i=$((i+1)); "
                               "done\nexit 1\n");
  auto cred = RunExecPlugin(run_);
  ASSERT_FALSE(cred.ok());
  EXPECT_THAT(cred.error().message, Not(HasSubstr("line-")));
  const std::string logs = AllLogs();
  EXPECT_THAT(logs, HasSubstr(std::string(512, 'x')));
  EXPECT_THAT(logs, Not(HasSubstr(std::string(513, 'x'))));
  EXPECT_THAT(logs, HasSubstr("line=line-18"));
  EXPECT_THAT(logs, Not(HasSubstr("line=line-19")));
  EXPECT_THAT(logs, HasSubstr("msg=\"exec plugin message lines dropped\""));
  EXPECT_THAT(logs, HasSubstr("dropped=31"));
}

TEST_F(ExecRunTest, MissingBinaryNamesItTheUserAndTheKubeconfig) {
  run_.config.command = "gke-gcloud-auth-plugin-not-installed";
  run_.path_env = dir_.string() + ":/nonexistent";
  auto cred = RunExecPlugin(run_);
  ASSERT_FALSE(cred.ok());
  EXPECT_EQ(cred.error().message,
            "exec plugin \"gke-gcloud-auth-plugin-not-installed\" not found in PATH (user \"u\" in "
            "/path/kubeconfig)");
  run_.config.command = (dir_ / "nope").string();
  cred = RunExecPlugin(run_);
  ASSERT_FALSE(cred.ok());
  EXPECT_THAT(cred.error().message, HasSubstr("\"" + (dir_ / "nope").string() + "\" not found ("));
}

TEST_F(ExecRunTest, BareNamesAreFoundInPath) {
  Script("my-plugin", "exit 0\n");
  run_.config.command = "my-plugin";
  run_.path_env = "/nonexistent:" + dir_.string();
  auto exe = FindExecutable(run_);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  EXPECT_EQ(*exe, (dir_ / "my-plugin").string());
  // A file that is not executable is skipped.
  std::ofstream(dir_ / "plain") << "x";
  run_.config.command = "plain";
  EXPECT_FALSE(FindExecutable(run_).ok());
}

// As Go's exec.ErrDot: a plugin found through an empty PATH entry, "." or a relative directory
// (that is, in the current directory) is never run, even if PATH has it later.
TEST_F(ExecRunTest, RelativePathEntriesAreNotSearched) {
  Script("my-plugin", "exit 0\n");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  run_.config.command = "my-plugin";
  for (const std::string& path :
       {std::string(":/nonexistent"), std::string("/nonexistent::/x"),
        std::string(".:") + dir_.string(), std::string("/nonexistent:"), std::string("./:/bin")}) {
    SCOPED_TRACE(path);
    run_.path_env = path;
    auto exe = FindExecutable(run_);
    ASSERT_FALSE(exe.ok());
    EXPECT_THAT(exe.error().message, HasSubstr("refusing to run it from the current directory"));
    EXPECT_THAT(exe.error().message, HasSubstr("exec.ErrDot"));
  }
  auto ran = RunExecPlugin(run_);
  EXPECT_FALSE(ran.ok());
  // An absolute entry for the same directory is fine.
  run_.path_env = "/nonexistent:" + dir_.string();
  EXPECT_TRUE(FindExecutable(run_).ok());
  fs::current_path(cwd);
}

TEST_F(ExecRunTest, HangingPluginIsKilledAfterTheTimeout) {
  run_.config.command = Script("p.sh", "sleep 30\n");
  run_.timeout = std::chrono::milliseconds(300);
  auto cred = RunExecPlugin(run_);
  ASSERT_FALSE(cred.ok());
  EXPECT_EQ(cred.error().code, ErrorCode::kTimeout);
  EXPECT_THAT(cred.error().message, HasSubstr("did not finish within"));
  EXPECT_THAT(cred.error().message, HasSubstr("was killed"));
}

TEST_F(ExecRunTest, InteractiveAlwaysAndUnknownApiVersionAreRejected) {
  run_.config.command = Script("p.sh", "exit 0\n");
  run_.config.interactive_mode = "Always";
  auto a = RunExecPlugin(run_);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.error().message, HasSubstr("interactiveMode: Always"));
  run_.config.interactive_mode = "";
  run_.config.api_version = "client.authentication.k8s.io/v1alpha1";
  auto v = RunExecPlugin(run_);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::kUnsupported);
}

TEST_F(ExecRunTest, StdinIsNotATerminalAndNoShellInterpretsArgs) {
  run_.config.command = Script("p.sh",
                               "if [ -t 0 ]; then exit 9; fi\n"
                               "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
                               "\"status\":{\"token\":\"%s\"}}' \"$API\" \"$1\"\n");
  run_.config.args = {"$(touch injected)"};
  run_.config.env = {{"API", kV1}};
  auto cred = RunExecPlugin(run_);
  ASSERT_TRUE(cred.ok()) << cred.error().message;
  EXPECT_EQ(cred->token, "$(touch injected)");
  EXPECT_FALSE(fs::exists("injected"));
}

}  // namespace
}  // namespace gpuattr::kube
