// Running a built binary from a test: posix_spawn with stdout and stderr in files and an explicit
// environment (so that a test controls KUBECONFIG, HOME, KUBERNETES_SERVICE_* exactly), bounded
// waits that never hang a test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuattr::testing {

struct Child {
  pid_t pid = -1;
  std::filesystem::path out, err;  // its stdout and stderr
};

// Starts args[0] with `args` and exactly `env` ("NAME=value" entries); stdin is /dev/null,
// stdout/stderr go to `dir`/stdout and `dir`/stderr. pid stays -1 when it could not start.
Child SpawnChild(const std::vector<std::string>& args, const std::vector<std::string>& env,
                 const std::filesystem::path& dir);

// Waits up to `limit`; the exit code (128+signal when killed), or -1 after SIGKILL on timeout.
int WaitChild(pid_t pid, std::chrono::milliseconds limit);

// The whole file ("" when missing).
std::string SlurpFile(const std::filesystem::path& path);

// The port of the `nth` "msg=serving address=127.0.0.1:PORT" line of a gpuattr log whose text
// right after the port matches `rest` (a regular expression, e.g. " tls=true"), or 0.
int ServingPortIn(const std::string& log, size_t nth = 1, const std::string& rest = "");
// The same read from the log file `log` until it is there or `limit` has passed (then 0).
int WaitForServingPort(const std::filesystem::path& log,
                       std::chrono::milliseconds limit = std::chrono::seconds(20), size_t nth = 1,
                       const std::string& rest = "");

// The process's environment without the variables named in `drop` (e.g. KUBECONFIG, HOME).
std::vector<std::string> EnvironmentWithout(const std::vector<std::string>& drop);

// Writes `dir`/kubeconfig.yaml, whose only context "lab" points at a closed loopback port (any
// kube-backed session fails fast with "connection refused", whatever the machine's kubeconfig
// says), and returns its path.
std::string WriteUnreachableKubeconfig(const std::filesystem::path& dir);

}  // namespace gpuattr::testing
