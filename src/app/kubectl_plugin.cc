#include "gpuattr/app/kubectl_plugin.h"

#include <optional>

namespace gpuattr::app {
namespace {

// The value of a flag spelled `-s VALUE`, `-sVALUE`, `-s=VALUE`, `--long VALUE` or
// `--long=VALUE` at args[i] (i moves past a separate value), or nullopt when args[i] is not it.
std::optional<std::string> FlagValue(const std::vector<std::string>& args, size_t& i,
                                     std::string_view shortf, std::string_view longf,
                                     bool& missing) {
  const std::string& a = args[i];
  for (std::string_view f : {shortf, longf}) {
    if (a == f) {
      if (i + 1 >= args.size()) {
        missing = true;
        return std::string();
      }
      return args[++i];
    }
    const std::string eq = std::string(f) + "=";
    if (a.rfind(eq, 0) == 0) return a.substr(eq.size());
  }
  if (a.size() > shortf.size() && a.rfind(shortf, 0) == 0 && a[1] != '-')
    return a.substr(shortf.size());  // -ojson, -nteam-a
  return std::nullopt;
}

}  // namespace

bool IsKubectlPlugin(std::string_view argv0) {
  const size_t slash = argv0.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  return name == "kubectl-gpuattr";
}

Result<PluginCommandLine> TranslatePluginArgs(const std::vector<std::string>& args) {
  PluginCommandLine out;
  bool once = false, output = false;
  for (size_t i = 0; i < args.size(); ++i) {
    bool missing = false;
    if (auto v = FlagValue(args, i, "-o", "--output", missing)) {
      if (missing) return MakeError(ErrorCode::kInvalidArgument, "-o/--output needs a value");
      out.args.push_back("--output");
      out.args.push_back(*v);
      output = true;
    } else if (auto ns = FlagValue(args, i, "-n", "--namespace", missing)) {
      if (missing || ns->empty())
        return MakeError(ErrorCode::kInvalidArgument, "-n/--namespace needs a namespace");
      out.ns = *ns;
    } else if (args[i] == "-A" || args[i] == "--all-namespaces") {
      out.ns.clear();
    } else {
      if (args[i] == "--once") once = true;
      out.args.push_back(args[i]);
    }
  }
  if (!once) out.args.push_back("--once");
  if (!output) {
    out.args.push_back("--output");
    out.args.push_back("table");
  }
  return out;
}

}  // namespace gpuattr::app
