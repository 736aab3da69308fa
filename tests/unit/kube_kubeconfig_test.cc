// kubeconfig parsing, kubectl-style merging and context selection (no network).
#include "gpuattr/kube/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/test_certs.h"

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-kubeconfig-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

constexpr const char* kFileA = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: shared
  cluster: {server: "https://a.example:6443", certificate-authority: certs/ca.crt}
- name: only-a
  cluster: {server: "https://only-a.example"}
users:
- name: shared-user
  user: {token: token-from-a}
contexts:
- name: a
  context: {cluster: shared, user: shared-user, namespace: ns-a}
- name: shared-ctx
  context: {cluster: only-a, user: shared-user}
)";

constexpr const char* kFileB = R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster: {server: "https://b.example:6443", insecure-skip-tls-verify: true}
- name: only-b
  cluster: {server: "https://only-b.example", tls-server-name: kubernetes.default}
users:
- name: shared-user
  user: {token: token-from-b, username: ignored}
- name: b-user
  user: {tokenFile: secrets/token}
contexts:
- name: b
  context: {cluster: only-b, user: b-user}
- name: shared-ctx
  context: {cluster: only-b, user: b-user}
)";

TEST_F(KubeconfigTest, KubeconfigListMergesFirstDefinitionWins) {
  Write("a/certs/ca.crt", "CA-PEM-A");
  auto a = Write("a/config", kFileA);
  auto b = Write("b/config", kFileB);
  KubeconfigSource src;
  src.kubeconfig = a.string() + "::" + (dir_ / "missing").string() + ":" + b.string();
  auto cfg = LoadKubeconfig(src);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->files, (std::vector<std::string>{a.string(), b.string()}));
  EXPECT_EQ(cfg->current_context, "a");
  EXPECT_EQ(cfg->clusters.at("shared").server, "https://a.example:6443");
  EXPECT_FALSE(cfg->clusters.at("shared").insecure_skip_tls_verify);  // whole entry from file a
  EXPECT_EQ(cfg->users.at("shared-user").token, "token-from-a");
  EXPECT_EQ(cfg->users.at("shared-user").username, "");
  EXPECT_EQ(cfg->contexts.at("shared-ctx").cluster, "only-a");
  EXPECT_EQ(cfg->clusters.at("only-b").tls_server_name, "kubernetes.default");
  // Relative paths resolve against the directory of the file that holds them.
  EXPECT_EQ(cfg->clusters.at("shared").certificate_authority, (dir_ / "a/certs/ca.crt").string());
  EXPECT_EQ(cfg->users.at("b-user").token_file, (dir_ / "b/secrets/token").string());

  auto conns = SelectContexts(*cfg, {});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  ASSERT_EQ(conns->size(), 1u);
  const auto& c = conns->front();
  EXPECT_EQ(c.context_name, "a");
  EXPECT_EQ(c.server, "https://a.example:6443");
  EXPECT_EQ(c.ca_pem, "CA-PEM-A");
  EXPECT_EQ(c.ca_file, (dir_ / "a/certs/ca.crt").string());
  EXPECT_EQ(c.token, "token-from-a");
  EXPECT_EQ(c.default_namespace, "ns-a");
  EXPECT_EQ(c.kubeconfig_path, a.string());

  // Reversed order: file b wins.
  src.kubeconfig = b.string() + ":" + a.string();
  auto rev = LoadKubeconfig(src);
  ASSERT_TRUE(rev.ok());
  EXPECT_EQ(rev->current_context, "b");
  EXPECT_TRUE(rev->clusters.at("shared").insecure_skip_tls_verify);
}

