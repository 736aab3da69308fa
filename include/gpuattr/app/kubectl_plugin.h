// `kubectl gpuattr` (docs/install.md#kubectl-gpuattr): installed as kubectl-gpuattr (a link to
// gpuattr), the binary behaves as a kubectl plugin: one cycle, printed as a table unless -o says
// otherwise, with kubectl's own flags where they make sense.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

// True when argv[0]'s file name is kubectl-gpuattr (how kubectl and krew start plugins).
bool IsKubectlPlugin(std::string_view argv0);

struct PluginCommandLine {
  std::vector<std::string> args;  // gpuattr's flags: --once and --output added when not given
  std::string ns;                 // -n/--namespace: "" for every namespace
};

// kubectl's spellings to gpuattr's: -o/--output table|json|markdown|prometheus (also -oX, -o=X,
// --output=X), -n/--namespace NS (also -nNS, --namespace=NS), -A/--all-namespaces; --kubeconfig
// and --context are gpuattr's own. Every other flag is passed on as it is.
Result<PluginCommandLine> TranslatePluginArgs(const std::vector<std::string>& args);

}  // namespace gpuattr::app
