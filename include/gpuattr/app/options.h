// Command-line flags (docs/design.md#interface), parsed with Boost.Program_options. Values are kept
// as written; validation happens in LoadConfig so that file and flag errors read the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

// Exit codes of the gpuattr binary (documented in --help and docs/app.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // --once: no cluster answered; a fatal runtime error
inline constexpr int kExitUsage = 2;        // bad flag, bad config file or value
inline constexpr int kExitCannotServe = 3;  // cannot listen (address in use, TLS files unusable)

struct CommandLine {
  std::optional<std::string> kubeconfig;
  std::vector<std::string> contexts;  // --context, repeatable
  std::optional<std::string> config_file;
  std::optional<std::string> listen_address;
  std::optional<std::string> web_config_file;  // --web.config.file
  std::optional<std::string> interval;
  std::vector<std::string> targets;  // --target, repeatable
  bool once = false;
  std::optional<std::string> output;  // --output: what --once prints
  std::optional<std::string> log_level;
  std::optional<std::string> state_file;
  std::optional<std::string> cluster_name;  // --cluster.name
  std::optional<std::string> shard;         // --shard I
  std::optional<std::string> total_shards;  // --total-shards N
  std::optional<std::string> pod;           // --pod NAME (the shard is its trailing ordinal)
  bool help = false;
  bool version = false;
};

// `args` excludes argv[0]. Errors carry Boost's message ("unrecognised option '--bogus'").
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// The --help text: what gpuattr does, every flag with default and example, config, exit codes.
std::string HelpText();
// "gpuattr 0.1.0 (revision abc123)".
std::string VersionText();

}  // namespace gpuattr::app
