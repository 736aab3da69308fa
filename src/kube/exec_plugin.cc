#include "gpuattr/kube/exec_plugin.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/binary.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpuattr/util/log.h"
#include "gpuattr/util/platform.h"
#include "gpuattr/util/strings.h"

extern char** environ;

namespace gpuattr::kube {
namespace {

constexpr size_t kMaxStdout = 4u << 20;  // an ExecCredential is a few KiB
// Plugin stderr goes to the log only (it may hold a device-login code or a URL with a secret):
// lines cut at kMaxStderrLine bytes, at most kMaxStderrLines lines per run, then one line that
// says how many more were dropped.
constexpr size_t kMaxStderrLine = 512;
constexpr size_t kMaxStderrLines = 20;

std::string Who(const ExecPluginRun& run) {
  return "exec plugin " + Quote(run.config.command) + " (user " + Quote(run.user_name) + " in " +
         run.kubeconfig_path + ")";
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

int DigitsAt(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Reads both pipes until EOF or the deadline. Complete stderr lines are logged (bounded).
struct ChildOutput {
  std::string out;
  size_t err_lines = 0;  // non-empty stderr lines seen
  bool timed_out = false;
  bool stdout_too_large = false;
};

void DrainPipes(int out_fd, int err_fd, std::chrono::steady_clock::time_point deadline,
                const ExecPluginRun& run, ChildOutput& result) {
  std::string err_buf;
  auto emit_line = [&](std::string line) {
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) return;
    if (++result.err_lines > kMaxStderrLines) return;
    std::string text(trimmed.substr(0, kMaxStderrLine));
    if (trimmed.size() > kMaxStderrLine) text += "…";
    log::Warn("exec plugin message",
              {{"plugin", run.config.command}, {"user", run.user_name}, {"line", text}});
  };
  bool out_open = true, err_open = true;
  char buf[8192];
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out_fd, POLLIN, 0};
    if (err_open) fds[n++] = {err_fd, POLLIN, 0};
    int rc = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      bool is_out = fds[i].fd == out_fd;
      if (got <= 0) {
        (is_out ? out_open : err_open) = false;
        continue;
      }
      if (is_out) {
        if (result.out.size() + static_cast<size_t>(got) > kMaxStdout) {
          result.stdout_too_large = true;
          out_open = false;
          err_open = false;
          break;
        }
        result.out.append(buf, static_cast<size_t>(got));
      } else {
        err_buf.append(buf, static_cast<size_t>(got));
        size_t nl;
        while ((nl = err_buf.find('\n')) != std::string::npos) {
          emit_line(err_buf.substr(0, nl));
          err_buf.erase(0, nl + 1);
        }
        if (err_buf.size() > 64 * 1024) {  // a line without end: log its start once
          emit_line(err_buf);
          err_buf.clear();
        }
      }
    }
  }
  if (!err_buf.empty()) emit_line(err_buf);
  if (result.err_lines > kMaxStderrLines)
    log::Warn("exec plugin message lines dropped",
              {{"plugin", run.config.command},
               {"user", run.user_name},
               {"dropped", result.err_lines - kMaxStderrLines}});
}

