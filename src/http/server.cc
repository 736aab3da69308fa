#include "gpuattr/http/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gpuattr/util/log.h"
#include "gpuattr/util/platform.h"
#include "server_impl.h"

namespace gpuattr::http {
namespace {

// Logins waiting for bcrypt (0.1-0.2 s each): more are answered 503 at once.
constexpr size_t kBcryptQueue = 64;

std::string Address(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool IsLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

Error CannotListen(const std::string& host, int port, const std::string& why) {
  return MakeError(ErrorCode::kUnavailable, "cannot listen on " + Address(host, port) + ": " + why);
}

// A non-blocking socket listening on the first address of host:port that binds.
Result<int> Listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return MakeError(ErrorCode::kUnavailable,
                     "cannot listen on " + Address(host, port) + ": " + ::gai_strerror(rc));
  std::string why;  // of the last address that failed
  int listen_fd = -1;
  for (addrinfo* a = found; a && listen_fd < 0; a = a->ai_next) {
    auto socket = platform::OpenSocket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (!socket.ok()) {
      why = socket.error().message;
      continue;
    }
    const int fd = *socket;
    // SO_REUSEADDR for a quick restart; never SO_REUSEPORT, which would let a second gpuattr
    // bind the same port and silently share the traffic.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      continue;
    }
    listen_fd = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd < 0)
    return CannotListen(host, port, why.empty() ? std::strerror(EADDRNOTAVAIL) : why);
  return listen_fd;
}

}  // namespace

std::optional<std::string> ExposureWarning(bool loopback, bool tls, bool authenticated) {
  if (loopback || (tls && authenticated)) return std::nullopt;
  std::string missing = !tls && !authenticated ? "without TLS and without authentication"
                        : !tls                 ? "without TLS (credentials and data in clear text)"
                                               : "without authentication";
  return "listening on a non-loopback address " + missing +
         ": anyone who can reach it reads the cluster's GPU inventory; set --web.config.file "
         "(tls_server_config, basic_auth_users)";
}

MetricsServer::Impl::~Impl() {
  if (listen_fd >= 0) ::close(listen_fd);
}

void MetricsServer::Impl::Wake() { waker.Wake(); }

void MetricsServer::Impl::Work() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return workers_stop || !jobs.empty(); });
      if (workers_stop) return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    if (std::optional<Response> r = Handle(job)) Finish(job.id, std::move(*r));
  }
}

void MetricsServer::Impl::Finish(uint64_t id, Response r) {
  {
    std::lock_guard<std::mutex> lock(mu);
    done.push_back({id, std::move(r)});
  }
  Wake();
}

std::optional<Response> MetricsServer::Impl::Handle(Job& job) {
  const bool head_only = job.head.method == "HEAD";
  if (!auth) return Build(job);
  const std::string* header = job.head.Header("authorization");
  const AuthVerdict verdict = header ? auth->CheckRemembered(*header) : AuthVerdict::kRejected;
  if (verdict == AuthVerdict::kAccepted) return Build(job);
  if (verdict == AuthVerdict::kRejected) {
    refusals->Add(Refusal::kUnauthorized);
    return Unauthorized(head_only, job.close);
  }
  // bcrypt takes 0.1-0.2 s: one thread does it, so that wrong passwords never hold every worker
  // while remembered ones wait behind them (docs/security.md#serving).
  std::lock_guard<std::mutex> lock(mu);
  if (bcrypt_jobs.size() >= kBcryptQueue) {
    refusals->Add(Refusal::kLoginQueueFull);
    return Refuse({503, "too many logins are being checked; retry shortly"}, head_only);
  }
  bcrypt_jobs.push_back(std::move(job));
  bcrypt_cv.notify_one();
  return std::nullopt;
}

