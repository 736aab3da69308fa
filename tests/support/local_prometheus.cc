#include "support/local_prometheus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "support/dashboards.h"
#include "support/paths.h"
#include "support/subprocess.h"

extern char** environ;

namespace gpuattr::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

LoggedProcess::LoggedProcess(const std::vector<std::string>& args, const fs::path& log,
                             const std::vector<std::string>* env)
    : log_(log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (env) {
    for (const auto& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), env ? envp.data() : environ) != 0)
    pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

bool LoggedProcess::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return true;
  }
  return false;
}

std::string LoggedProcess::Log() const {
  std::ifstream in(log_, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void LoggedProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 1000; ++i) {  // up to 10 s, then SIGKILL
    if (Exited()) return;
    std::this_thread::sleep_for(10ms);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

std::unique_ptr<LoggedProcess> StartDaemon(const std::vector<std::string>& args,
                                           const fs::path& log, int* port,
                                           const std::vector<std::string>* env) {
  *port = 0;
  auto p = std::make_unique<LoggedProcess>(args, log, env);
  if (!p->started()) return p;
  for (int i = 0; i < 1000 && !p->Exited() && *port == 0; ++i) {  // ≤ 10 s
    *port = ServingPortIn(p->Log());
    if (*port == 0) std::this_thread::sleep_for(10ms);
  }
  return p;
}

LocalPrometheus::~LocalPrometheus() { Stop(); }

void LocalPrometheus::Stop() {
  if (process_) process_->Stop();
}

std::string LocalPrometheus::Start(const fs::path& dir, const std::string& config) {
  std::ofstream(dir / "prometheus.yml") << config;
  for (int attempt = 0; attempt < 3 && port_ == 0; ++attempt) {
    const int port = FreeLoopbackPort();
    fs::remove_all(dir / "tsdb");
    process_ = std::make_unique<LoggedProcess>(
        std::vector<std::string>{
            kPrometheusBinary, "--config.file=" + (dir / "prometheus.yml").string(),
            "--storage.tsdb.path=" + (dir / "tsdb").string(),
            "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
        dir / "prometheus.log");
    if (!process_->started()) return std::string("cannot start ") + kPrometheusBinary;
    httplib::Client cli("127.0.0.1", port);
    cli.set_connection_timeout(1s);
    for (int i = 0; i < 300 && !process_->Exited(); ++i) {  // ≤ 30 s
      auto r = cli.Get("/-/ready");
      if (r && r->status == 200) {
        port_ = port;
        break;
      }
      std::this_thread::sleep_for(100ms);
    }
    if (port_ == 0) process_->Stop();  // the port was taken meanwhile: retry
  }
  if (port_ == 0) return "prometheus did not become ready:\n" + process_->Log();
  return "";
}

bool LocalPrometheus::WaitFor(const std::string& expr, std::chrono::milliseconds limit) const {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    QueryResult r = Query(expr);
    if (r.ok && !r.data["result"].empty()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

QueryResult LocalPrometheus::Get(const std::string& path,
                                 const std::map<std::string, std::string>& params) const {
  httplib::Client cli("127.0.0.1", port_);
  cli.set_read_timeout(30s);
  QueryResult out;
  httplib::Params p(params.begin(), params.end());
  auto r = cli.Get(path, p, httplib::Headers{});
  if (!r) {
    out.error = "no answer from prometheus: " + httplib::to_string(r.error());
    return out;
  }
  json body = json::parse(r->body, nullptr, false);
  if (body.is_discarded()) {
    out.error = "HTTP " + std::to_string(r->status) + ": " + r->body;
  } else if (body.value("status", "") != "success") {
    out.error = "HTTP " + std::to_string(r->status) + ": " + body.value("errorType", "") + ": " +
                body.value("error", "");
  } else {
    out.ok = true;
    out.data = body["data"];
  }
  return out;
}

QueryResult LocalPrometheus::Query(const std::string& expr) const {
  return Get("/api/v1/query", {{"query", expr}});
}

QueryResult LocalPrometheus::QueryAt(const std::string& expr, double time) const {
  std::ostringstream t;
  t.precision(3);
  t << std::fixed << time;
  return Get("/api/v1/query", {{"query", expr}, {"time", t.str()}});
}

std::string PrometheusConfig(const std::map<std::string, std::vector<int>>& jobs,
                             bool with_alert_rules) {
  std::string out = "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n";
  if (with_alert_rules) {
    out += "rule_files:\n";
    for (const auto& f : AlertRuleFiles()) out += "  - '" + f.string() + "'\n";
  }
  out += "scrape_configs:\n";
  for (const auto& [job, ports] : jobs) {
    out += "  - job_name: " + job + "\n    honor_labels: true\n    static_configs: [{targets: [";
    for (size_t i = 0; i < ports.size(); ++i)
      out += (i ? ", '" : "'") + std::string("127.0.0.1:") + std::to_string(ports[i]) + "'";
    out += "]}]\n";
  }
  return out;
}

std::map<std::string, std::string> ResolveDashboardVariables(
    const json& dashboard, const LocalPrometheus& prometheus,
    const std::map<std::string, std::string>& fixed, std::string* error) {
  std::map<std::string, std::string> vars = {{"__rate_interval", "1m"},
                                             {"__interval", "15s"},
                                             {"__range", "1h"},
                                             {"__range_s", "3600"},
                                             {"__interval_ms", "15000"}};
  const std::regex label_values(R"(^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$)");
  for (const auto& v : dashboard["templating"]["list"]) {  // in order: later ones use earlier
    if (v.value("type", "") != "query") continue;          // the datasource picker
    const std::string name = v.value("name", ""), def = v.value("definition", "");
    if (auto it = fixed.find(name); it != fixed.end()) {
      vars[name] = it->second;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(def, m, label_values)) {
      *error += "variable " + name + ": not a label_values query: " + def + "\n";
      continue;
    }
    const std::string selector = SubstituteVariables(m[1], vars);
    QueryResult r =
        prometheus.Get("/api/v1/label/" + m[2].str() + "/values", {{"match[]", selector}});
    std::vector<std::string> values;
    if (r.ok)
      for (const auto& x : r.data) values.push_back(x.get<std::string>());
    if (values.empty()) {
      *error +=
          "variable " + name + " (" + def + ") has no values" + (r.ok ? "" : ": " + r.error) + "\n";
      vars[name] = ".*";  // keep going: the other queries still get checked
    } else {
      vars[name] = GrafanaRegexAlternation(values);
    }
  }
  return vars;
}

}  // namespace gpuattr::testing
