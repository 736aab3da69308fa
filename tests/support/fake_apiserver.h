// A fake kube-apiserver for tests and demos: HTTPS on 127.0.0.1 with the test PKI, bearer-token
// and client-certificate authentication, discovery, LIST with pagination, WATCH with bookmarks,
// the pod and service proxies, fault injection, a request log and an in-process mutation API.
// Everything it serves comes from a Scenario (support/scenario.h). Only GET is allowed, as for
// gpuattr itself. Documentation: docs/fakeapi.md and fixtures/scenarios/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuattr/kube/transport.h"
#include "gpuattr/util/status.h"
#include "support/scenario.h"
#include "support/test_certs.h"

namespace gpuattr::testing {

struct FakeApiServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the OS picks one (see FakeApiServer::port())
  // Accepted bearer tokens and the user each one authenticates as.
  std::map<std::string, std::string> tokens = {{"gpuattr-test-token", "gpuattr-test"}};
  std::optional<TestPki> pki;  // generated when absent; the client cert is accepted (user = its CN)
  std::chrono::milliseconds bookmark_interval{1000};  // BOOKMARK cadence when a watch asks for them
  std::chrono::seconds default_watch_timeout{1800};   // when the watch gives no timeoutSeconds
  int threads = 64;                    // connections served at once (watches hold one)
  int keep_alive_timeout_seconds = 2;  // also bounds how long Stop() waits for idle clients
  // Added to every pod-proxy GET before it is answered (a slow apiserver or exporter); 0: none.
  std::chrono::milliseconds proxy_latency{0};
  // Request log entries kept (oldest dropped first): a long benchmark run stays bounded.
  size_t max_request_log = 1'000'000;
};

struct RequestRecord {
  std::string verb;      // list | watch | get | proxy | other (anything but GET)
  std::string method;    // GET, POST, ...
  std::string path;      // without the query
  std::string query;     // raw query string
  std::string resource;  // pods, nodes, services, resourceslices, resourceclaims, pods/proxy,
                         // services/proxy; "" for discovery and unknown paths
  std::string user;      // authenticated user, "" when none
  int status = 0;        // HTTP status sent
  std::string detail;    // e.g. "watch ERROR 410", "fault faults.yaml:3"
  bool fault = false;    // a fault rule touched this request
  std::chrono::system_clock::time_point time;  // arrival
  int remote_port = 0;  // the client's port: one per connection (keep-alive reuse shows as few)
};

struct KubeconfigOptions {
  std::string context = "fake";
  std::string token;  // "" = the first accepted token
  bool cert_user =
      true;  // also a user "<context>-cert" with the client certificate, and its context
  std::string namespace_;  // context namespace ("" = none)
};

class FakeApiServer {
 public:
  explicit FakeApiServer(Scenario scenario, FakeApiServerOptions options = {});
  ~FakeApiServer();  // Stop()s
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // Binds, starts serving and starts the watch script. Ignores SIGPIPE for the whole process.
  Status Start();
  // Ends open watch streams and delays promptly, stops the listener and joins all threads.
  void Stop();

  int port() const;
  std::string url() const;  // https://127.0.0.1:PORT
  const TestPki& pki() const;
  const Scenario& scenario() const;
  // Writes a kubeconfig for this server (CA data, token user, optional client-cert user), mode
  // 0600.
  Status WriteKubeconfig(const std::filesystem::path& path,
                         const KubeconfigOptions& opts = {}) const;
  // A transport to this server as gpuattr makes one: through a kubeconfig written to a
  // temporary file (removed again), read by kube::LoadConnections.
  Result<std::unique_ptr<kube::Transport>> MakeTransport() const;

  // ---- Request log (thread-safe).
  std::vector<RequestRecord> Requests() const;
  // Requests with this verb ("" = any) whose path starts with `path_prefix`, arrived at or after
  // `since` (politeness tests: LISTs and proxy GETs in the last minute).
  size_t CountRequests(const std::string& verb, const std::string& path_prefix = "",
                       std::chrono::system_clock::time_point since = {}) const;
  void ResetRequests();

  // ---- In-process mutations (thread-safe). Each bumps the resourceVersion and emits a watch
  // event. Adds or replaces an object (kind and metadata.name required; kind decides the resource).
  Status Upsert(nlohmann::json object);
  // Applies a JSON merge patch to an existing object (MODIFIED).
  Status Patch(const std::string& resource, const std::string& ns, const std::string& name,
               const nlohmann::json& merge_patch);
  Status Delete(const std::string& resource, const std::string& ns, const std::string& name);
  // The stored object with kind and apiVersion, or nullopt.
  std::optional<nlohmann::json> Get(const std::string& resource, const std::string& ns,
                                    const std::string& name) const;
  uint64_t resource_version() const;
  // Forgets the event history: watches and continue tokens older than now get 410.
  void Compact();
  // Ends every open watch stream cleanly, as a timeoutSeconds expiry does (clients re-watch).
  void EndWatches();

  // Replaces what the pod proxy serves for ns/pod:port (a sequence: served in turn, last repeated).
  void SetExporterBodies(const std::string& ns, const std::string& pod, int port,
                         std::vector<std::string> bodies);
  void RemoveExporter(const std::string& ns, const std::string& pod, int port);  // then: 503
  // The body the pod proxy would serve next for ns/pod:port (and counted as served), or nullopt
  // when it serves none: the direct listeners (support/direct_exporters.h) serve the same.
  std::optional<std::string> NextExporterBody(const std::string& ns, const std::string& pod,
                                              const std::string& port);
  // What the service proxy would answer for GET `path` (below the service root) with `query` on
  // ns/service:port (a number or a port name): status and body, or nullopt when the service has
  // no answers. The direct listeners serve the same at the Service's ClusterIP.
  std::optional<std::pair<int, std::string>> AnswerQuery(const std::string& ns,
                                                         const std::string& service,
                                                         const std::string& port,
                                                         const std::string& path,
                                                         const std::optional<std::string>& query);
  void SetPromAnswers(const std::string& ns, const std::string& service, const std::string& port,
                      std::vector<PromAnswer> answers);
  void AddFault(FaultRule rule);
  void ClearFaults();
  // Replaces the accepted bearer tokens (a rotated service-account token: the old one now 401s).
  void SetTokens(std::map<std::string, std::string> tokens);

  // Problems met while applying the watch script (e.g. a DELETED of an unknown object).
  std::vector<std::string> ScriptErrors() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuattr::testing