void MetricsServer::Impl::CheckPasswords() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu);
      bcrypt_cv.wait(lock, [&] { return workers_stop || !bcrypt_jobs.empty(); });
      if (workers_stop) return;
      job = std::move(bcrypt_jobs.front());
      bcrypt_jobs.pop_front();
    }
    const std::string* header = job.head.Header("authorization");
    if (header && auth->Check(*header)) {
      Finish(job.id, Build(job));
      continue;
    }
    refusals->Add(Refusal::kUnauthorized);
    Finish(job.id, Unauthorized(job.head.method == "HEAD", job.close));
  }
}

Response MetricsServer::Impl::Build(const Job& job) {
  try {
    return Serve(job.head, routes, job.close);
  } catch (const std::exception& e) {  // out of memory while rendering a page
    log::Error("cannot answer a request", {{"path", job.head.path}, {"err", e.what()}});
    return Refuse({500, "the response could not be built"}, job.head.method == "HEAD");
  }
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsServer::~MetricsServer() { Stop(); }
int MetricsServer::port() const { return impl_->port; }

void MetricsServer::Stop() {
  if (!impl_ || !impl_->loop.joinable()) return;
  impl_->stopping.store(true);
  impl_->Wake();
  impl_->loop.join();
  // No more connections: a client now gets "connection refused" rather than a silent backlog.
  ::close(impl_->listen_fd);
  impl_->listen_fd = -1;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->workers_stop = true;
  }
  impl_->cv.notify_all();
  impl_->bcrypt_cv.notify_all();
  for (std::thread& w : impl_->workers) w.join();
  impl_->workers.clear();
  if (impl_->bcrypt.joinable()) impl_->bcrypt.join();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const ServerOptions& opt, std::shared_ptr<const metrics::SnapshotStore> store) {
  auto impl = std::make_unique<Impl>();
  impl->opt = opt;
  impl->refusals = opt.refusals ? opt.refusals : std::make_shared<RefusalCounters>();
  impl->store = std::move(store);
  if (opt.tls) {
    auto ctx = MakeServerTlsContext(*opt.tls);
    if (!ctx.ok()) return ctx.error();
    impl->tls = std::move(*ctx);
  }
  if (!opt.users.empty()) {
    auto auth = BasicAuth::Make(opt.users);
    if (!auth.ok()) return auth.error();
    impl->auth = std::move(*auth);
  }
  impl->routes.store = impl->store.get();
  impl->routes.clock = opt.clock ? opt.clock : &SystemClock();
  impl->routes.pages = &impl->pages;
  impl->routes.view.refresh_seconds = opt.page_refresh_seconds;
  impl->routes.view.metrics_path = opt.metrics_path;

  auto fd = Listen(opt.host, opt.port);
  if (!fd.ok()) return fd.error();
  impl->listen_fd = *fd;
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0)
    return CannotListen(opt.host, opt.port, std::strerror(errno));
  impl->port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                        : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  impl->loopback = IsLoopback(bound);
  auto waker = platform::Waker::Open();
  if (!waker.ok()) return waker.error();
  impl->waker = std::move(*waker);

  const bool verified_clients =
      opt.tls && opt.tls->client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (auto warning = ExposureWarning(impl->loopback, opt.tls.has_value(),
                                     !opt.users.empty() || verified_clients))
    log::Warn(*warning, {{"address", Address(opt.host, impl->port)}});

  Impl* raw = impl.get();
  for (int i = 0; i < std::max(1, opt.limits.workers); ++i)
    raw->workers.emplace_back([raw] { raw->Work(); });
  if (raw->auth) raw->bcrypt = std::thread([raw] { raw->CheckPasswords(); });
  raw->loop = std::thread([raw] { raw->Loop(); });
  log::Info("serving", {{"address", Address(opt.host, impl->port)},
                        {"tls", opt.tls ? "true" : "false"},
                        {"basic_auth", opt.users.empty() ? "false" : "true"},
                        {"host_check", impl->loopback ? "loopback names only" : "off"},
                        {"telemetry_path", opt.metrics_path}});
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

}  // namespace gpuattr::http
