#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"
#include "gpuattr/app/settings.h"
#include "gpuattr/ledger/state_path.h"
#include "support/paths.h"

namespace gpuattr::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

CommandLine Flags(std::vector<std::string> args) {
  auto cl = ParseCommandLine(args);
  EXPECT_TRUE(cl.ok()) << cl.error().message;
  return cl.ok() ? *cl : CommandLine{};
}

Config MustLoad(const CommandLine& flags, std::string_view text) {
  auto c = LoadConfig(flags, "gpuattr.yaml", text);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : Config{};
}

std::string LoadError(std::string_view text, const CommandLine& flags = {}) {
  auto c = LoadConfig(flags, "config.yaml", text);
  EXPECT_FALSE(c.ok()) << "expected an error for:\n" << text;
  return c.ok() ? "" : c.error().message;
}

// --- flags ------------------------------------------------------------------------------------

TEST(AppOptions, DefaultsWithoutFlagsOrFile) {
  Config c = MustLoad(Flags({}), "");
  EXPECT_EQ(c.web.listen_address, "127.0.0.1:9787");
  EXPECT_EQ(c.interval, std::chrono::seconds(20));
  EXPECT_EQ(c.stale_after, std::chrono::minutes(5));
  EXPECT_EQ(c.scrape.concurrency, 0);  // auto (app/session_factory.h)
  EXPECT_EQ(c.scrape.timeout, std::chrono::seconds(15));
  EXPECT_EQ(c.scrape.limits.body_bytes, 16u << 20);
  EXPECT_EQ(c.scrape.limits.samples, 200'000);
  EXPECT_EQ(c.scrape.limits.labels, 1'000'000);
  EXPECT_EQ(c.scrape.limits.devices_per_node, 128);
  EXPECT_EQ(c.scrape.limits.pods_per_device, 64);
  EXPECT_EQ(c.scrape.limits.models_per_server, 16);
  EXPECT_EQ(c.scrape.limits.query_api_body_bytes, 64u << 20);
  EXPECT_TRUE(c.discovery.trust.exporters.empty());
  EXPECT_EQ(c.discovery.trust.query_api_namespaces,
            (std::vector<std::string>{"monitoring", "kube-prometheus-stack", "openshift-monitoring",
                                      "victoria-metrics"}));
  EXPECT_EQ(c.discovery.trust.exporter_namespaces,
            (std::vector<std::string>{"gpu-operator", "nvidia-gpu-operator", "kube-system",
                                      "gpu-monitoring", "monitoring", "dcgm-exporter"}));
  EXPECT_DOUBLE_EQ(c.idle.utilization_below, 0.05);
  EXPECT_EQ(c.idle.memory_at_least_bytes, 256u << 20);
  EXPECT_EQ(c.discovery.cache, std::chrono::seconds(60));
  EXPECT_EQ(c.discovery.not_inference_cache, std::chrono::minutes(10));
  EXPECT_EQ(c.discovery.error_cache, std::chrono::minutes(2));
  EXPECT_EQ(c.discovery.inference_probes_per_cycle, 50);
  EXPECT_EQ(c.log_level, log::Level::kInfo);
  EXPECT_TRUE(c.clusters.empty());
  EXPECT_FALSE(c.once);
  EXPECT_EQ(c.discovery.query_api_above_gpu_nodes, 200);
  EXPECT_EQ(c.cluster_name, "");
  EXPECT_EQ(c.shard.index, 0u);
  EXPECT_EQ(c.shard.total, 1u);
  EXPECT_EQ(c.output, OutputFormat::kPrometheus);
}

TEST(AppOptions, EveryFlagIsRead) {
  Config c = MustLoad(Flags({"--kubeconfig",
                             "/k.yaml",
                             "--context",
                             "a",
                             "--context=b",
                             "--web.listen-address",
                             "[::1]:9000",
                             "--interval",
                             "1m30s",
                             "--target",
                             "gpu-operator/nvidia-dcgm-exporter:9400",
                             "--target",
                             "monitoring/svc/prometheus-k8s:9090",
                             "--once",
                             "--output",
                             "table",
                             "--log.level",
                             "debug",
                             "--state.file",
                             "/tmp/s"}),
                      "");
  EXPECT_EQ(c.kubeconfig, "/k.yaml");
  ASSERT_EQ(c.clusters.size(), 2u);
  EXPECT_EQ(c.clusters[0].context, "a");
  EXPECT_EQ(c.clusters[1].context, "b");
  EXPECT_EQ(c.web.listen_address, "[::1]:9000");
  EXPECT_EQ(c.interval, std::chrono::seconds(90));
  ASSERT_EQ(c.targets.size(), 2u);
  EXPECT_EQ(c.targets[0].kind, TargetPin::Kind::kPodPrefix);
  EXPECT_EQ(c.targets[0].namespace_, "gpu-operator");
  EXPECT_EQ(c.targets[0].name, "nvidia-dcgm-exporter");
  EXPECT_EQ(c.targets[0].port, 9400);
  EXPECT_EQ(c.targets[1].kind, TargetPin::Kind::kService);
  EXPECT_EQ(c.targets[1].name, "prometheus-k8s");
  EXPECT_EQ(c.targets[1].port, 9090);
  EXPECT_TRUE(c.once);
  EXPECT_EQ(c.output, OutputFormat::kTable);
  EXPECT_EQ(c.log_level, log::Level::kDebug);
  EXPECT_EQ(c.state_file, "/tmp/s");
}

TEST(AppOptions, HelpAndVersionSwitches) {
  EXPECT_TRUE(Flags({"--help"}).help);
  EXPECT_TRUE(Flags({"-h"}).help);
  EXPECT_TRUE(Flags({"--version"}).version);
  EXPECT_FALSE(Flags({}).help);
}

TEST(AppOptions, BadFlagsKeepBoostMessageNamingTheFlag) {
  auto unknown = ParseCommandLine({"--bogus"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("--bogus"));
  auto missing = ParseCommandLine({"--interval"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("interval"));
  // No abbreviations: "--int" must not silently become --interval.
  auto guess = ParseCommandLine({"--int", "5s"});
  ASSERT_FALSE(guess.ok());
  EXPECT_THAT(guess.error().message, HasSubstr("--int"));
  auto twice = ParseCommandLine({"--interval", "5s", "--interval", "6s"});
  ASSERT_FALSE(twice.ok());
  EXPECT_FALSE(ParseCommandLine({"stray"}).ok());
}

TEST(AppOptions, BadFlagValuesNameTheFlag) {
  auto err = [](std::vector<std::string> args) {
    auto c = LoadConfig(Flags(std::move(args)), "", "");
    EXPECT_FALSE(c.ok());
    return c.ok() ? "" : c.error().message;
  };
  EXPECT_THAT(err({"--interval", "20"}),
              StartsWith("--interval: invalid duration \"20\": missing unit"));
  EXPECT_THAT(err({"--interval", "0s"}), StartsWith("--interval: "));
  EXPECT_THAT(err({"--log.level", "loud"}), StartsWith("--log.level: unknown level \"loud\""));
  EXPECT_THAT(err({"--target", "nope"}), StartsWith("--target: invalid target \"nope\""));
  EXPECT_THAT(err({"--target", "ns/pod:99999"}), StartsWith("--target: "));
  EXPECT_THAT(err({"--web.listen-address", "9787"}), StartsWith("--web.listen-address: "));
  EXPECT_THAT(err({"--context", "a", "--context", "a"}), HasSubstr("\"a\" is used twice"));
  EXPECT_THAT(err({"--once", "--output", "yaml"}),
              StartsWith("--output: unknown output format \"yaml\" (use prometheus, table, json "
                         "or markdown)"));
  EXPECT_THAT(err({"--output", "json"}), StartsWith("--output: applies to --once only"));
}

TEST(AppOptions, EveryOutputFormatIsKnown) {
  for (auto [name, format] : {std::pair{"prometheus", OutputFormat::kPrometheus},
                              {"table", OutputFormat::kTable},
                              {"json", OutputFormat::kJson},
                              {"markdown", OutputFormat::kMarkdown}}) {
    Config c = MustLoad(Flags({"--once", "--output", name}), "");
    EXPECT_EQ(c.output, format) << name;
  }
  // The file's `output` is for --once; the flag wins over it.
  EXPECT_EQ(MustLoad(Flags({"--once"}), "output: markdown\n").output, OutputFormat::kMarkdown);
  EXPECT_EQ(MustLoad(Flags({"--once", "--output", "json"}), "output: markdown\n").output,
            OutputFormat::kJson);
  EXPECT_THAT(LoadError("output: html\n"), HasSubstr("output: unknown output format \"html\""));
}

TEST(AppOptions, HelpTextTeaches) {
  std::string h = HelpText();
  for (const char* flag :
       {"--kubeconfig", "--context", "--config.file", "--web.listen-address", "--web.config.file",
        "--interval", "--target", "--once", "--output", "--log.level", "--state.file",
        "--cluster.name", "--shard", "--total-shards", "--pod", "--version", "--help"})
    EXPECT_THAT(h, HasSubstr(flag));
  EXPECT_THAT(h, HasSubstr("127.0.0.1:9787"));
  EXPECT_THAT(h, HasSubstr("20s"));
  EXPECT_THAT(h, HasSubstr("config/gpuattr.example.yaml"));
  EXPECT_THAT(h, HasSubstr("Exit codes"));
}

// --- precedence ---------------------------------------------------------------------------------

TEST(AppConfig, FileOverridesDefaultsAndFlagsOverrideFile) {
  const char* file = R"(
interval: 45s
web: {listen_address: "0.0.0.0:9100"}
log: {level: warn}
state_file: /var/lib/gpuattr.state
targets: [a/b:1]
clusters:
  - context: kind-gpu
    name: lab
  - prod
)";
  Config from_file = MustLoad({}, file);
  EXPECT_EQ(from_file.interval, std::chrono::seconds(45));
  EXPECT_EQ(from_file.web.listen_address, "0.0.0.0:9100");
  EXPECT_EQ(from_file.log_level, log::Level::kWarn);
  EXPECT_EQ(from_file.state_file, "/var/lib/gpuattr.state");
  ASSERT_EQ(from_file.clusters.size(), 2u);
  EXPECT_EQ(from_file.clusters[0].Label(), "lab");
  EXPECT_EQ(from_file.clusters[1].Label(), "prod");
  ASSERT_EQ(from_file.targets.size(), 1u);

  Config flags_win =
      MustLoad(Flags({"--interval", "5s", "--log.level", "error", "--web.listen-address",
                      "127.0.0.1:1", "--context", "kind-gpu", "--target", "x/y:2"}),
               file);
  EXPECT_EQ(flags_win.interval, std::chrono::seconds(5));
  EXPECT_EQ(flags_win.log_level, log::Level::kError);
  EXPECT_EQ(flags_win.web.listen_address, "127.0.0.1:1");
  EXPECT_EQ(flags_win.state_file, "/var/lib/gpuattr.state");  // not given as a flag: file value
  ASSERT_EQ(flags_win.clusters.size(), 1u);                   // --context replaces the list ...
  EXPECT_EQ(flags_win.clusters[0].Label(), "lab");  // ... but keeps the file's name for it
  ASSERT_EQ(flags_win.targets.size(), 1u);
  EXPECT_EQ(flags_win.targets[0].text, "x/y:2");
}

TEST(AppConfig, ScrapeConcurrencyIsAutoOrANumber) {
  EXPECT_EQ(MustLoad({}, "scrape: {concurrency: auto}\n").scrape.concurrency, 0);
  EXPECT_EQ(MustLoad({}, "scrape: {concurrency: 4}\n").scrape.concurrency, 4);
}

TEST(AppConfig, EveryKeyOfTheFileIsRead) {
  Config c = MustLoad({}, R"(
kubeconfig: /home/me/.kube/lab
stale_after: 90s
web:
  tls: {cert_file: c.pem, key_file: k.pem}
  basic_auth:
    users:
      - {username: prom, password_file: /p}
scrape: {concurrency: 3, timeout: 2s, limits: {body_bytes: 1GiB, samples: 10, devices_per_node: 9,
         labels: 11, pods_per_device: 8, models_per_server: 7, query_api_body_bytes: 2MiB}}
idle: {utilization_below: 0.1, memory_at_least: 1GB}
discovery:
  cache: 30s
  not_inference_cache: 5m
  error_cache: 1m
  inference_probes_per_cycle: 7
  trust:
    exporters:
      - {namespace: gpu-mon, selector: {app: my-exporter, tier: gpu}}
      - namespace: telemetry
    exporter_namespaces: [gpu-ops, ops]
    query_api_namespaces: [obs]
)");
  EXPECT_EQ(c.kubeconfig, "/home/me/.kube/lab");
  EXPECT_EQ(c.stale_after, std::chrono::seconds(90));
  EXPECT_EQ(c.web.tls_cert_file, "c.pem");
  EXPECT_EQ(c.web.tls_key_file, "k.pem");
  ASSERT_EQ(c.web.basic_auth_users.size(), 1u);
  EXPECT_EQ(c.web.basic_auth_users[0].username, "prom");
  EXPECT_EQ(c.web.basic_auth_users[0].password_file, "/p");
  EXPECT_EQ(c.scrape.concurrency, 3);
  EXPECT_EQ(c.scrape.timeout, std::chrono::seconds(2));
  EXPECT_EQ(c.scrape.limits.body_bytes, 1ull << 30);
  EXPECT_EQ(c.scrape.limits.samples, 10);
  EXPECT_EQ(c.scrape.limits.labels, 11);
  EXPECT_EQ(c.scrape.limits.devices_per_node, 9);
  EXPECT_EQ(c.scrape.limits.pods_per_device, 8);
  EXPECT_EQ(c.scrape.limits.models_per_server, 7);
  EXPECT_EQ(c.scrape.limits.query_api_body_bytes, 2u << 20);
  ASSERT_EQ(c.discovery.trust.exporters.size(), 2u);
  EXPECT_EQ(c.discovery.trust.exporters[0].namespace_, "gpu-mon");
  EXPECT_EQ(c.discovery.trust.exporters[0].selector,
            (std::map<std::string, std::string>{{"app", "my-exporter"}, {"tier", "gpu"}}));
  EXPECT_EQ(c.discovery.trust.exporters[1].namespace_, "telemetry");
  EXPECT_TRUE(c.discovery.trust.exporters[1].selector.empty());
  EXPECT_EQ(c.discovery.trust.query_api_namespaces, std::vector<std::string>{"obs"});
  EXPECT_EQ(c.discovery.trust.exporter_namespaces, (std::vector<std::string>{"gpu-ops", "ops"}));
  EXPECT_DOUBLE_EQ(c.idle.utilization_below, 0.1);
  EXPECT_EQ(c.idle.memory_at_least_bytes, 1'000'000'000u);
  EXPECT_EQ(c.discovery.cache, std::chrono::seconds(30));
  EXPECT_EQ(c.discovery.not_inference_cache, std::chrono::minutes(5));
  EXPECT_EQ(c.discovery.error_cache, std::chrono::minutes(1));
  EXPECT_EQ(c.discovery.inference_probes_per_cycle, 7);
}

TEST(AppConfig, EmptyFileAndNullSectionsKeepDefaults) {
  Config defaults = MustLoad({}, "");
  EXPECT_EQ(MustLoad({}, "\n# only a comment\n"), defaults);
  Config nulls = MustLoad({}, "web:\nscrape:\nclusters:\ninterval: ~\n");
  nulls.config_file = defaults.config_file;
  EXPECT_EQ(nulls, defaults);
}

// --- bad file values: "FILE: KEY: problem" -------------------------------------------------------

TEST(AppConfig, BadValuesNameFileAndKey) {
  EXPECT_THAT(LoadError("scrape:\n  timeout: 15\n"),
              StartsWith("config.yaml: scrape.timeout: invalid duration \"15\": missing unit"));
  EXPECT_THAT(LoadError("interval: soon\n"), StartsWith("config.yaml: interval: invalid duration"));
  EXPECT_THAT(LoadError("interval: 0s\n"), StartsWith("config.yaml: interval: "));
  EXPECT_THAT(LoadError("stale_after: 5\n"),
              StartsWith("config.yaml: stale_after: invalid duration \"5\": missing unit"));
  EXPECT_THAT(LoadError("scrape: {concurrency: many}\n"),
              StartsWith("config.yaml: scrape.concurrency: invalid integer \"many\""));
  EXPECT_THAT(LoadError("scrape: {concurrency: 0}\n"),
              StartsWith("config.yaml: scrape.concurrency: 0 is out of range"));
  EXPECT_THAT(LoadError("scrape: {limits: {body_bytes: 64 furlongs}}\n"),
              StartsWith("config.yaml: scrape.limits.body_bytes: invalid size"));
  EXPECT_THAT(LoadError("scrape: {limits: {body_bytes: 0}}\n"),
              StartsWith("config.yaml: scrape.limits.body_bytes: "));
  // The old key names where it went.
  EXPECT_THAT(LoadError("scrape: {max_body_bytes: 64MiB}\n"),
              StartsWith("config.yaml: scrape.max_body_bytes: moved to scrape.limits.body_bytes"));
  EXPECT_THAT(LoadError("scrape: {limits: {samples: 0}}\n"),
              StartsWith("config.yaml: scrape.limits.samples: 0 is out of range"));
  EXPECT_THAT(LoadError("scrape: {limits: {devices: 3}}\n"),
              StartsWith("config.yaml: scrape.limits.devices: unknown key"));
  EXPECT_THAT(LoadError("discovery: {trust: {exporters: [{selector: {app: x}}]}}\n"),
              StartsWith("config.yaml: discovery.trust.exporters[0].namespace: missing"));
  EXPECT_THAT(LoadError("discovery: {trust: {exporters: [{namespace: a, selector: [x]}]}}\n"),
              StartsWith("config.yaml: discovery.trust.exporters[0].selector: expected a mapping"));
  EXPECT_THAT(LoadError("discovery: {trust: {query_api_namespaces: monitoring}}\n"),
              StartsWith("config.yaml: discovery.trust.query_api_namespaces: expected a list"));
  EXPECT_THAT(LoadError("discovery: {trust: {exporter_namespaces: [ok, '']}}\n"),
              StartsWith("config.yaml: discovery.trust.exporter_namespaces[1]: expected a "
                         "namespace name"));
  EXPECT_THAT(LoadError("discovery: {trust: {namespaces: []}}\n"),
              StartsWith("config.yaml: discovery.trust.namespaces: unknown key"));
  EXPECT_THAT(LoadError("idle: {utilization_below: 5}\n"),
              StartsWith("config.yaml: idle.utilization_below: 5 is not a ratio"));
  EXPECT_THAT(LoadError("idle: {memory_at_least: lots}\n"),
              StartsWith("config.yaml: idle.memory_at_least: invalid size"));
  EXPECT_THAT(LoadError("discovery: {cache: 1}\n"),
              StartsWith("config.yaml: discovery.cache: invalid duration"));
  EXPECT_THAT(LoadError("discovery: {not_inference_cache: x}\n"),
              StartsWith("config.yaml: discovery.not_inference_cache: "));
  EXPECT_THAT(LoadError("discovery: {error_cache: -1s}\n"),
              StartsWith("config.yaml: discovery.error_cache: "));
  EXPECT_THAT(LoadError("discovery: {inference_probes_per_cycle: -1}\n"),
              StartsWith("config.yaml: discovery.inference_probes_per_cycle: -1 is out of range"));
  EXPECT_THAT(LoadError("discovery: {inference_probes_per_cycle: lots}\n"),
              StartsWith("config.yaml: discovery.inference_probes_per_cycle: invalid integer"));
  EXPECT_THAT(LoadError("log: {level: chatty}\n"),
              StartsWith("config.yaml: log.level: unknown level \"chatty\""));
  EXPECT_THAT(LoadError("web: {listen_address: localhost}\n"),
              StartsWith("config.yaml: web.listen_address: invalid listen address"));
  EXPECT_THAT(LoadError("web: {tls: {cert_file: c.pem}}\n"),
              StartsWith("config.yaml: web.tls: set both"));
  EXPECT_THAT(LoadError("web: {basic_auth: {users: [{username: a}]}}\n"),
              StartsWith("config.yaml: web.basic_auth.users[0].password_file: missing"));
  EXPECT_THAT(LoadError("web: {basic_auth: {users: [{username: 'a:b', password_file: p}]}}\n"),
              StartsWith("config.yaml: web.basic_auth.users[0].username: "));
  EXPECT_THAT(LoadError("targets: [gpu-operator/dcgm]\n"),
              StartsWith("config.yaml: targets[0]: invalid target \"gpu-operator/dcgm\""));
  EXPECT_THAT(LoadError("targets: [a/b/c/d:1]\n"), StartsWith("config.yaml: targets[0]: "));
  EXPECT_THAT(LoadError("targets: a/b:1\n"), StartsWith("config.yaml: targets: expected a list"));
  EXPECT_THAT(LoadError("clusters: [{name: x}]\n"),
              StartsWith("config.yaml: clusters[0].context: missing"));
  EXPECT_THAT(LoadError("clusters: [{context: a, name: x}, {context: b, name: x}]\n"),
              HasSubstr("\"x\" is used twice"));
  EXPECT_THAT(LoadError("interval: [20s]\n"),
              StartsWith("config.yaml: interval: expected a single value"));
  EXPECT_THAT(LoadError("scrape: 8\n"), StartsWith("config.yaml: scrape: expected a mapping"));
  EXPECT_THAT(LoadError("- a\n- b\n"), StartsWith("config.yaml: (top level): expected a mapping"));
}

TEST(AppConfig, UnknownKeysAreErrorsAtEveryLevel) {
  EXPECT_THAT(LoadError("intervall: 20s\n"),
              StartsWith("config.yaml: intervall: unknown key (known keys here: "));
  EXPECT_THAT(LoadError("scrape: {timout: 1s}\n"),
              StartsWith("config.yaml: scrape.timout: unknown key"));
  EXPECT_THAT(LoadError("web: {tls: {cert: x}}\n"),
              StartsWith("config.yaml: web.tls.cert: unknown key"));
  EXPECT_THAT(LoadError("clusters: [{context: a, label: b}]\n"),
              StartsWith("config.yaml: clusters[0].label: unknown key"));
  EXPECT_THAT(LoadError("web: {basic_auth: {users: [{username: a, password: b}]}}\n"),
              StartsWith("config.yaml: web.basic_auth.users[0].password: unknown key"));
}

TEST(AppConfig, SyntaxErrorNamesFileAndLine) {
  EXPECT_THAT(LoadError("web:\n  listen_address: [unclosed\n"), StartsWith("config.yaml:"));
  EXPECT_THAT(LoadError("web:\n  listen_address: [unclosed\n"), HasSubstr("invalid YAML"));
}

TEST(AppConfig, UnreadableFileIsNamed) {
  CommandLine f;
  f.config_file = "/nonexistent/gpuattr.yaml";
  auto c = LoadConfigFromFlags(f);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("/nonexistent/gpuattr.yaml"));
  EXPECT_THAT(c.error().message, StartsWith("--config.file: "));
}

// --- the example file is honest ------------------------------------------------------------------

std::filesystem::path ExamplePath() {
  return gpuattr::testing::SourceDir() / "config" / "gpuattr.example.yaml";
}

// The state file's default is the XDG state directory: "" in the config and in the example,
// resolved where the file is opened (as kubeconfig "" means $KUBECONFIG, else ~/.kube/config).
TEST(AppConfig, StateFileDefaultsToTheXdgStateDirectory) {
  Config defaults = MustLoad({}, "");
  EXPECT_EQ(defaults.state_file, "");
  EXPECT_EQ(*ledger::ResolveStateFilePath(defaults.state_file, "/xdg", "/home/u"),
            "/xdg/gpuattr/state.json");
  EXPECT_EQ(*ledger::ResolveStateFilePath(defaults.state_file, nullptr, "/home/u"),
            "/home/u/.local/state/gpuattr/state.json");
  EXPECT_THAT(HelpText(), HasSubstr("Default: $XDG_STATE_HOME/gpuattr/state.json, else"));
  EXPECT_THAT(gpuattr::testing::ReadFile(ExamplePath()),
              HasSubstr("$XDG_STATE_HOME/gpuattr/state.json, else "
                        "~/.local/state/gpuattr/state.json"));
}

TEST(AppConfig, ExampleFileParsesAndEqualsTheDefaults) {
  CommandLine f;
  f.config_file = ExamplePath().string();
  auto example = LoadConfigFromFlags(f);
  ASSERT_TRUE(example.ok()) << example.error().message;
  Config defaults = MustLoad({}, "");
  example->config_file.clear();
  defaults.config_file.clear();
  EXPECT_EQ(*example, defaults);
}

// Every key of the settings table appears in the example file, with its default as the value.
// (That nothing in the file is unknown, the test above shows: it loads.)
TEST(AppConfig, ExampleFileDocumentsEveryKeyOfTheTable) {
  const YAML::Node example = YAML::LoadFile(ExamplePath().string());
  for (const Setting& s : Settings()) {
    if (s.key.empty()) continue;
    YAML::Node node = example;
    for (size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
      end = s.key.find('.', start);
      node.reset(node[s.key.substr(start, end - start)]);  // (operator= would assign through)
    }
    EXPECT_TRUE(node.IsDefined()) << "config/gpuattr.example.yaml does not document " << s.key;
    if (node.IsDefined() && s.kind == Setting::Kind::kValue) {
      EXPECT_TRUE(node.IsScalar()) << s.key;
      if (node.IsScalar()) {
        EXPECT_EQ(node.Scalar(), s.default_text) << s.key;
      }
    }
  }
}

// --- building blocks ----------------------------------------------------------------------------

TEST(AppConfig, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("64MiB"), 64ull << 20);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1ull << 30);
  EXPECT_EQ(*ParseByteSize("512KiB"), 512ull << 10);
  EXPECT_EQ(*ParseByteSize("1000"), 1000u);
  EXPECT_EQ(*ParseByteSize("2 MB"), 2'000'000u);
  EXPECT_FALSE(ParseByteSize("MiB").ok());
  EXPECT_FALSE(ParseByteSize("1.5GiB").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999GiB").ok());
  EXPECT_FALSE(ParseByteSize("20000000000GiB").ok());  // overflows 64 bits
}

TEST(AppConfig, ListenAddresses) {
  auto v4 = ParseListenAddress("127.0.0.1:9787");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9787);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  auto any = ParseListenAddress(":9787");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_FALSE(ParseListenAddress("::1:9787").ok());
  EXPECT_FALSE(ParseListenAddress("host:http").ok());
  EXPECT_FALSE(ParseListenAddress("host:70000").ok());
}

