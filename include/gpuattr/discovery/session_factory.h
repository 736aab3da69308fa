// Builds the kube-backed sessions the app's cycle loop runs: one KubeClusterSession per configured
// cluster (kubeconfig context), with the config's pins, scrape limits and cache lifetimes.
// Plugs in as the app's SessionFactory: `Run(config, discovery::MakeKubeSessions, ...)`.
#pragma once

#include "gpuattr/app/config.h"
#include "gpuattr/app/session.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/session.h"
#include "gpuattr/util/status.h"

namespace gpuattr::discovery {

// The app's parsed pins → discovery pins.
Pins PinsFromConfig(const std::vector<app::TargetPin>& targets);
// Discovery and scrape settings from the config (pins, limits, cache lifetimes).
KubeSessionOptions SessionOptionsFromConfig(const app::Config& config);

// The state file of Config::state_file ("" → the XDG default), read now; read-only with --once.
// Null (with a warning) when there is no usable location.
std::shared_ptr<ledger::StateFile> OpenStateFile(const app::Config& config);

// Errors (unreadable kubeconfig, unknown context, bad credentials setup) name the file or context.
Result<app::SessionList> MakeKubeSessions(const app::Config& config);

}  // namespace gpuattr::discovery
