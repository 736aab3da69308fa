#include "gpuattr/publish/server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "gpuattr/publish/families.h"
#include "gpuattr/publish/outputs.h"
#include "gpuattr/publish/status_page.h"
#include "gpuattr/util/log.h"

namespace gpuattr::publish {
namespace {

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string Base64Decode(std::string_view in, bool& ok) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  ok = true;
  for (char c : in) {
    int v = value(c);
    if (v < 0) {
      ok = false;
      return {};
    }
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

std::array<unsigned char, SHA256_DIGEST_LENGTH> Digest(std::string_view s) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

std::string Address(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

bool CheckBasicAuth(std::string_view header, const std::vector<Credential>& users) {
  constexpr std::string_view kPrefix = "Basic ";
  if (header.size() <= kPrefix.size()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i)  // the scheme is case-insensitive
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kPrefix[i])))
      return false;
  bool ok = false;
  std::string given = Base64Decode(header.substr(kPrefix.size()), ok);
  if (!ok) return false;
  // Digests make every comparison the same length; no early exit over the user list.
  auto given_digest = Digest(given);
  bool match = false;
  for (const Credential& u : users) {
    auto want = Digest(u.username + ":" + u.password);
    match |= CRYPTO_memcmp(given_digest.data(), want.data(), want.size()) == 0;
  }
  return match;
}

struct MetricsServer::Impl {
  std::unique_ptr<httplib::Server> server;
  std::shared_ptr<const SnapshotStore> store;
  std::thread thread;
  int port = 0;
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsServer::~MetricsServer() { Stop(); }
int MetricsServer::port() const { return impl_->port; }

void MetricsServer::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server->stop();
  impl_->thread.join();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const ServerOptions& opt, std::shared_ptr<const SnapshotStore> store) {
  auto impl = std::make_unique<Impl>();
  impl->store = std::move(store);
  const bool tls = !opt.tls_cert_file.empty() || !opt.tls_key_file.empty();
  if (tls) {
    auto s =
        std::make_unique<httplib::SSLServer>(opt.tls_cert_file.c_str(), opt.tls_key_file.c_str());
    if (!s->is_valid())
      return MakeError(ErrorCode::kInvalidArgument,
                       "web.tls: cannot use cert_file \"" + opt.tls_cert_file +
                           "\" with key_file \"" + opt.tls_key_file +
                           "\" (unreadable, not PEM, or the key does not belong to the cert)");
    impl->server = std::move(s);
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  httplib::Server& srv = *impl->server;
  const SnapshotStore* st = impl->store.get();

  if (!opt.users.empty()) {
    srv.set_pre_routing_handler(
        [users = opt.users](const httplib::Request& req, httplib::Response& res) {
          if (CheckBasicAuth(req.get_header_value("Authorization"), users))
            return httplib::Server::HandlerResponse::Unhandled;
          res.status = 401;
          res.set_header("WWW-Authenticate", "Basic realm=\"gpuattr\", charset=\"UTF-8\"");
          res.set_content("401 unauthorized\n", "text/plain; charset=utf-8");
          return httplib::Server::HandlerResponse::Handled;
        });
  }
  srv.Get("/metrics", [st](const httplib::Request&, httplib::Response& res) {
    // The exposition rendered when the snapshot was published. httplib copies it into the
    // response and gzips text/* bodies itself when the request's Accept-Encoding allows it.
    res.set_content(st->GetExposition()->text.Join(), kMetricsContentType);
  });
  srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
  srv.Get("/readyz", [st](const httplib::Request&, httplib::Response& res) {
    if (st->Get()->complete) {
      res.set_content("ready\n", "text/plain; charset=utf-8");
    } else {
      res.status = 503;
      res.set_content("not ready: the first cycle has not finished\n", "text/plain; charset=utf-8");
    }
  });
  Clock* clock = opt.clock ? opt.clock : &SystemClock();
  ViewOptions view;
  view.refresh_seconds = opt.page_refresh_seconds;
  srv.Get("/", [st, clock, view](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderStatusPage(*st->Get(), UnixSeconds(clock->WallNow()), view),
                    "text/html; charset=utf-8");
  });
  srv.Get("/snapshot.json", [st, clock, view](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        RenderSnapshotJson(BuildStatusView(*st->Get(), UnixSeconds(clock->WallNow()), view)),
        "application/json");
  });
  srv.Get("/snapshot.md", [st, clock, view](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        RenderMarkdown(BuildStatusView(*st->Get(), UnixSeconds(clock->WallNow()), view)),
        "text/markdown; charset=utf-8");
  });
  srv.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty() && res.status == 404)
      res.set_content("404 page not found\n", "text/plain; charset=utf-8");
  });

  // httplib's default sets SO_REUSEPORT, which lets a second gpuattr bind the same port and
  // silently share the traffic. SO_REUSEADDR alone still allows a quick restart.
  srv.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  errno = 0;
  if (opt.port == 0) {
    impl->port = srv.bind_to_any_port(opt.host);
  } else {
    impl->port = srv.bind_to_port(opt.host, opt.port) ? opt.port : -1;
  }
  if (impl->port < 0) {
    int err = errno;
    std::string why =
        err ? std::strerror(err) : "address in use, not an address of this host, or not permitted";
    return MakeError(ErrorCode::kUnavailable,
                     "cannot listen on " + Address(opt.host, opt.port) + ": " + why);
  }
  httplib::Server* raw = impl->server.get();
  impl->thread = std::thread([raw] { raw->listen_after_bind(); });
  // Wait until the accept loop runs, so that Stop() right after Start() cannot miss it.
  for (int i = 0; i < 500 && !raw->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  log::Info("serving", {{"address", Address(opt.host, impl->port)},
                        {"tls", tls ? "true" : "false"},
                        {"basic_auth", opt.users.empty() ? "false" : "true"}});
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

}  // namespace gpuattr::publish
