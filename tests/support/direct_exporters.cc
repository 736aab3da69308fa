#include "support/direct_exporters.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <thread>

namespace gpuattr::testing {
namespace {

// 127.net.(i / 250).(i % 250 + 2): up to 62,500 pods per process.
std::string Address(int net, size_t i) {
  return "127." + std::to_string(net) + "." + std::to_string(i / 250) + "." +
         std::to_string(i % 250 + 2);
}

// Whether ip:port can be bound now (another process's listener holds it otherwise).
bool Free(const std::string& ip, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

DirectExporters::DirectExporters(Scenario& scenario, DirectExportersOptions options)
    : options_(options) {
  for (const auto& [key, bodies] : scenario.exporter_bodies) {
    const size_t slash = key.find('/'), colon = key.rfind(':');
    if (slash == std::string::npos || colon == std::string::npos || colon < slash) continue;
    targets_.push_back({key.substr(0, slash), key.substr(slash + 1, colon - slash - 1),
                        key.substr(colon + 1), ""});
  }
  std::vector<nlohmann::json*> pods;
  for (nlohmann::json& o : scenario.objects)
    if (o.value("kind", "") == "Pod") pods.push_back(&o);
  // A network of 127/8 of this process's own, unless a side-by-side test already listens there.
  int net = 16 + static_cast<int>(::getpid() % 200);
  for (int tries = 0; tries < 40 && !targets_.empty(); ++tries, net = 16 + (net - 15) % 200) {
    if (Free(Address(net, 0), std::atoi(targets_.front().port.c_str()))) break;
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    nlohmann::json& pod = *pods[i];
    const std::string ip = Address(net, i);
    pod["status"]["podIP"] = ip;
    pod["status"]["podIPs"] = nlohmann::json::array({{{"ip", ip}}});
    const auto& meta = pod["metadata"];
    ips_[meta.value("namespace", "") + "/" + meta.value("name", "")] = ip;
  }
  for (Target& t : targets_) {
    t.ip = IpOf(t.ns, t.pod);
    t.port_number = std::atoi(t.port.c_str());
  }
  // Services: 127.net.255.(j + 2), unless headless; query APIs listen on their service port.
  std::map<std::string, nlohmann::json*> services;
  size_t j = 0;
  for (nlohmann::json& o : scenario.objects) {
    if (o.value("kind", "") != "Service") continue;
    nlohmann::json& spec = o["spec"];
    if (spec.value("clusterIP", "") == "None") continue;
    const std::string ip = "127." + std::to_string(net) + ".255." + std::to_string(j++ % 250 + 2);
    spec["clusterIP"] = ip;
    const auto& meta = o["metadata"];
    const std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
    ips_["svc:" + key] = ip;
    services[key] = &o;
  }
  for (const auto& [key, answers] : scenario.prometheus) {
    const size_t slash = key.find('/'), colon = key.rfind(':');
    if (slash == std::string::npos || colon == std::string::npos || colon < slash) continue;
    Target t{key.substr(0, slash),
             key.substr(slash + 1, colon - slash - 1),
             key.substr(colon + 1),
             "",
             0,
             true};
    auto svc = services.find(t.ns + "/" + t.pod);
    if (svc == services.end()) continue;  // headless or absent: not read directly
    t.ip = ips_["svc:" + svc->first];
    for (const auto& p : (*svc->second)["spec"].value("ports", nlohmann::json::array()))
      if (p.value("name", "") == t.port || (p.contains("port") && p["port"].dump() == t.port))
        t.port_number = p.value("port", 0);
    if (t.port_number > 0) targets_.push_back(std::move(t));
  }
}

DirectExporters::~DirectExporters() { Stop(); }

std::string DirectExporters::IpOf(const std::string& ns, const std::string& pod) const {
  auto it = ips_.find(ns + "/" + pod);
  return it == ips_.end() ? "" : it->second;
}

Status DirectExporters::Start(FakeApiServer& server) {
  for (const Target& t : targets_)
    if (!t.ip.empty())  // else a body for a pod the scenario does not have
      GPUATTR_RETURN_IF_ERROR(Listen(server, t));
  return Status::Ok();
}

Status DirectExporters::Listen(FakeApiServer& server, const Target& t) {
  {
    auto s = std::make_unique<httplib::Server>();
    const size_t threads = options_.threads_per_exporter;
    s->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    s->set_keep_alive_timeout(2);  // also bounds how long Stop() waits for gpuattr's connection
    s->Get(".*", [this, &server, t](const httplib::Request& req, httplib::Response& res) {
      if (t.service) {
        std::optional<std::string> query;
        if (req.has_param("query")) query = req.get_param_value("query");
        auto reply = server.AnswerQuery(t.ns, t.pod, t.port, req.path, query);
        if (!reply) reply = {503, "no query API\n"};
        ++served_;
        res.status = reply->first;
        res.set_content(std::move(reply->second),
                        reply->first == 404 ? "text/plain; charset=utf-8" : "application/json");
        return;
      }
      if (req.path != "/metrics") {
        res.status = 404;
        res.set_content("404 page not found\n", "text/plain; charset=utf-8");
        return;
      }
      std::optional<std::string> body = server.NextExporterBody(t.ns, t.pod, t.port);
      if (!body) {
        res.status = 503;
        res.set_content("exporter stopped\n", "text/plain; charset=utf-8");
        return;
      }
      ++served_;
      res.set_content(std::move(*body), "text/plain; version=0.0.4; charset=utf-8");
    });
    if (!s->bind_to_port(t.ip, t.port_number))
      return MakeError(ErrorCode::kUnavailable, "direct exporter " + t.ns + "/" + t.pod +
                                                    ": cannot listen on " + t.ip + ":" + t.port);
    httplib::Server* raw = s.get();
    threads_.emplace_back([raw] { raw->listen_after_bind(); });
    for (int i = 0; i < 500 && !raw->is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    servers_.push_back(std::move(s));
  }
  return Status::Ok();
}

void DirectExporters::Stop() {
  for (auto& s : servers_) s->stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  servers_.clear();
}

}  // namespace gpuattr::testing