// Waits for the child until `deadline`, then kills its process group. Returns the wait status.
int Reap(pid_t pid, std::chrono::steady_clock::time_point deadline, bool kill_now, bool& killed) {
  int status = 0;
  if (!kill_now) {
    for (;;) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) return status;
      if (r < 0 && errno != EINTR) return status;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  killed = true;
  ::kill(-pid, SIGKILL);  // the plugin runs in its own process group: take its children too
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  if (s.size() < 20) return std::nullopt;
  int year = DigitsAt(s, 0, 4), month = DigitsAt(s, 5, 2), day = DigitsAt(s, 8, 2);
  int hour = DigitsAt(s, 11, 2), minute = DigitsAt(s, 14, 2), second = DigitsAt(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  size_t pos = 19;
  std::chrono::nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    long long scale = 100000000, ns = 0;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
    frac = std::chrono::nanoseconds(ns);
  }
  if (pos >= s.size()) return std::nullopt;
  std::chrono::minutes offset{0};
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh = DigitsAt(s, pos + 1, 2), om = DigitsAt(s, pos + 4, 2);
    if (oh < 0 || om < 0 || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset = std::chrono::minutes(oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(month),
                                  std::chrono::day(day)};
  if (!ymd.ok()) return std::nullopt;
  std::chrono::sys_seconds tp = std::chrono::sys_days(ymd) + std::chrono::hours(hour) +
                                std::chrono::minutes(minute) + std::chrono::seconds(second) -
                                offset;
  // system_clock counts nanoseconds in 64 bits (until 2262): clamp far-future expiries.
  using Clock = std::chrono::system_clock;
  const auto max_seconds =
      std::chrono::time_point_cast<std::chrono::seconds>(Clock::time_point::max()) -
      std::chrono::seconds(1);
  const auto min_seconds =
      std::chrono::time_point_cast<std::chrono::seconds>(Clock::time_point::min()) +
      std::chrono::seconds(1);
  if (tp >= max_seconds) return Clock::time_point::max();
  if (tp <= min_seconds) return Clock::time_point::min();
  return std::chrono::time_point_cast<Clock::duration>(tp) +
         std::chrono::duration_cast<Clock::duration>(frac);
}

std::string BuildExecInfo(const ExecPluginRun& run) {
  nlohmann::json spec = {{"interactive", false}};
  if (run.config.provide_cluster_info) {
    nlohmann::json cluster = {{"server", run.server}};
    if (!run.tls_server_name.empty()) cluster["tls-server-name"] = run.tls_server_name;
    if (run.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!run.ca_pem.empty()) {
      cluster["certificate-authority-data"] = YAML::EncodeBase64(
          reinterpret_cast<const unsigned char*>(run.ca_pem.data()), run.ca_pem.size());
    }
    if (!run.proxy_url.empty()) cluster["proxy-url"] = run.proxy_url;
    if (!run.config.cluster_config_json.empty()) {
      try {
        cluster["config"] = nlohmann::json::parse(run.config.cluster_config_json);
      } catch (const nlohmann::json::exception&) {
      }
    }
    spec["cluster"] = std::move(cluster);
  }
  nlohmann::json info = {
      {"apiVersion", run.config.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  return info.dump();
}

Result<ExecCredential> ParseExecCredential(std::string_view text, const std::string& api_version,
                                           const std::string& who) {
  auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kUnauthenticated, who + ": " + why);
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() quotes the input, which may be a token: report the position only.
    return bad("stdout is not a JSON ExecCredential (parse error at byte " +
               std::to_string(e.byte) + ")");
  }
  if (!j.is_object()) return bad("stdout is not a JSON ExecCredential object");
  auto str = [&](const nlohmann::json& obj, const char* key) -> std::string {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (str(j, "kind") != "ExecCredential")
    return bad("stdout has kind " + Quote(str(j, "kind")) + ", expected \"ExecCredential\"");
  std::string got_version = str(j, "apiVersion");
  if (got_version != api_version) {
    return bad("the kubeconfig asks for apiVersion " + Quote(api_version) +
               " but the plugin returned " + Quote(got_version));
  }
  auto status = j.find("status");
  if (status == j.end() || !status->is_object()) return bad("the ExecCredential has no status");
  ExecCredential cred;
  cred.token = str(*status, "token");
  cred.client_cert_pem = str(*status, "clientCertificateData");
  cred.client_key_pem = str(*status, "clientKeyData");
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty())
    return bad("status has only one of clientCertificateData and clientKeyData");
  if (cred.token.empty() && cred.client_cert_pem.empty())
    return bad("status has neither a token nor clientCertificateData/clientKeyData");
  std::string expiry = str(*status, "expirationTimestamp");
  if (!expiry.empty()) {
    cred.expiry = ParseRfc3339(expiry);
    if (!cred.expiry)
      return bad("status.expirationTimestamp " + Quote(expiry) + " is not RFC 3339");
  }
  return cred;
}

Result<std::string> FindExecutable(const ExecPluginRun& run) {
  const std::string& cmd = run.config.command;
  std::string where = " (user " + Quote(run.user_name) + " in " + run.kubeconfig_path + ")";
  std::string hint =
      run.config.install_hint.empty() ? "" : "; install hint: " + run.config.install_hint;
  if (cmd.find('/') != std::string::npos) {
    if (IsExecutableFile(cmd)) return cmd;
    struct stat st {};
    if (::stat(cmd.c_str(), &st) == 0) {
      return MakeError(ErrorCode::kUnauthenticated,
                       "exec plugin " + Quote(cmd) + " is not an executable file" + where);
    }
    return MakeError(ErrorCode::kUnauthenticated,
                     "exec plugin " + Quote(cmd) + " not found" + where + hint);
  }
  std::string path = run.path_env;
  if (path.empty()) {
    const char* env = std::getenv("PATH");
    path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  }
  // As Go's exec.LookPath (what kubectl uses): the first match wins, and a match found through a
  // relative entry (empty, ".", "bin") is refused with ErrDot's reason rather than run from the
  // current directory.
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    start = end + 1;
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + cmd;
    if (!IsExecutableFile(candidate)) continue;
    if (dir.empty() || dir.front() != '/') {
      return MakeError(ErrorCode::kUnauthenticated,
                       "exec plugin " + Quote(cmd) + where +
                           ": refusing to run it from the current directory: it was found "
                           "through the relative PATH entry " +
                           Quote(dir) +
                           " (as kubectl does, Go's exec.ErrDot); give the command as an "
                           "absolute path or put its directory in PATH as an absolute path");
    }
    return candidate;
  }
  return MakeError(ErrorCode::kUnauthenticated,
                   "exec plugin " + Quote(cmd) + " not found in PATH" + where + hint);
}