TEST_F(KubeconfigTest, SeveralNamedContextsBecomeConnections) {
  Write("a/certs/ca.crt", "CA");
  auto a = Write("a/config", kFileA);
  auto b = Write("b/config", kFileB);
  Write("b/secrets/token", "tok");
  KubeconfigSource src;
  src.kubeconfig = a.string() + ":" + b.string();
  auto conns = LoadConnections(src, {"b", "a", "b"});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  ASSERT_EQ(conns->size(), 2u);
  EXPECT_EQ((*conns)[0].context_name, "b");
  EXPECT_EQ((*conns)[0].server, "https://only-b.example");
  EXPECT_EQ((*conns)[0].tls_server_name, "kubernetes.default");
  EXPECT_EQ((*conns)[0].token_file, (dir_ / "b/secrets/token").string());
  EXPECT_EQ((*conns)[0].default_namespace, "default");
  EXPECT_EQ((*conns)[1].context_name, "a");

  auto missing = LoadConnections(src, {"nope"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("context \"nope\" not found in kubeconfig"));
  EXPECT_THAT(missing.error().message, HasSubstr(a.string()));
}

TEST_F(KubeconfigTest, ExplicitPathOverridesEnvironmentAndMustExist) {
  auto a = Write("a/config", kFileA);
  auto b = Write("b/config", kFileB);
  KubeconfigSource src;
  src.kubeconfig = a.string();
  src.explicit_path = b.string();
  auto cfg = LoadKubeconfig(src);
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->current_context, "b");
  EXPECT_EQ(cfg->clusters.count("only-a"), 0u);

  src.explicit_path = (dir_ / "nope.yaml").string();
  auto missing = LoadKubeconfig(src);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--kubeconfig " + src.explicit_path + ": no such file");
}

TEST_F(KubeconfigTest, DefaultsToHomeKubeConfig) {
  Write("home/.kube/config", kFileB);
  KubeconfigSource src;
  src.kubeconfig = "";  // set but empty counts as unset, like kubectl
  src.home = (dir_ / "home").string();
  EXPECT_EQ(KubeconfigFiles(src),
            (std::vector<std::string>{(dir_ / "home/.kube/config").string()}));
  auto cfg = LoadKubeconfig(src);
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->current_context, "b");

  src.home = (dir_ / "elsewhere").string();
  auto none = LoadKubeconfig(src);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("no kubeconfig"));
  EXPECT_THAT(none.error().message, HasSubstr("elsewhere/.kube/config"));
}

TEST_F(KubeconfigTest, AllListedFilesMissingIsAnError) {
  KubeconfigSource src;
  src.kubeconfig = (dir_ / "x").string() + ":" + (dir_ / "y").string();
  auto cfg = LoadKubeconfig(src);
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("none of the files in KUBECONFIG"));
}

TEST_F(KubeconfigTest, AuthProviderIsAClearUnsupportedError) {
  auto p = Write("config", R"(
current-context: gke
clusters: [{name: c, cluster: {server: "https://1.2.3.4"}}]
users:
- name: u
  user:
    auth-provider:
      name: gcp
      config: {access-token: ya29.secret-access-token}
contexts: [{name: gke, context: {cluster: c, user: u}}]
)");
  KubeconfigSource src;
  src.explicit_path = p.string();
  auto conns = LoadConnections(src, {});
  ASSERT_FALSE(conns.ok());
  EXPECT_EQ(conns.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(conns.error().message,
            "context \"gke\": user \"u\" uses auth-provider \"gcp\", which is unsupported: use an "
            "exec credential plugin (e.g. gke-gcloud-auth-plugin)");
}

TEST_F(KubeconfigTest, ExecConfigIsParsedAndRelativeCommandsResolve) {
  auto p = Write("sub/config", R"(
current-context: x
clusters:
- name: c
  cluster:
    server: https://h
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: "123", flag: true}
users:
- name: u1
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/plugin
      args: [a, "b c"]
      env: [{name: K, value: V}, {name: E, value: ""}]
      provideClusterInfo: true
      interactiveMode: Never
      installHint: get it
- name: u2
  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}
contexts:
- {name: x, context: {cluster: c, user: u1, namespace: }}
- {name: y, context: {cluster: c, user: u2}}
)");
  KubeconfigSource src;
  src.explicit_path = p.string();
  auto conns = LoadConnections(src, {"x", "y"});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  const auto& e = *(*conns)[0].exec;
  EXPECT_EQ(e.api_version, "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(e.command, (dir_ / "sub/bin/plugin").string());
  EXPECT_EQ(e.args, (std::vector<std::string>{"a", "b c"}));
  ASSERT_EQ(e.env.size(), 2u);
  EXPECT_EQ(e.env[0], (std::pair<std::string, std::string>{"K", "V"}));
  EXPECT_EQ(e.env[1], (std::pair<std::string, std::string>{"E", ""}));
  EXPECT_TRUE(e.provide_cluster_info);
  EXPECT_EQ(e.interactive_mode, "Never");
  EXPECT_EQ(e.install_hint, "get it");
  EXPECT_EQ(e.cluster_config_json, R"({"audience":"123","flag":true})");
  EXPECT_EQ((*conns)[0].default_namespace, "default");  // `namespace:` with no value
  EXPECT_EQ((*conns)[0].user_source, p.string());
  EXPECT_EQ((*conns)[1].exec->command, "aws");  // bare names are looked up in PATH later
}

