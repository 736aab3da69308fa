// Exporters as pods serve them inside a cluster, for direct scraping
// (docs/deploy.md#direct-scraping): every pod of a scenario gets its own loopback address
// (127.N.B.C; N is picked per process so that tests running side by side do not collide), written
// into its status.podIP, and every exporter body of the scenario is served by a listener of its own
// on that address and the exporter's port. The bodies come from the fake apiserver
// (FakeApiServer::NextExporterBody): the same sequence its pod proxy serves, so a direct run and a
// proxy run read the same bytes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/util/status.h"
#include "support/fake_apiserver.h"
#include "support/scenario.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace gpuattr::testing {

struct DirectExportersOptions {
  size_t threads_per_exporter = 2;  // a scale run serves a thousand exporters: 1 there
};

class DirectExporters {
 public:
  // Gives every pod of `scenario` its address (status.podIP): call it before the FakeApiServer is
  // made from the scenario.
  explicit DirectExporters(Scenario& scenario, DirectExportersOptions options = {});
  ~DirectExporters();  // Stop()s
  DirectExporters(const DirectExporters&) = delete;
  DirectExporters& operator=(const DirectExporters&) = delete;

  // Binds one listener per exporter body of the scenario, serving `server`'s bodies on GET
  // /metrics (other paths 404; an exporter the server no longer serves answers 503).
  Status Start(FakeApiServer& server);
  void Stop();

  // The address given to ns/pod ("" when none).
  std::string IpOf(const std::string& ns, const std::string& pod) const;
  // GETs the listeners answered with a body.
  size_t served() const { return served_.load(); }
  size_t listeners() const { return servers_.size(); }

 private:
  struct Target {
    std::string ns, pod, port;  // port as in the exporter key: a number (a Service's: or a name)
    std::string ip;
    int port_number = 0;
    bool service = false;  // a query API at a ClusterIP
  };
  Status Listen(FakeApiServer& server, const Target& t);
  std::map<std::string, std::string> ips_;  // "ns/name" -> IP
  std::vector<Target> targets_;
  DirectExportersOptions options_;
  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> served_{0};
};

}  // namespace gpuattr::testing
