// The settings table (app/settings.h) and what is made from it: the config file loader and its
// known-keys check, the flags, ApplyFlags and --help.
#include "gpuattr/app/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"

namespace gpuattr::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string LoadError(const std::string& yaml, std::vector<std::string> args = {}) {
  auto flags = ParseCommandLine(args);
  EXPECT_TRUE(flags.ok()) << flags.error().message;
  auto c = LoadConfig(flags.ok() ? *flags : CommandLine{}, "config.yaml", yaml);
  EXPECT_FALSE(c.ok()) << "expected an error for:\n" << yaml;
  return c.ok() ? "" : c.error().message;
}

// `key: value` as nested YAML ("a.b.c" -> "a:\n  b:\n    c: value\n").
std::string Nested(const std::string& key, const std::string& value) {
  std::string yaml, indent;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
    yaml += indent + key.substr(start, dot - start) + ":\n";
    indent += "  ";
  }
  return yaml + indent + key.substr(start) + ": " + value + "\n";
}

// The sections of the file: every proper prefix of a key ("" is the top level).
std::set<std::string> Sections() {
  std::set<std::string> out = {""};
  for (const Setting& s : Settings())
    for (size_t dot = s.key.find('.'); dot != std::string::npos; dot = s.key.find('.', dot + 1))
      out.insert(s.key.substr(0, dot));
  return out;
}

TEST(Settings, TheTableIsWellFormed) {
  std::set<std::string> keys, flags;
  std::set<SettingGroup> groups_done;
  for (size_t i = 0; i < Settings().size(); ++i) {
    const Setting& s = Settings()[i];
    const std::string name = s.key.empty() ? "--" + s.flag : s.key;
    EXPECT_FALSE(s.key.empty() && s.flag.empty()) << "row " << i << " has neither key nor flag";
    if (!s.key.empty()) {
      EXPECT_TRUE(keys.insert(s.key).second) << "key twice: " << s.key;
    }
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(s.flag).second) << "flag twice: " << s.flag;
    }
    EXPECT_FALSE(s.help.empty()) << name;
    EXPECT_EQ(s.help.back(), '.') << name << ": help is a sentence";
    EXPECT_NE(s.ops == nullptr, s.kind != Setting::Kind::kMeta) << name;
    if (s.kind == Setting::Kind::kValue || s.kind == Setting::Kind::kList) {
      EXPECT_FALSE(s.value_name.empty()) << name;
    }
    if (s.kind == Setting::Kind::kSwitch) {
      EXPECT_TRUE(s.value_name.empty()) << name;
    }
    // Rows of one group are together (--help prints each group once).
    if (i > 0 && Settings()[i - 1].group != s.group) {
      EXPECT_TRUE(groups_done.insert(Settings()[i - 1].group).second) << name;
    }
    EXPECT_FALSE(groups_done.count(s.group)) << name << ": its group appeared before";
  }
  // docs/design.md#interface fixes these flags.
  for (const char* flag : {"kubeconfig", "context", "config.file", "web.listen-address", "interval",
                           "target", "once", "log.level", "state.file", "version", "help"})
    EXPECT_TRUE(flags.count(flag)) << "--" << flag;
}

// Every default, written into a file as the table writes it, loads to Config's defaults.
TEST(Settings, EveryDefaultLoadsFromAFile) {
  std::string yaml;
  Config defaults;
  for (const Setting& s : Settings()) {
    if (s.key.empty() || !s.ops) continue;
    const std::string text = s.default_text.empty() ? "\"\"" : s.default_text;
    auto one = LoadConfig({}, "config.yaml", Nested(s.key, text));
    ASSERT_TRUE(one.ok()) << s.key << ": " << one.error().message;
    one->config_file.clear();
    EXPECT_EQ(*one, defaults) << s.key << ": " << text;
  }
}