TEST_F(KubeconfigTest, DataFieldsAreDecodedAndFilesRead) {
  Write("pki/client.crt", "CERT-FROM-FILE");
  Write("pki/client.key", "KEY-FROM-FILE");
  auto p = Write("config",
                 "current-context: x\n"
                 "clusters: [{name: c, cluster: {server: 'https://h', "
                 "certificate-authority-data: " +
                     gpuattr::testing::Base64("CA-FROM-DATA") +
                     "}}]\n"
                     "users:\n"
                     "- {name: file, user: {client-certificate: pki/client.crt, "
                     "client-key: pki/client.key}}\n"
                     "- {name: data, user: {client-certificate-data: " +
                     gpuattr::testing::Base64("CERT-DATA") +
                     ", client-key-data: " + gpuattr::testing::Base64("KEY-DATA") +
                     "}}\n"
                     "contexts: [{name: x, context: {cluster: c, user: file}}, "
                     "{name: y, context: {cluster: c, user: data}}]\n");
  KubeconfigSource src;
  src.explicit_path = p.string();
  auto conns = LoadConnections(src, {"x", "y"});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  EXPECT_EQ((*conns)[0].ca_pem, "CA-FROM-DATA");
  EXPECT_EQ((*conns)[0].ca_file, "");
  EXPECT_EQ((*conns)[0].client_cert_pem, "CERT-FROM-FILE");
  EXPECT_EQ((*conns)[0].client_key_pem, "KEY-FROM-FILE");
  EXPECT_EQ((*conns)[1].client_cert_pem, "CERT-DATA");
  EXPECT_EQ((*conns)[1].client_key_pem, "KEY-DATA");
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* expect;  // substring of the error, after "kubeconfig <path>: "
};

TEST_F(KubeconfigTest, ErrorsNameTheFileAndTheKey) {
  const BadCase cases[] = {
      {"yaml", "clusters: [\n", "invalid YAML (line"},
      {"top", "- a\n- b\n", "(top level): expected a mapping"},
      {"list", "clusters: {a: b}\n", "clusters: expected a list"},
      {"noname", "clusters: [{cluster: {server: x}}]\n", "clusters[0].name: missing"},
      {"type", "clusters: [{name: c, cluster: {server: [1]}}]\n",
       "clusters[\"c\"].cluster.server: expected a string"},
      {"bool", "clusters: [{name: c, cluster: {server: x, insecure-skip-tls-verify: maybe}}]\n",
       "clusters[\"c\"].cluster.insecure-skip-tls-verify: expected true or false"},
      {"args", "users: [{name: u, user: {exec: {command: x, args: x}}}]\n",
       "users[\"u\"].user.exec.args: expected a list of strings"},
      {"env", "users: [{name: u, user: {exec: {command: x, env: [{value: v}]}}}]\n",
       "users[\"u\"].user.exec.env[0].name: missing"},
      {"cmd", "users: [{name: u, user: {exec: {apiVersion: v}}}]\n",
       "users[\"u\"].user.exec.command: missing"},
  };
  for (const auto& c : cases) {
    auto p = Write(std::string(c.name) + ".yaml", c.yaml);
    KubeconfigSource src;
    src.explicit_path = p.string();
    auto cfg = LoadKubeconfig(src);
    ASSERT_FALSE(cfg.ok()) << c.name;
    EXPECT_THAT(cfg.error().message, HasSubstr("kubeconfig " + p.string() + ": ")) << c.name;
    EXPECT_THAT(cfg.error().message, HasSubstr(c.expect)) << c.name;
  }
}