TEST(AppConfig, TargetPins) {
  auto pod = ParseTargetPin("gpu-operator/nvidia-dcgm-exporter:9400");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->kind, TargetPin::Kind::kPodPrefix);
  auto svc = ParseTargetPin("monitoring/svc/vmselect:8481");
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(svc->kind, TargetPin::Kind::kService);
  EXPECT_EQ(svc->namespace_, "monitoring");
  EXPECT_EQ(svc->name, "vmselect");
  EXPECT_EQ(svc->port, 8481);
  for (const char* bad : {"", "ns", "ns/pod", "ns/pod:", "ns/pod:0", "ns/pod:x", "/pod:1", "ns/:1",
                          "ns/service/name:1", "ns/svc/:1", "ns/p d:1"})
    EXPECT_FALSE(ParseTargetPin(bad).ok()) << bad;
}

// --- in the cluster, sharding, the read path --------------------------------------------------

TEST(AppConfig, ClusterNameFromFlagOrFile) {
  EXPECT_EQ(MustLoad(Flags({"--cluster.name", "prod-eu"}), "").cluster_name, "prod-eu");
  EXPECT_EQ(MustLoad(Flags({}), "cluster_name: lab\n").cluster_name, "lab");
  EXPECT_EQ(MustLoad(Flags({"--cluster.name=flag"}), "cluster_name: file\n").cluster_name, "flag");
  EXPECT_EQ(MustLoad(Flags({}), "cluster_name: \"\"\n").cluster_name, "");  // the default
  auto empty = LoadConfig(Flags({"--cluster.name", ""}), "", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, StartsWith("--cluster.name: empty cluster name"));
  // One name cannot label several clusters.
  auto several =
      LoadConfig(Flags({"--cluster.name", "x", "--context", "a", "--context", "b"}), "", "");
  ASSERT_FALSE(several.ok());
  EXPECT_THAT(several.error().message, StartsWith("--cluster.name names one cluster, but 2"));
  EXPECT_THAT(LoadError("cluster_name: x\nclusters: [a, b]\n"),
              StartsWith("config.yaml: cluster_name names one cluster"));
}