TEST(Settings, UnknownKeysInEverySectionNameTheKnownOnes) {
  for (const std::string& section : Sections()) {
    const std::string key = section.empty() ? "no_such_key" : section + ".no_such_key";
    const std::string message = LoadError(Nested(key, "1"));
    EXPECT_THAT(message, StartsWith("config.yaml: " + key + ": unknown key (known keys here: "));
    for (const Setting& s : Settings()) {
      if (s.key.empty() || !s.key.starts_with(section)) continue;
      std::string child = section.empty() ? s.key : s.key.substr(section.size());
      if (!section.empty() && !child.starts_with(".")) continue;
      child = child.substr(section.empty() ? 0 : 1);
      EXPECT_THAT(message, HasSubstr(child.substr(0, child.find('.')))) << key;
    }
  }
  // A key that moved says where to.
  EXPECT_THAT(LoadError("scrape:\n  max_body_bytes: 1MiB\n"),
              StartsWith("config.yaml: scrape.max_body_bytes: moved to scrape.limits.body_bytes"));
  // A section that is not a mapping.
  EXPECT_THAT(LoadError("discovery:\n  trust: [a]\n"),
              StartsWith("config.yaml: discovery.trust: expected a mapping"));
}

// Each parser's complaint, under the key that was read with it.
TEST(Settings, EachParserSaysWhatIsWrongUnderItsKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"interval: 20", "config.yaml: interval: invalid duration \"20\": missing unit"},
      {"stale_after: -5s", "config.yaml: stale_after: "},
      {"scrape: {concurrency: 300}",
       "config.yaml: scrape.concurrency: 300 is out of range [1, 256]"},
      {"scrape: {limits: {query_api_body_bytes: x}}",
       "config.yaml: scrape.limits.query_api_body_bytes: invalid size \"x\" (use e.g. 64MiB"},
      {"scrape: {limits: {query_api_body_bytes: 0}}",
       "config.yaml: scrape.limits.query_api_body_bytes: must be more than 0 bytes"},
      {"idle: {utilization_below: lots}",
       "config.yaml: idle.utilization_below: invalid number \"lots\""},
      {"idle: {memory_at_least: 1 parsec}",
       "config.yaml: idle.memory_at_least: invalid size \"1 parsec\": unknown unit"},
      {"log: {level: 3}", "config.yaml: log.level: unknown level \"3\""},
      {"output: pdf", "config.yaml: output: unknown output format \"pdf\""},
      {"web: {listen_address: ':x'}",
       "config.yaml: web.listen_address: invalid listen address \":x\""},
      {"targets: [ns/svc/x]", "config.yaml: targets[0]: invalid target \"ns/svc/x\""},
      {"targets: [{a: b}]", "config.yaml: targets[0]: expected a string like"},
      {"cluster_name: \"a\\tb\"", "config.yaml: cluster_name: cluster name "},
      {"clusters: [[a]]", "config.yaml: clusters[0]: expected a mapping"},
      {"discovery: {trust: {query_api_namespaces: [ok, '']}}",
       "config.yaml: discovery.trust.query_api_namespaces[1]: expected a namespace name"},
      {"discovery: {trust: {exporters: [{namespace: a, selector: {x: [1]}}]}}",
       "config.yaml: discovery.trust.exporters[0].selector: expected a mapping of label"},
      {"web: {basic_auth: {users: [{username: a, password_file: p}, {username: a, "
       "password_file: q}]}}",
       "config.yaml: web.basic_auth.users[1].username: duplicate user \"a\""},
      {"web: {basic_auth: {users: {a: b}}}", "config.yaml: web.basic_auth.users: expected a list"},
      {"kubeconfig: {a: b}", "config.yaml: kubeconfig: expected a single value"},
  };
  for (const auto& [yaml, want] : cases) EXPECT_THAT(LoadError(yaml), StartsWith(want)) << yaml;
}

// Every flag of the table is one Boost knows, and takes a value when the table says so.
TEST(Settings, EveryFlagOfTheTableParses) {
  for (const Setting& s : Settings()) {
    if (s.flag.empty()) continue;
    std::vector<std::string> args = {"--" + s.flag};
    if (!s.value_name.empty()) args.push_back("x");
    auto flags = ParseCommandLine(args);
    ASSERT_TRUE(flags.ok()) << s.flag << ": " << flags.error().message;
    EXPECT_TRUE(flags->Has(s.flag)) << s.flag;
    if (!s.value_name.empty()) {
      EXPECT_EQ(*flags->Values(s.flag), std::vector<std::string>{"x"}) << s.flag;
      EXPECT_FALSE(ParseCommandLine({"--" + s.flag}).ok()) << s.flag << " needs its value";
    }
  }
  auto lists = ParseCommandLine({"--target", "a/b:1", "--context", "x", "--target=c/d:2"});
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(*lists->Values("target"), (std::vector<std::string>{"a/b:1", "c/d:2"}));
  EXPECT_TRUE(ParseCommandLine({"-h"})->help);
  EXPECT_EQ(ParseCommandLine({"--config.file", "f.yaml"})->config_file, "f.yaml");
}

