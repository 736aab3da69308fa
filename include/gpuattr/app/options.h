// Command-line flags (docs/design.md#interface), parsed with Boost.Program_options from the
// settings table. Values are kept as written; validation happens in LoadConfig so that file and
// flag errors read the same way.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

// Exit codes of the gpuattr binary (documented in --help and docs/app.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // --once: no cluster answered; a fatal runtime error
inline constexpr int kExitUsage = 2;        // bad flag, bad config file or value
inline constexpr int kExitCannotServe = 3;  // cannot listen (address in use, TLS files unusable)

// The flags as given. What each flag means (and which take values) is the settings table's
// business (app/settings.h): LoadConfig applies them.
struct CommandLine {
  // Every flag given, by name without "--" ("web.listen-address"), with its values in order: one,
  // several for a repeatable flag (--context, --target), none for a switch (--once).
  std::map<std::string, std::vector<std::string>, std::less<>> given;
  std::optional<std::string> config_file;  // --config.file
  bool help = false;
  bool version = false;

  bool Has(std::string_view flag) const { return given.find(flag) != given.end(); }
  // The values of `flag`, or null when it was not given.
  const std::vector<std::string>* Values(std::string_view flag) const {
    auto it = given.find(flag);
    return it == given.end() ? nullptr : &it->second;
  }
};

// `args` excludes argv[0]. Errors carry Boost's message ("unrecognised option '--bogus'").
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// The --help text (src/app/help.cc): what gpuattr does, every flag and config file key of the
// settings table by topic with its default and an example, the endpoints, the exit codes.
std::string HelpText();
// gpuattr(1) in man(7) markup, from the same table and prose as HelpText (src/app/man_page.cc).
// Printed by the hidden flag --help-man (kHelpManFlag), which the build runs to make the page.
inline constexpr std::string_view kHelpManFlag = "--help-man";
std::string ManPage();
// "gpuattr 0.1.0+3.g0123456789ab (revision 0123456789ab, git v0.1.0-3-g0123456789ab)"; without
// git at configure time "gpuattr 0.1.0 (revision unknown)".
std::string VersionText();

}  // namespace gpuattr::app
