// The table of gpuattr's settings (issue 24): each setting is declared once, in
// src/app/settings.cc, with its YAML key, its flag, its default, its parser and its help. The
// config file loader, the known-keys check, the flags (Boost.Program_options), --help, ApplyFlags,
// Config's defaults and the test of config/gpuattr.example.yaml all read this table; a man page
// (issue 31) can too.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuattr::app {

// Sections of --help, in the order shown.
enum class SettingGroup {
  kClusters,
  kCycle,
  kServer,
  kOnce,
  kSharding,
  kScrape,
  kDiscovery,
  kIdle,
  kAccounting,
  kRightsizing,
  kGeneral,
};
std::string_view GroupTitle(SettingGroup group);  // "Clusters", "Scrape", ...

struct SettingOps;  // how the setting reads YAML and flags into a Config (src/app/setting_ops.h)

struct Setting {
  enum class Kind {
    kValue,   // one value: a YAML scalar and/or `--flag VALUE`
    kList,    // a YAML sequence and/or a repeatable flag, which replaces the list
    kSwitch,  // `--flag` alone, sets true
    kMeta,    // a flag about the command line itself: --config.file, --help, --version
  };
  Kind kind = Kind::kValue;
  std::string key{};         // YAML path, "scrape.limits.body_bytes"; "" when flag only
  std::string flag{};        // without "--", "web.listen-address"; "" when config file only
  std::string short_flag{};  // without "-": "h" for -h; usually ""
  std::string value_name{};  // in --help: "--interval DURATION", "scrape.timeout DURATION"
  SettingGroup group = SettingGroup::kGeneral;
  std::string help{};          // one paragraph, a lower-case phrase ending in "."; --help wraps it
  std::string default_text{};  // the default as written in the file ("20s", "16MiB", "[]")
  std::string default_help{};  // shown instead of default_text when "" says too little
  std::string example{};       // "--interval 30s"
  std::shared_ptr<const SettingOps> ops{};  // null for kMeta

  std::string ShownDefault() const { return default_help.empty() ? default_text : default_help; }
};

// Every setting, grouped by SettingGroup, in the order of --help.
const std::vector<Setting>& Settings();

}  // namespace gpuattr::app