// A bad value after any flag that takes one is an error naming the flag.
TEST(Settings, BadFlagValuesNameTheFlag) {
  const std::map<std::string, std::string> bad = {
      {"interval", "soon"}, {"log.level", "loud"}, {"web.listen-address", "nowhere"},
      {"target", "x"},      {"output", "pdf"},     {"cluster.name", ""},
      {"shard", "-2"},      {"total-shards", "0"}, {"web.config.file", ""},
      {"context", ""}};
  for (const auto& [flag, value] : bad) {
    std::vector<std::string> args = {"--" + flag, value};
    if (flag == "output") args.push_back("--once");
    auto flags = ParseCommandLine(args);
    ASSERT_TRUE(flags.ok()) << flag;
    auto c = LoadConfig(*flags, "", "");
    ASSERT_FALSE(c.ok()) << flag;
    EXPECT_THAT(c.error().message, StartsWith("--" + flag + ": ")) << flag;
  }
}

// For every setting with a key and a flag, the flag wins over the file.
TEST(Settings, FlagsOverrideTheFile) {
  struct Case {
    const char* flag;
    const char* file_value;
    const char* flag_value;
  };
  const Case cases[] = {{"kubeconfig", "/file", "/flag"},
                        {"interval", "1m", "2m"},
                        {"state.file", "/file", "/flag"},
                        {"log.level", "warn", "error"},
                        {"web.listen-address", "127.0.0.1:1", "127.0.0.1:2"},
                        {"web.config.file", "/file.yml", "/flag.yml"},
                        {"cluster.name", "file", "flag"},
                        {"output", "table", "json"},
                        {"context", "[file]", "flag"},
                        {"target", "[a/file:1]", "a/flag:2"}};
  for (const Case& c : cases) {
    const Setting* row = nullptr;
    for (const Setting& s : Settings())
      if (s.flag == c.flag) row = &s;
    ASSERT_NE(row, nullptr) << c.flag;
    ASSERT_FALSE(row->key.empty()) << c.flag;
    auto from_file = LoadConfig({}, "f.yaml", Nested(row->key, c.file_value));
    ASSERT_TRUE(from_file.ok()) << from_file.error().message;
    auto from_flag =
        LoadConfig(*ParseCommandLine({"--once", "--" + row->flag, c.flag_value}), "", "");
    ASSERT_TRUE(from_flag.ok()) << from_flag.error().message;
    auto both = LoadConfig(*ParseCommandLine({"--once", "--" + row->flag, c.flag_value}), "f.yaml",
                           Nested(row->key, c.file_value));
    ASSERT_TRUE(both.ok()) << both.error().message;
    both->config_file.clear();
    EXPECT_EQ(*both, *from_flag) << c.flag;
    EXPECT_NE(*both, *from_file) << c.flag;
  }
}

TEST(Settings, HelpShowsEveryFlagAndKeyWithItsDefault) {
  const std::string help = HelpText();
  for (const Setting& s : Settings()) {
    const std::string head = s.flag.empty() ? "\n  " + s.key : "--" + s.flag;
    EXPECT_THAT(help, HasSubstr(head + (s.value_name.empty() ? "" : " " + s.value_name)));
    if (!s.flag.empty() && !s.key.empty()) {
      EXPECT_THAT(help, HasSubstr("Config file: " + s.key));
    }
    const std::string shown = s.ShownDefault();
    if (!shown.empty()) {
      EXPECT_THAT(help, HasSubstr("Default: " + shown.substr(0, 20))) << head;
    }
    if (!s.example.empty()) {
      EXPECT_THAT(help, HasSubstr("Example: " + s.example)) << head;
    }
  }
  for (auto group : {SettingGroup::kClusters, SettingGroup::kScrape, SettingGroup::kGeneral})
    EXPECT_THAT(help, HasSubstr("\n" + std::string(GroupTitle(group)) + ":\n"));
  EXPECT_THAT(help, HasSubstr("-h, --help"));
  // No line is wider than the repository's 100 columns.
  for (size_t start = 0, end; start < help.size(); start = end + 1) {
    end = help.find('\n', start);
    EXPECT_LE(end - start, 100u) << help.substr(start, end - start);
  }
}

}  // namespace
}  // namespace gpuattr::app
