// --help, written from the settings table: prose around one entry per flag and config file key.
#include <sstream>

#include "gpuattr/app/options.h"
#include "gpuattr/app/settings.h"

namespace gpuattr::app {
namespace {

constexpr size_t kWidth = 100;  // the repository's line length
constexpr size_t kIndent = 29;  // where an entry's text starts

constexpr std::string_view kIntro =
    R"(gpuattr - whose GPUs are these, and is anyone using them?

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

Settings by topic. A --flag overrides the same key of the config file (--config.file); a key
without a flag is set in the file only. config/gpuattr.example.yaml shows every key.
)";

constexpr std::string_view kOutro = R"(
Endpoints: /metrics (Prometheus text format, gzip when asked), /healthz, /readyz (200 after the
first cycle), / (status page: whose GPUs, idle holders, top pods, devices, health, pending pods,
exporters and probes), /snapshot.json and /snapshot.md (the same as --output json|markdown).

Exit codes:
  0  success (--help, --version, --once with at least one cluster answering, clean shutdown)
  1  --once: no cluster answered; or a fatal runtime error
  2  bad flag, bad config file or bad value (the message names the flag or key)
  3  cannot serve: the listen address is in use or invalid for this host, TLS files unusable
)";

// `text` wrapped at spaces into lines of at most kWidth, each indented by kIndent.
void Wrap(std::ostringstream& out, std::string_view text) {
  std::string line;
  auto flush = [&] {
    if (!line.empty()) out << std::string(kIndent, ' ') << line << "\n";
    line.clear();
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && kIndent + line.size() + 1 + word.size() > kWidth) flush();
    if (!word.empty()) line += (line.empty() ? "" : " ") + std::string(word);
    pos = end + 1;
  }
  flush();
}

// "--web.listen-address ADDR", "-h, --help", "scrape.timeout DURATION".
std::string Head(const Setting& s) {
  std::string head = s.flag.empty() ? s.key : "--" + s.flag;
  if (!s.short_flag.empty()) head = "-" + s.short_flag + ", " + head;
  if (!s.value_name.empty()) head += " " + s.value_name;
  return head;
}

void Entry(std::ostringstream& out, const Setting& s) {
  std::ostringstream body;
  Wrap(body, s.help);
  if (!s.flag.empty() && !s.key.empty()) Wrap(body, "Config file: " + s.key + ".");
  std::string shown = s.ShownDefault();
  if (!shown.empty() && shown.back() != '.') shown += ".";
  const std::string def = shown.empty() ? "" : "Default: " + shown;
  const std::string example = s.example.empty() ? "" : "Example: " + s.example;
  if (!def.empty() && !example.empty() && kIndent + def.size() + 3 + example.size() <= kWidth) {
    body << std::string(kIndent, ' ') << def << "   " << example << "\n";  // fits: no Wrap
  } else {
    if (!def.empty()) Wrap(body, def);
    if (!example.empty()) Wrap(body, example);
  }
  const std::string head = "  " + Head(s);
  std::string text = body.str();
  if (head.size() + 2 <= kIndent) {
    text.replace(0, head.size(), head);  // on the first line, over its indentation
    out << text;
  } else {
    out << head << "\n" << text;
  }
}

}  // namespace

std::string HelpText() {
  std::ostringstream out;
  out << kIntro;
  const std::vector<Setting>& all = Settings();  // grouped: each group's rows are together
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || all[i].group != all[i - 1].group)
      out << "\n" << GroupTitle(all[i].group) << ":\n";
    Entry(out, all[i]);
  }
  out << kOutro;
  return out.str();
}

}  // namespace gpuattr::app
