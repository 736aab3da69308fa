// gpuattr: parse flags and config, run the application, map the outcome to an exit code.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "gpuattr/app/config.h"
#include "gpuattr/app/kubectl_plugin.h"
#include "gpuattr/app/process.h"
#include "gpuattr/app/report_command.h"
#include "gpuattr/app/run.h"
#include "gpuattr/app/session_factory.h"

int main(int argc, char** argv) {
  using namespace gpuattr::app;
  std::signal(SIGPIPE, SIG_IGN);  // httplib writes to sockets peers may have closed
  // Before any credential is read: tokens and keys must never reach a core file.
  if (auto s = KeepSecretsOutOfCoreDumps(CoreDumpsAllowed(std::getenv(kAllowCoreDumpsEnv))); !s) {
    std::cerr << "gpuattr: " << s.message() << "\n";
    return kExitFailure;
  }
  if (argc == 2 && argv[1] == kHelpManFlag) {  // hidden: the build writes gpuattr.1 with it
    std::cout << ManPage();
    return kExitOk;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == kReportCommand)  // the state file alone: no cluster, no config
    return RunReportCommand({args.begin() + 1, args.end()}, std::cout, std::cerr);
  std::string plugin_namespace;
  if (IsKubectlPlugin(argv[0])) {  // kubectl gpuattr: --once --output table, kubectl's flags
    auto plugin = TranslatePluginArgs(args);
    if (!plugin.ok()) {
      std::cerr << "kubectl gpuattr: " << plugin.error().message << "\n";
      return kExitUsage;
    }
    args = std::move(plugin->args);
    plugin_namespace = std::move(plugin->ns);
  }
  auto flags = ParseCommandLine(args);
  if (!flags.ok()) {
    std::cerr << "gpuattr: " << flags.error().message << " (see --help)\n";
    return kExitUsage;
  }
  if (flags->help) {
    std::cout << HelpText();
    return kExitOk;
  }
  if (flags->version) {
    std::cout << VersionText() << "\n";
    return kExitOk;
  }
  auto config = LoadConfigFromFlags(*flags);
  if (!config.ok()) {
    std::cerr << "gpuattr: " << config.error().message << "\n";
    return kExitUsage;
  }
  config->once_namespace = plugin_namespace;
  // The one place where cluster sessions come from: one kube-backed session per context.
  // SIGHUP reads the same flags and the config file again.
  return Run(*config, MakeKubeSessions, std::cout, std::cerr,
             [flags = *flags] { return LoadConfigFromFlags(flags); });
}
