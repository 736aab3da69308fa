#include "gpuattr/app/options.h"

#include <boost/program_options.hpp>

#include "gpuattr/build_info.h"

namespace gpuattr::app {
namespace po = boost::program_options;

Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine cl;
  po::options_description desc;
  desc.add_options()                                                   //
      ("kubeconfig", po::value<std::string>())                         //
      ("context", po::value<std::vector<std::string>>()->composing())  //
      ("config.file", po::value<std::string>())                        //
      ("web.listen-address", po::value<std::string>())                 //
      ("web.config.file", po::value<std::string>())                    //
      ("interval", po::value<std::string>())                           //
      ("target", po::value<std::vector<std::string>>()->composing())   //
      ("once", po::bool_switch(&cl.once))                              //
      ("output", po::value<std::string>())                             //
      ("log.level", po::value<std::string>())                          //
      ("state.file", po::value<std::string>())                         //
      ("cluster.name", po::value<std::string>())                       //
      ("shard", po::value<std::string>())                              //
      ("total-shards", po::value<std::string>())                       //
      ("pod", po::value<std::string>())                                //
      ("version", po::bool_switch(&cl.version))                        //
      ("help,h", po::bool_switch(&cl.help));
  po::variables_map vm;
  try {
    // No abbreviations: "--int 5s" must not quietly mean --interval.
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::positional_options_description none;  // gpuattr takes no arguments, only flags
    po::store(po::command_line_parser(args).options(desc).positional(none).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return MakeError(ErrorCode::kInvalidArgument, e.what());
  }
  auto opt = [&](const char* name) -> std::optional<std::string> {
    if (!vm.count(name)) return std::nullopt;
    return vm[name].as<std::string>();
  };
  cl.kubeconfig = opt("kubeconfig");
  cl.config_file = opt("config.file");
  cl.listen_address = opt("web.listen-address");
  cl.web_config_file = opt("web.config.file");
  cl.interval = opt("interval");
  cl.output = opt("output");
  cl.log_level = opt("log.level");
  cl.state_file = opt("state.file");
  cl.cluster_name = opt("cluster.name");
  cl.shard = opt("shard");
  cl.total_shards = opt("total-shards");
  cl.pod = opt("pod");
  if (vm.count("context")) cl.contexts = vm["context"].as<std::vector<std::string>>();
  if (vm.count("target")) cl.targets = vm["target"].as<std::vector<std::string>>();
  return cl;
}

std::string VersionText() {
  return std::string("gpuattr ") + build::kVersion + " (revision " + build::kRevision + ")";
}

std::string HelpText() {
  return R"(gpuattr - whose GPUs are these, and is anyone using them?

gpuattr runs on your workstation with your kubeconfig. Every interval it reads the GPU exporters
that already run in your Kubernetes clusters (dcgm-exporter, per-process exporters, vLLM/SGLang)
through the kube-apiserver pod proxy, joins them with pods, nodes and DRA claims, and serves
per-device, per-pod and per-namespace GPU series on a local /metrics for Prometheus.
Nothing is installed in the cluster; every request is a read made with your own credentials.

In a pod (in-cluster mode): with no kubeconfig at all (no --kubeconfig, no file in $KUBECONFIG,
no ~/.kube/config) and KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, gpuattr reads
the cluster it runs in with its service account: the token (re-read every minute and after a
401, as it rotates) and the CA from /var/run/secrets/kubernetes.io/serviceaccount/
($GPUATTR_SERVICE_ACCOUNT_DIR replaces that folder). Manifests: config/kubernetes/.

Usage:
  gpuattr [flags]

Flags (a flag overrides the same setting in the config file):
  --kubeconfig PATH          kubeconfig to read.
                             Default: $KUBECONFIG (a ':'-separated list), else ~/.kube/config.
                             Example: --kubeconfig ~/.kube/lab.yaml
  --context NAME             kubeconfig context to read; repeat for several clusters. The context
                             name becomes the `cluster` label. Replaces `clusters` of the file.
                             Default: the kubeconfig's current context.
                             Example: --context kind-gpu --context prod-eu
  --config.file FILE         YAML config file; every key and its default is documented in
                             config/gpuattr.example.yaml. An empty file is valid.
                             Default: none.   Example: --config.file ~/.config/gpuattr.yaml
  --web.listen-address ADDR  where to serve /metrics, /healthz, /readyz and the status page /.
                             Default: 127.0.0.1:9787.   Example: --web.listen-address :9787
                             Bound to a loopback address, the server answers only requests
                             whose Host is localhost, 127.0.0.0/8 or [::1] (DNS rebinding).
  --web.config.file FILE     TLS and basic auth, in the Prometheus exporter-toolkit web config
                             format (tls_server_config, basic_auth_users with bcrypt hashes);
                             see docs/app.md. Same as `web.config_file` in the file.
                             Default: none (plain HTTP, no auth).
                             Example: --web.config.file /etc/gpuattr/web.yml
  --interval DURATION        time between cycles (Go duration: 500ms, 20s, 1m30s).
                             Default: 20s.   Example: --interval 30s
  --target PIN               scrape this target in addition to discovery; repeatable.
                             Replaces `targets` of the file. Forms:
                               NAMESPACE/POD-PREFIX:PORT   exporter pods whose name starts with
                                                           POD-PREFIX
                               NAMESPACE/svc/SERVICE:PORT  a Prometheus-compatible query API
                             Example: --target gpu-operator/nvidia-dcgm-exporter:9400
                                      --target monitoring/svc/prometheus-k8s:9090
  --once                     run one cycle, print the exposition on stdout and exit (no server).
  --output FORMAT            what --once prints: prometheus (the exposition), table (the status
                             page's sections for a terminal; NO_COLOR and COLUMNS respected),
                             json (one snapshot object, docs/snapshot.md) or markdown (an
                             incident report for a ticket). Only with --once.
                             Default: prometheus.   Example: --once --output table
  --log.level LEVEL          debug, info, warn or error. Logs are logfmt on stderr.
                             Default: info.   Example: --log.level debug
  --state.file PATH          where idle runs and energy counters survive restarts (JSON,
                             rewritten after each successful cycle; --once only reads it).
                             Default: $XDG_STATE_HOME/gpuattr/state.json, else
                             ~/.local/state/gpuattr/state.json.
                             Example: --state.file /var/lib/gpuattr/state.json
  --cluster.name NAME        the `cluster` label. In the cluster: the name of the cluster
                             gpuattr runs in. With a kubeconfig: the label of the one cluster
                             read, instead of its context name. Same as `cluster_name` in the
                             file. Default: in-cluster (in a pod), else the context name.
                             Example: --cluster.name prod-eu
  --shard I                  with --total-shards N: be shard I (0 <= I < N), as kube-state-metrics
                             shards. Shard I reads only the nodes whose name hashes (FNV-1a 64)
                             to I mod N, and publishes their devices, pods and node series;
                             shard 0 also publishes the pending pods. Namespace series are the
                             shard's share: sum them across shards.
                             Example: --shard 1 --total-shards 3
  --total-shards N           the number of shards. Default: 1 (not sharded).
  --pod NAME                 with --total-shards N: take the shard from the ordinal after the
                             last '-' of this StatefulSet pod's name (gpuattr-2 -> shard 2). Give
                             it the pod's own name: --pod=$(POD_NAME), POD_NAME from the
                             downward API (metadata.name).
  --version                  print the version and exit.
  -h, --help                 print this help and exit.

Endpoints: /metrics (Prometheus text format, gzip when asked), /healthz, /readyz (200 after the
first cycle), / (status page: whose GPUs, idle holders, top pods, devices, health, pending pods,
exporters and probes), /snapshot.json and /snapshot.md (the same as --output json|markdown).

Exit codes:
  0  success (--help, --version, --once with at least one cluster answering, clean shutdown)
  1  --once: no cluster answered; or a fatal runtime error
  2  bad flag, bad config file or bad value (the message names the flag or key)
  3  cannot serve: the listen address is in use or invalid for this host, TLS files unusable
)";
}

}  // namespace gpuattr::app