TEST(AppConfig, ShardFromFlags) {
  Config c = MustLoad(Flags({"--shard", "1", "--total-shards", "3"}), "");
  EXPECT_EQ(c.shard.index, 1u);
  EXPECT_EQ(c.shard.total, 3u);
  c = MustLoad(Flags({"--pod=gpuattr-2", "--total-shards=3"}), "");
  EXPECT_EQ(c.shard.index, 2u);
  EXPECT_EQ(c.shard.total, 3u);
  EXPECT_EQ(c.shard.pod, "gpuattr-2");
  c = MustLoad(Flags({"--pod", "gpuattr-0", "--total-shards", "1"}), "");
  EXPECT_EQ(c.shard.total, 1u);
}

TEST(AppConfig, BadShardFlagsSayWhatIsWrong) {
  auto err = [](std::vector<std::string> args) {
    auto c = LoadConfig(Flags(std::move(args)), "", "");
    EXPECT_FALSE(c.ok());
    return c.ok() ? "" : c.error().message;
  };
  EXPECT_THAT(err({"--shard", "1"}), StartsWith("--shard needs --total-shards N"));
  EXPECT_THAT(err({"--pod", "gpuattr-1"}), StartsWith("--pod needs --total-shards N"));
  EXPECT_THAT(err({"--total-shards", "3"}), HasSubstr("needs --shard I or --pod NAME"));
  EXPECT_THAT(err({"--shard", "3", "--total-shards", "3"}),
              StartsWith("--shard: 3 is out of range [0, 2]"));
  EXPECT_THAT(err({"--shard=-1", "--total-shards", "3"}), StartsWith("--shard: "));
  EXPECT_THAT(err({"--shard", "x", "--total-shards", "3"}), StartsWith("--shard: invalid integer"));
  EXPECT_THAT(err({"--shard", "0", "--total-shards", "0"}), StartsWith("--total-shards: 0 is out"));
  EXPECT_THAT(err({"--shard", "0", "--pod", "gpuattr-0", "--total-shards", "2"}),
              HasSubstr("both give the shard"));
  EXPECT_THAT(err({"--pod", "gpuattr-3", "--total-shards", "3"}),
              StartsWith("--pod \"gpuattr-3\": ordinal 3 is not below --total-shards 3"));
  EXPECT_THAT(err({"--pod", "gpuattr", "--total-shards", "3"}), HasSubstr("has no '-'"));
  EXPECT_THAT(err({"--pod", "$(POD_NAME)", "--total-shards", "3"}),
              HasSubstr("a variable was not expanded"));
}

