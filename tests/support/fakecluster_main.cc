// gpuattr-fakecluster: serves a scenario folder as a fake kube-apiserver over HTTPS and writes a
// kubeconfig for it, so that kubectl, gpuattr and demos can run against a GPU cluster that does
// not exist. Runs until SIGINT or SIGTERM.
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "support/fake_apiserver.h"
#include "support/scenario.h"

namespace po = boost::program_options;
using gpuattr::testing::FakeApiServer;
using gpuattr::testing::FakeApiServerOptions;
using gpuattr::testing::KubeconfigOptions;

namespace {

constexpr const char* kUsage = R"(Usage: gpuattr-fakecluster --scenario DIR [options]

Serves a scenario (fixtures/scenarios/NAME/: pods, nodes, services, DRA objects, exporter bodies
behind the pod proxy, Prometheus answers behind the service proxy, faults, scripted watch events)
as a fake Kubernetes apiserver over HTTPS, and writes a kubeconfig that points at it.
The first line on stdout is the server URL. Runs until SIGINT or SIGTERM.

The kubeconfig has two contexts on one cluster: CONTEXT (bearer token user) and CONTEXT-cert
(client certificate user). Only GET is served. See docs/fakeapi.md.

Example:
  gpuattr-fakecluster --scenario fixtures/scenarios/basic --kubeconfig-out /tmp/fake.kubeconfig &
  kubectl --kubeconfig /tmp/fake.kubeconfig get pods -A
  gpuattr --kubeconfig /tmp/fake.kubeconfig --once

Options)";

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_dir, listen, kubeconfig_out, token, context;
  int bookmark_ms = 1000;
  po::options_description desc(kUsage);
  desc.add_options()("help,h", "print this help")(
      "scenario", po::value(&scenario_dir),
      "scenario folder (required), e.g. fixtures/scenarios/basic")(
      "listen", po::value(&listen)->default_value("127.0.0.1:0"),
      "HOST:PORT to listen on (port 0: any free port)")(
      "kubeconfig-out", po::value(&kubeconfig_out),
      "write a kubeconfig for the server to this path")(
      "token", po::value(&token)->default_value("gpuattr-test-token"),
      "bearer token the server accepts")("context", po::value(&context)->default_value("fake"),
                                         "context (and cluster) name in the kubeconfig")(
      "bookmark-interval-ms", po::value(&bookmark_ms)->default_value(1000),
      "how often watches that allow bookmarks get a BOOKMARK event");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gpuattr-fakecluster: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (scenario_dir.empty()) {
    std::cerr << "gpuattr-fakecluster: --scenario DIR is required (see --help)\n";
    return 2;
  }
  size_t colon = listen.rfind(':');
  int port = -1;
  try {
    if (colon != std::string::npos) port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535) {
    std::cerr << "gpuattr-fakecluster: --listen must be HOST:PORT, e.g. 127.0.0.1:0 (got \""
              << listen << "\")\n";
    return 2;
  }
  if (token.empty()) {
    std::cerr << "gpuattr-fakecluster: --token must not be empty\n";
    return 2;
  }

  auto scenario = gpuattr::testing::LoadScenario(scenario_dir);
  if (!scenario) {
    std::cerr << "gpuattr-fakecluster: " << scenario.error().message << "\n";
    return 2;
  }

  // Block the stop signals before any thread starts, so that only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  FakeApiServerOptions opts;
  opts.host = listen.substr(0, colon);
  opts.port = port;
  opts.tokens = {{token, "fake-user"}};
  opts.bookmark_interval = std::chrono::milliseconds(bookmark_ms);
  std::string name = scenario->name;
  FakeApiServer server(std::move(*scenario), opts);
  if (auto st = server.Start(); !st) {
    std::cerr << "gpuattr-fakecluster: " << st.message() << "\n";
    return 1;
  }
  if (!kubeconfig_out.empty()) {
    KubeconfigOptions k;
    k.context = context;
    k.token = token;
    if (auto st = server.WriteKubeconfig(kubeconfig_out, k); !st) {
      std::cerr << "gpuattr-fakecluster: " << st.message() << "\n";
      return 1;
    }
  }
  std::cout << server.url() << std::endl;
  std::cerr << "gpuattr-fakecluster: serving scenario \"" << name << "\" at " << server.url();
  if (!kubeconfig_out.empty())
    std::cerr << " (kubeconfig " << kubeconfig_out << ", contexts " << context << " and " << context
              << "-cert)";
  std::cerr << "; stop with Ctrl-C" << std::endl;
  for (const auto& e : server.ScriptErrors())
    std::cerr << "gpuattr-fakecluster: warning: " << e << "\n";

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "gpuattr-fakecluster: signal " << sig << ", stopping" << std::endl;
  server.Stop();
  return 0;
}
