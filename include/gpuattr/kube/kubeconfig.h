// kubeconfig loading the way kubectl does it: `--kubeconfig PATH`, else `KUBECONFIG` (a
// `:`-separated list, merged: the first file that defines a cluster/user/context name wins, the
// first `current-context` wins, missing files are skipped), else `~/.kube/config`. Relative paths
// inside a file resolve against that file's directory. Each selected context becomes one
// ClusterConnection holding everything needed to talk to its apiserver.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

// users[].user.exec: a client-go credential plugin.
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // absolute when it held a '/' (resolved against the kubeconfig dir)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to our environment
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never | IfAvailable | Always ("" = IfAvailable)
  std::string install_hint;
  // clusters[].cluster.extensions["client.authentication.k8s.io/exec"] as JSON ("" when absent);
  // passed to the plugin as spec.cluster.config when provideClusterInfo is set.
  std::string cluster_config_json;
};

struct ClusterConnection {
  std::string context_name;  // the default `cluster` label value
  std::string cluster_name;
  std::string user_name;
  std::string kubeconfig_path;  // file that defined the context (for messages)
  std::string user_source;      // file that defined the user (exec/tokenFile messages)

  std::string server;   // https://host:port[/prefix]
  std::string ca_pem;   // empty: system CAs
  std::string ca_file;  // where ca_pem came from, for messages ("" when certificate-authority-data)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;

  std::string client_cert_pem;  // secret material from here on: never log it
  std::string client_key_pem;
  std::string token;
  std::string token_file;  // absolute path; re-read by the credential provider
  std::string username;    // basic auth (legacy)
  std::string password;
  std::optional<ExecConfig> exec;

  std::string default_namespace = "default";
  // In-cluster mode (in_cluster.h): the service account's token file and CA, no kubeconfig.
  bool in_cluster = false;
};

// Where kubeconfig files come from. FromEnvironment() reads KUBECONFIG and HOME.
struct KubeconfigSource {
  std::string explicit_path;              // --kubeconfig; overrides everything
  std::optional<std::string> kubeconfig;  // value of $KUBECONFIG (nullopt: unset)
  std::string home;                       // for ~/.kube/config
  static KubeconfigSource FromEnvironment(std::string explicit_path = "");
};

// The merged view of one or more kubeconfig files; entries keep the file that defined them.
struct Kubeconfig {
  struct Cluster {
    std::string source;  // file path
    std::string server, certificate_authority, certificate_authority_data, tls_server_name,
        proxy_url, exec_extension_json;
    bool insecure_skip_tls_verify = false;
  };
  struct User {
    std::string source;
    std::string client_certificate, client_certificate_data, client_key, client_key_data, token,
        token_file, username, password, auth_provider;
    std::optional<ExecConfig> exec;
  };
  struct Context {
    std::string source;
    std::string cluster, user, namespace_;
  };
  std::vector<std::string> files;  // files actually read, in order
  std::map<std::string, Cluster> clusters;
  std::map<std::string, User> users;
  std::map<std::string, Context> contexts;
  std::string current_context;
};

// The files a source names, in precedence order (missing KUBECONFIG entries are still listed).
std::vector<std::string> KubeconfigFiles(const KubeconfigSource& source);

// Parses one kubeconfig document (YAML or JSON) read from `path`; relative paths resolve against
// the directory of `path`. Errors name the file and the key.
Result<Kubeconfig> ParseKubeconfig(const std::string& text, const std::string& path);

// Merges `later` into `into` with kubectl's precedence: existing names and a set current-context
// are kept.
void MergeKubeconfig(Kubeconfig& into, const Kubeconfig& later);

// Reads and merges the files of `source`.
Result<Kubeconfig> LoadKubeconfig(const KubeconfigSource& source);

// One connection per named context (the current context when `contexts` is empty). Reads the CA,
// client certificate and key files of the selected contexts only.
Result<std::vector<ClusterConnection>> SelectContexts(const Kubeconfig& config,
                                                      const std::vector<std::string>& contexts);

// How a connection's credentials would cross the network in clear text: the kind ("token",
// "tokenFile", "exec", "basic") when the server is plain http:// and the user sends one; ""
// otherwise. Client certificates need TLS, so they never do. docs/security.md#plain-http-apiservers
std::string CredentialsInClearText(const ClusterConnection& c);

// LoadKubeconfig + SelectContexts.
Result<std::vector<ClusterConnection>> LoadConnections(const KubeconfigSource& source,
                                                       const std::vector<std::string>& contexts);

}  // namespace gpuattr::kube