TEST_F(KubeconfigTest, SelectionErrorsNameContextClusterUserAndKey) {
  auto p = Write("config", R"(
clusters:
- {name: c, cluster: {server: "https://h", certificate-authority: nope/ca.crt}}
- {name: noserver, cluster: {}}
- {name: both, cluster: {server: "https://h", insecure-skip-tls-verify: true, certificate-authority-data: Zm9v}}
- {name: ok, cluster: {server: "https://h"}}
users:
- {name: certonly, user: {client-certificate-data: Zm9v}}
- {name: badb64, user: {client-key-data: "!!!", client-certificate-data: Zm9v}}
contexts:
- {name: no-ca, context: {cluster: c}}
- {name: no-server, context: {cluster: noserver}}
- {name: both, context: {cluster: both}}
- {name: dangling-cluster, context: {cluster: gone}}
- {name: dangling-user, context: {cluster: ok, user: gone}}
- {name: cert-only, context: {cluster: ok, user: certonly}}
- {name: bad-b64, context: {cluster: ok, user: badb64}}
)");
  KubeconfigSource src;
  src.explicit_path = p.string();
  auto cfg = LoadKubeconfig(src);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  auto err = [&](const std::string& ctx) {
    auto r = SelectContexts(*cfg, {ctx});
    EXPECT_FALSE(r.ok()) << ctx;
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_THAT(err("no-ca"),
              HasSubstr("certificate-authority: cannot read " + (dir_ / "nope/ca.crt").string()));
  EXPECT_THAT(err("no-server"),
              HasSubstr("cluster \"noserver\" in kubeconfig " + p.string() + ": server: missing"));
  EXPECT_THAT(err("both"), HasSubstr("insecure-skip-tls-verify cannot both be set"));
  EXPECT_THAT(err("dangling-cluster"), HasSubstr("cluster \"gone\" not found"));
  EXPECT_THAT(err("dangling-user"), HasSubstr("user \"gone\" not found"));
  EXPECT_THAT(err("cert-only"), HasSubstr("client-certificate is set but client-key is not"));
  EXPECT_THAT(err("bad-b64"), HasSubstr("client-key-data: not valid base64"));
  auto none = SelectContexts(*cfg, {});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("no current-context is set"));
}

TEST_F(KubeconfigTest, EmptyFileIsAnEmptyConfigAndJsonWorks) {
  auto empty = Write("empty", "");
  auto json = Write(
      "json", R"({"current-context":"j","clusters":[{"name":"c","cluster":{"server":"https://j"}}],
    "contexts":[{"name":"j","context":{"cluster":"c"}}],"users":null})");
  KubeconfigSource src;
  src.kubeconfig = empty.string() + ":" + json.string();
  auto conns = LoadConnections(src, {});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  EXPECT_EQ(conns->front().server, "https://j");
  EXPECT_EQ(conns->front().user_name, "");
}

TEST_F(KubeconfigTest, YamlErrorsDoNotQuoteSecrets) {
  auto p = Write("config", "users:\n- name: u\n  user: {token: super-secret-token\n");
  auto r = ParseKubeconfig(std::string("users:\n- name: u\n  user: {token: super-secret-token\n"),
                           p.string());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, Not(HasSubstr("super-secret-token")));
}

TEST(CredentialsInClearText, NamesTheCredentialSentOverPlainHttpOnly) {
  ClusterConnection c;
  c.server = "HTTP://10.0.0.1:8080";
  EXPECT_EQ(CredentialsInClearText(c), "");  // no credential: nothing to leak
  c.client_cert_pem = "cert";
  EXPECT_EQ(CredentialsInClearText(c), "");  // a client certificate only works over TLS
  c.username = "admin";
  EXPECT_EQ(CredentialsInClearText(c), "basic");
  c.exec = ExecConfig{};
  EXPECT_EQ(CredentialsInClearText(c), "exec");
  c.token_file = "/var/run/token";
  EXPECT_EQ(CredentialsInClearText(c), "tokenFile");
  c.token = "t";
  EXPECT_EQ(CredentialsInClearText(c), "token");
  c.server = "https://10.0.0.1:6443";
  EXPECT_EQ(CredentialsInClearText(c), "");
  c.server = "httpx://host";
  EXPECT_EQ(CredentialsInClearText(c), "");
}

}  // namespace
}  // namespace gpuattr::kube