TEST(AppConfig, PodOrdinals) {
  EXPECT_EQ(*PodOrdinal("gpuattr-0"), 0u);
  EXPECT_EQ(*PodOrdinal("gpuattr-12"), 12u);
  EXPECT_EQ(*PodOrdinal("my-gpu-attr-7"), 7u);  // the last '-' counts
  for (const char* bad : {"", "gpuattr", "gpuattr-", "gpuattr-x", "gpuattr-1a", "gpuattr- 1",
                          "gpuattr-99999999999", "gpuattr-$(ORDINAL)"})
    EXPECT_FALSE(PodOrdinal(bad).ok()) << bad;
}

TEST(AppConfig, QueryApiThreshold) {
  EXPECT_EQ(MustLoad({}, "discovery:\n  query_api_above_gpu_nodes: 50\n")
                .discovery.query_api_above_gpu_nodes,
            50);
  EXPECT_EQ(MustLoad({}, "discovery:\n  query_api_above_gpu_nodes: 0\n")
                .discovery.query_api_above_gpu_nodes,
            0);
  EXPECT_THAT(LoadError("discovery:\n  query_api_above_gpu_nodes: -1\n"),
              StartsWith("config.yaml: discovery.query_api_above_gpu_nodes: -1 is out of range"));
}

}  // namespace
}  // namespace gpuattr::app
