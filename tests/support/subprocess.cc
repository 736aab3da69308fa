#include "support/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace gpuattr::testing {

Child SpawnChild(const std::vector<std::string>& args, const std::vector<std::string>& env,
                 const std::filesystem::path& dir) {
  Child c;
  c.out = dir / "stdout";
  c.err = dir / "stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0) c.pid = pid;
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

int WaitChild(pid_t pid, std::chrono::milliseconds limit) {
  if (pid <= 0) return -1;
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

std::string SlurpFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> EnvironmentWithout(const std::vector<std::string>& drop) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool dropped = false;
    for (const auto& d : drop) dropped = dropped || d == name;
    if (!dropped) out.push_back(std::move(entry));
  }
  return out;
}

std::string WriteUnreachableKubeconfig(const std::filesystem::path& dir) {
  const std::filesystem::path p = dir / "kubeconfig.yaml";
  std::ofstream(p) << R"(apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: lab
  user: {token: test-token}
contexts:
- name: lab
  context: {cluster: lab, user: lab}
current-context: lab
)";
  return p.string();
}

int ServingPortIn(const std::string& log, size_t nth, const std::string& rest) {
  const std::regex re("msg=serving address=127\\.0\\.0\\.1:([0-9]+)" + rest);
  size_t seen = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
    if (++seen == nth) return std::stoi((*it)[1]);
  return 0;
}

int WaitForServingPort(const std::filesystem::path& log, std::chrono::milliseconds limit,
                       size_t nth, const std::string& rest) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (int port = ServingPortIn(SlurpFile(log), nth, rest); port > 0) return port;
    if (std::chrono::steady_clock::now() >= until) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace gpuattr::testing
