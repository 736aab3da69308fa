#include "support/once_run.h"

#include <chrono>

#include "gpuattr/expo/parser.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

OnceRun RunGpuattr(const std::vector<std::string>& args, const fs::path& dir) {
  // Through gpuattr-peak-rss (support/peak_rss_main.cc): wait4 on a child spawned from here would
  // report this test's peak, not gpuattr's.
  const fs::path rss_file = dir / "peak_rss_kib";
  fs::remove(rss_file);
  std::vector<std::string> argv = {GPUATTR_BINARY_DIR "/tests/gpuattr-peak-rss", rss_file.string(),
                                   DaemonBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  Child c = SpawnChild(argv, EnvironmentWithout({"KUBECONFIG"}), dir);
  OnceRun r;
  if (c.pid < 0) return r;
  r.code = WaitChild(c.pid, 60s);
  const std::string rss = SlurpFile(rss_file);
  r.max_rss_kib = rss.empty() ? 0 : std::stol(rss);
  r.out = SlurpFile(c.out);
  r.err = SlurpFile(c.err);
  return r;
}

OnceRun RunOnceAgainst(const Scenario& scenario, const fs::path& dir, const std::string& name,
                       const std::vector<std::string>& extra) {
  FakeApiServer server(scenario);
  if (!server.Start().ok()) return {};
  const fs::path run = dir / name;
  fs::create_directories(run);
  KubeconfigOptions lab;
  lab.context = "lab";
  if (!server.WriteKubeconfig(run / "kubeconfig", lab).ok()) return {};
  std::vector<std::string> args = {"--kubeconfig", (run / "kubeconfig").string(), "--once",
                                   "--log.level", "warn"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunGpuattr(args, run);
}

std::map<std::string, double> ExpositionSeries(const std::string& text) {
  expo::Exposition ex;
  expo::Parse(text, ex);
  std::map<std::string, double> out;
  for (const expo::Sample& s : ex.samples) {
    std::string key(s.name);
    key += '{';
    for (const expo::Label& l : ex.LabelsOf(s))
      key += std::string(l.name) + "=\"" + std::string(l.value) + "\",";
    key += '}';
    out[key] = s.value;
  }
  return out;
}

bool IsStageSeries(const std::string& key) {
  for (const char* p :
       {"gpuattr_exporter_", "gpuattr_discovery_", "gpuattr_cycle_", "gpuattr_last_cycle",
        "gpuattr_apiserver_", "gpuattr_build_info", "gpuattr_cluster_up", "process_"})
    if (key.rfind(p, 0) == 0) return false;
  return true;
}

}  // namespace gpuattr::testing
