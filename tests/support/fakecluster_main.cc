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
#include "support/generated_cluster.h"
#include "support/scenario.h"

namespace po = boost::program_options;
using gpuattr::testing::FakeApiServer;
using gpuattr::testing::FakeApiServerOptions;
using gpuattr::testing::KubeconfigOptions;

namespace {

constexpr const char* kUsage = R"(Usage: gpuattr-fakecluster --scenario DIR [options]
       gpuattr-fakecluster --generate-nodes N [options]

Serves a scenario (fixtures/scenarios/NAME/: pods, nodes, services, DRA objects, exporter bodies
behind the pod proxy, Prometheus answers behind the service proxy, faults, scripted watch events)
as a fake Kubernetes apiserver over HTTPS, and writes a kubeconfig that points at it.
--generate-nodes serves a generated GPU cluster instead: N nodes of 8 A100s, every other node
MIG-partitioned, one port-less GPU job pod per device, one dcgm-exporter pod per node (scale runs).
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
  int bookmark_ms = 1000, generate_nodes = 0, inference_pods = 4, notebook_pods = 0, latency_ms = 0,
      threads = 64, keep_alive_s = 2;
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
      "how often watches that allow bookmarks get a BOOKMARK event")(
      "generate-nodes", po::value(&generate_nodes),
      "serve a generated cluster of N GPU nodes instead of a scenario (1..100000)")(
      "generate-inference-pods", po::value(&inference_pods)->default_value(4),
      "generated cluster: GPU pods that are vLLM servers declaring port http 8000")(
      "generate-notebook-pods", po::value(&notebook_pods)->default_value(0),
      "generated cluster: GPU pods declaring port 8888 that serve nothing")(
      "proxy-latency-ms", po::value(&latency_ms)->default_value(0),
      "added to every pod-proxy GET before it is answered")(
      "threads", po::value(&threads)->default_value(64),
      "connections served at once (each open watch holds one)")(
      "keep-alive-seconds", po::value(&keep_alive_s)->default_value(2),
      "an idle client connection is closed after this long (set it above gpuattr's interval to "
      "measure steady cycles on reused connections)");
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
  if (scenario_dir.empty() == (generate_nodes == 0)) {
    std::cerr << "gpuattr-fakecluster: give one of --scenario DIR or --generate-nodes N (see "
                 "--help)\n";
    return 2;
  }
  if (generate_nodes < 0 || generate_nodes > 100000) {
    std::cerr << "gpuattr-fakecluster: --generate-nodes must be 1..100000 (got " << generate_nodes
              << ")\n";
    return 2;
  }
  if (inference_pods < 0 || notebook_pods < 0 || latency_ms < 0 || threads < 1 || threads > 4096 ||
      keep_alive_s < 1 || keep_alive_s > 3600) {
    std::cerr << "gpuattr-fakecluster: --generate-inference-pods, --generate-notebook-pods and "
                 "--proxy-latency-ms must not be negative, --threads must be 1..4096, "
                 "--keep-alive-seconds 1..3600\n";
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

  gpuattr::Result<gpuattr::testing::Scenario> scenario = gpuattr::testing::Scenario{};
  if (generate_nodes > 0) {
    gpuattr::testing::GeneratedClusterSpec spec;
    spec.nodes = generate_nodes;
    spec.inference_pods = inference_pods;
    spec.notebook_pods = notebook_pods;
    spec.name = "generated-" + std::to_string(generate_nodes);
    gpuattr::testing::GeneratedClusterInfo info;
    scenario = gpuattr::testing::GenerateCluster(spec, &info);
    std::cerr << "gpuattr-fakecluster: generated " << info.nodes << " nodes, " << info.devices
              << " devices, " << info.gpu_pods << " GPU pods (" << info.portless_pods
              << " pods without a port), " << info.exporters << " exporters, "
              << info.body_bytes / 1024 << " KiB of exporter bodies" << std::endl;
  } else {
    scenario = gpuattr::testing::LoadScenario(scenario_dir);
  }
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
  opts.proxy_latency = std::chrono::milliseconds(latency_ms);
  opts.threads = threads;
  opts.keep_alive_timeout_seconds = keep_alive_s;
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
