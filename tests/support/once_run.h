// `gpuattr --once` against a scenario served by the fake apiserver, from e2e tests: the run's exit
// code, output and peak RSS, and its exposition as series → value (tests/e2e/forgery*_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/scenario.h"

namespace gpuattr::testing {

struct OnceRun {
  int code = -1;
  std::string out, err;
  // gpuattr's peak resident set, as the kernel counts it for that process alone (wait4 in
  // gpuattr-peak-rss, which forks it); 0 when unknown.
  long max_rss_kib = 0;
};

// Runs the built gpuattr with `args` in `dir` (without KUBECONFIG), to its end (at most 60 s).
OnceRun RunGpuattr(const std::vector<std::string>& args, const std::filesystem::path& dir);

// Serves `scenario` (context "lab") and runs `gpuattr --kubeconfig K --once --log.level warn`
// plus `extra` in `dir`/`name`.
OnceRun RunOnceAgainst(const Scenario& scenario, const std::filesystem::path& dir,
                       const std::string& name, const std::vector<std::string>& extra = {});

// The exposition as series → value ("name{a="x",b="y",}", labels in the order printed).
std::map<std::string, double> ExpositionSeries(const std::string& text);

// What the stages publish: everything but gpuattr's own diagnostics of the run.
bool IsStageSeries(const std::string& key);

}  // namespace gpuattr::testing
