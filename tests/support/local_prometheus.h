// A real Prometheus (Debian's /usr/bin/prometheus) on loopback for end-to-end tests, the gpuattr
// daemons it scrapes, and the bundled dashboards' variables resolved against it the way Grafana
// resolves them. Shared by the tests that query dashboards and documented PromQL.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuattr::testing {

inline constexpr const char* kPrometheusBinary = "/usr/bin/prometheus";

// A child process with stdout and stderr in one log file; SIGTERM then SIGKILL on destruction.
class LoggedProcess {
 public:
  LoggedProcess(const std::vector<std::string>& args, const std::filesystem::path& log,
                const std::vector<std::string>* env = nullptr);  // env: nullptr = inherit
  ~LoggedProcess() { Stop(); }
  LoggedProcess(const LoggedProcess&) = delete;
  LoggedProcess& operator=(const LoggedProcess&) = delete;

  bool started() const { return pid_ > 0; }
  bool Exited();
  std::string Log() const;
  void Stop();

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

// A free loopback port from the OS (closed again: the caller's child binds it right after).
int FreeLoopbackPort();

// Starts `args` (a gpuattr daemon with "--web.listen-address 127.0.0.1:0") and waits ≤ 10 s for
// its "msg=serving address=127.0.0.1:PORT" log line; *port stays 0 when it did not come.
std::unique_ptr<LoggedProcess> StartDaemon(const std::vector<std::string>& args,
                                           const std::filesystem::path& log, int* port,
                                           const std::vector<std::string>* env = nullptr);

struct QueryResult {
  bool ok = false;
  std::string error;    // HTTP or Prometheus error
  nlohmann::json data;  // "data" of a successful answer
};

class LocalPrometheus {
 public:
  ~LocalPrometheus();

  // Writes `config` (a prometheus.yml) into `dir` and starts Prometheus on a free port (three
  // tries: a port may be taken meanwhile), waiting ≤ 30 s for /-/ready. "" or why not.
  std::string Start(const std::filesystem::path& dir, const std::string& config);
  // Polls `expr` every 100 ms until it returns a non-empty result; false after `limit`.
  bool WaitFor(const std::string& expr, std::chrono::milliseconds limit) const;

  QueryResult Get(const std::string& path, const std::map<std::string, std::string>& params) const;
  QueryResult Query(const std::string& expr) const;
  // At a fixed evaluation time (seconds since the epoch): queries compared with each other.
  QueryResult QueryAt(const std::string& expr, double time) const;
  std::string Log() const { return process_ ? process_->Log() : ""; }
  int port() const { return port_; }
  void Stop();  // before its folder goes (the destructor stops it too)

 private:
  std::unique_ptr<LoggedProcess> process_;
  int port_ = 0;
};

// The scrape interval and rule files every gpuattr test Prometheus uses, and one scrape job per
// entry of `jobs` (job name → "127.0.0.1:PORT" targets), with honor_labels as shipped
// (config/prometheus/prometheus.yml).
std::string PrometheusConfig(const std::map<std::string, std::vector<int>>& jobs,
                             bool with_alert_rules);

// Values of a dashboard's variables, resolved as Grafana would with "All" selected: each
// label_values(selector, label) query asks Prometheus for the label's values, and the selection
// is formatted as a regex alternation of them. A variable named in `fixed` takes that value
// instead (a user's pick; later variables see it). Built-ins get fixed values. Problems (a
// variable that is no label_values() query, or has no values) are appended to *error.
std::map<std::string, std::string> ResolveDashboardVariables(
    const nlohmann::json& dashboard, const LocalPrometheus& prometheus,
    const std::map<std::string, std::string>& fixed, std::string* error);

}  // namespace gpuattr::testing