std::vector<std::string> BuildExecEnvironment(const ExecPluginRun& run, const char* const* base) {
  std::vector<std::string> env;
  auto set = [&env](const std::string& name, const std::string& value) {
    std::string prefix = name + "=";
    for (auto& e : env) {
      if (e.compare(0, prefix.size(), prefix) == 0) {
        e = prefix + value;
        return;
      }
    }
    env.push_back(prefix + value);
  };
  for (const char* const* e = base; e && *e; ++e) env.emplace_back(*e);
  for (const auto& [name, value] : run.config.env) set(name, value);
  set("KUBERNETES_EXEC_INFO", BuildExecInfo(run));
  return env;
}

namespace {

// Rejects what gpuattr cannot run: a plugin that wants a terminal, an unknown API version.
Status CheckRunnable(const ExecPluginRun& run, const std::string& who) {
  if (run.config.interactive_mode == "Always") {
    return MakeError(ErrorCode::kUnauthenticated,
                     who +
                         " needs an interactive terminal (interactiveMode: Always), but gpuattr "
                         "runs non-interactively");
  }
  if (run.config.api_version != "client.authentication.k8s.io/v1" &&
      run.config.api_version != "client.authentication.k8s.io/v1beta1") {
    return MakeError(ErrorCode::kUnsupported,
                     who + ": exec.apiVersion " + Quote(run.config.api_version) +
                         " is unsupported (use client.authentication.k8s.io/v1 or v1beta1)");
  }
  return Status::Ok();
}

// Pointers to `strings` (which must outlive them), ended by a null, as argv and envp are.
std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// posix_spawn with stdin from /dev/null, stdout and stderr into the given pipe ends, in a process
// group of its own. Returns posix_spawn's error number (0: started).
int Spawn(const std::string& exe, char* const argv[], char* const envp[], int out_fd, int err_fd,
          pid_t& pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  // Default signal dispositions in the child even if we ignore SIGPIPE.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// A started plugin: its pid and the read ends of its stdout and stderr (the caller closes them).
struct Child {
  pid_t pid = 0;
  int out_fd = -1;
  int err_fd = -1;
};

Result<Child> StartPlugin(const std::string& exe, const ExecPluginRun& run,
                          const std::string& who) {
  // Environment: ours, then the plugin's env entries, then KUBERNETES_EXEC_INFO (later wins).
  std::vector<std::string> env_strings = BuildExecEnvironment(run, environ);
  std::vector<char*> envp = NullTerminated(env_strings);
  std::vector<std::string> arg_strings{run.config.command};
  for (const auto& a : run.config.args) arg_strings.push_back(a);
  std::vector<char*> argv = NullTerminated(arg_strings);

  auto out_pipe = platform::OpenPipe(false);
  if (!out_pipe.ok()) return MakeError(ErrorCode::kInternal, who + ": " + out_pipe.error().message);
  auto err_pipe = platform::OpenPipe(false);
  if (!err_pipe.ok()) {
    ::close(out_pipe->read_fd);
    ::close(out_pipe->write_fd);
    return MakeError(ErrorCode::kInternal, who + ": " + err_pipe.error().message);
  }
  Child child;
  int rc = 0;
  {
    // Off Linux, no descriptor may be on its way to close-on-exec while the child starts.
    auto lock = platform::LockForSpawn();
    rc = Spawn(exe, argv.data(), envp.data(), out_pipe->write_fd, err_pipe->write_fd, child.pid);
  }
  ::close(out_pipe->write_fd);
  ::close(err_pipe->write_fd);
  if (rc != 0) {
    ::close(out_pipe->read_fd);
    ::close(err_pipe->read_fd);
    return MakeError(ErrorCode::kUnauthenticated,
                     who + ": cannot start " + exe + ": " + std::strerror(rc));
  }
  child.out_fd = out_pipe->read_fd;
  child.err_fd = err_pipe->read_fd;
  return child;
}

// The credential, or why there is none, from how the plugin ended and what it wrote.
Result<ExecCredential> PluginOutcome(const ChildOutput& output, int status, bool killed,
                                     const ExecPluginRun& run, const std::string& who) {
  if (output.timed_out || (killed && !output.stdout_too_large)) {
    return MakeError(ErrorCode::kTimeout, who + " did not finish within " +
                                              FormatDuration(run.timeout) + " and was killed");
  }
  if (output.stdout_too_large) {
    return MakeError(ErrorCode::kUnauthenticated,
                     who + " wrote more than " + std::to_string(kMaxStdout) + " bytes to stdout");
  }
  // Never the stderr text itself: errors reach the status page and /metrics readers; the log has
  // the plugin's lines.
  const std::string last = output.err_lines > 0 ? " (its stderr is in gpuattr's log)" : "";
  if (WIFSIGNALED(status)) {
    return MakeError(ErrorCode::kUnauthenticated,
                     who + " was killed by signal " + std::to_string(WTERMSIG(status)) + last);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return MakeError(ErrorCode::kUnauthenticated,
                     who + " exited with code " + std::to_string(WEXITSTATUS(status)) + last);
  }
  return ParseExecCredential(output.out, run.config.api_version, who);
}

}  // namespace

Result<ExecCredential> RunExecPlugin(const ExecPluginRun& run) {
  const std::string who = Who(run);
  Status runnable = CheckRunnable(run, who);
  if (!runnable.ok()) return runnable;
  auto exe = FindExecutable(run);
  if (!exe.ok()) return exe.error();
  auto child = StartPlugin(*exe, run, who);
  if (!child.ok()) return child.error();

  const auto deadline = std::chrono::steady_clock::now() + run.timeout;
  ChildOutput output;
  DrainPipes(child->out_fd, child->err_fd, deadline, run, output);
  ::close(child->out_fd);
  ::close(child->err_fd);
  bool killed = false;
  int status = Reap(child->pid, deadline, output.timed_out || output.stdout_too_large, killed);
  return PluginOutcome(output, status, killed, run, who);
}

}  // namespace gpuattr::kube
