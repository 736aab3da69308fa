#include "gpuattr/kube/http_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "gpuattr/kube/credentials.h"
#include "gpuattr/kube/tls.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/platform.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::kube {
namespace {

void SetTimeouts(httplib::ClientImpl& c, std::chrono::milliseconds t) {
  auto sec = static_cast<time_t>(t.count() / 1000);
  auto usec = static_cast<time_t>((t.count() % 1000) * 1000);
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
}

// httplib reports every failed connect as Error::Connection; find out why with one more attempt
// (only on the failure path) so the message can say "connection refused" or "cannot resolve".
std::string DiagnoseConnect(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return "cannot resolve host " + Quote(host) + ": " + gai_strerror(rc);
  std::string why = "connection failed";
  if (res) {
    auto socket = platform::OpenSocket(res->ai_family, res->ai_socktype, 0);
    if (socket.ok()) {
      const int fd = *socket;
      int err = 0;
      if (::connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
          pollfd p{fd, POLLOUT, 0};
          if (::poll(&p, 1, 2000) == 1) {
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          } else {
            err = ETIMEDOUT;
          }
        }
      }
      ::close(fd);
      if (err == ECONNREFUSED) {
        why = "connection refused";
      } else if (err != 0) {
        why = std::strerror(err);
        if (!why.empty())
          why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
      }
    }
  }
  ::freeaddrinfo(res);
  return why;
}

// The request's headers, a User-Agent unless it names one, and the credentials' Authorization.
httplib::Headers RequestHeaders(const Request& req, const std::string& user_agent,
                                const std::string& authorization) {
  httplib::Headers headers;
  bool has_ua = false;
  for (const auto& [k, v] : req.headers) {
    if (ToLower(k) == "user-agent") has_ua = true;
    headers.emplace(k, v);
  }
  if (!has_ua) headers.emplace("User-Agent", user_agent);
  if (!authorization.empty()) headers.emplace("Authorization", authorization);
  return headers;
}

// Receives one response through httplib's callbacks: the status and headers, then the body, kept
// within max_body_bytes (and, without a sink, the deadline), or, once a stream's 2xx arrived,
// handed to the sink. A callback that says no ends the transfer (httplib's Error::Canceled); the
// flags say why.
class ResponseReader {
 public:
  ResponseReader(const Request& req, const ChunkSink* sink,
                 std::chrono::steady_clock::time_point deadline)
      : req_(req), sink_(sink), deadline_(deadline) {}

  bool OnResponse(const httplib::Response& r) {
    TakeStatusAndHeaders(r);
    auto cl = out_.headers.find("content-length");
    if (cl != out_.headers.end()) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(cl->second.c_str(), &end, 10);
      if (end != cl->second.c_str() && n > req_.max_body_bytes) {
        over_cap_ = true;
        return false;
      }
      // Within the cap: one allocation instead of a doubling string (its pages are touched
      // only as the body arrives).
      if (end != cl->second.c_str() && !sink_) out_.body.reserve(static_cast<size_t>(n));
    }
    // A stream is open once its 2xx status arrived: tell the sink (an empty chunk).
    if (ToSink() && !(*sink_)(std::string_view())) {
      sink_stopped_ = true;
      return false;
    }
    return true;
  }

  bool OnData(const char* data, size_t len) {
    if (ToSink()) {
      if (!(*sink_)(std::string_view(data, len))) {
        sink_stopped_ = true;
        return false;
      }
      return true;
    }
    if (out_.body.size() + len > req_.max_body_bytes) {
      over_cap_ = true;
      return false;
    }
    if (!sink_ && std::chrono::steady_clock::now() > deadline_) {
      past_deadline_ = true;
      return false;
    }
    out_.body.append(data, len);
    return true;
  }

  void TakeStatusAndHeaders(const httplib::Response& r) {
    out_.status = r.status;
    for (const auto& [k, v] : r.headers) out_.headers[ToLower(k)] = v;
  }

  int status() const { return out_.status; }
  bool over_cap() const { return over_cap_; }
  bool past_deadline() const { return past_deadline_; }
  bool sink_stopped() const { return sink_stopped_; }
  Response Take() { return std::move(out_); }

 private:
  bool ToSink() const { return sink_ && out_.status >= 200 && out_.status < 300; }

  const Request& req_;
  const ChunkSink* sink_;
  std::chrono::steady_clock::time_point deadline_;
  Response out_;
  bool over_cap_ = false, past_deadline_ = false, sink_stopped_ = false;
};

// A pooled keep-alive connection the server closed while it sat idle fails before any response:
// worth one retry on a new connection (GET is idempotent).
bool ClosedWhileIdle(bool reused, int status, std::chrono::milliseconds elapsed,
                     std::chrono::milliseconds timeout, httplib::Error e) {
  return reused && status == 0 && elapsed < timeout &&
         (e == httplib::Error::Read || e == httplib::Error::Write ||
          e == httplib::Error::SSLConnection || e == httplib::Error::Connection ||
          e == httplib::Error::Unknown);
}

std::mutex g_warned_mu;
std::set<std::string> g_warned_insecure;

class HttpTransport final : public Transport {
 public:
  HttpTransport(ClusterConnection conn, TransportOptions options)
      : conn_(std::move(conn)), options_(std::move(options)) {}

  Status Init();
  Result<Response> Get(const Request& req) override { return Do(req, nullptr); }
  Result<Response> Stream(const Request& req, const ChunkSink& sink) override {
    return Do(req, &sink);
  }
  std::string ClusterName() const override { return conn_.context_name; }
  void Cancel() override;

 private:
  struct Pooled {
    // The client's current socket (set by httplib's socket-options hook when it opens one):
    // Cancel() shuts it down, which ends a connect, a TLS handshake or a read at once, without
    // the client's own lock (held for the whole connect). Declared before `client`, which uses it.
    std::atomic<int> socket{-1};
    std::unique_ptr<httplib::ClientImpl> client;
    std::unique_ptr<VerifyOutcome> verify = std::make_unique<VerifyOutcome>();
    uint64_t generation = 0;  // exec certificate generation it was built with
  };

  Error Fail(ErrorCode code, const std::string& what) const {
    return MakeError(code, (options_.subject.empty() ? "cluster " + Quote(conn_.context_name)
                                                     : options_.subject) +
                               ": " + what);
  }
  Result<std::unique_ptr<Pooled>> Acquire(const AuthMaterial& auth, bool& reused);
  Result<std::unique_ptr<Pooled>> NewClient(const AuthMaterial& auth);
  void Release(std::unique_ptr<Pooled> p);
  Result<Response> Do(const Request& req, const ChunkSink* sink);
  Result<Response> Once(const Request& req, const ChunkSink* sink, const AuthMaterial& auth,
                        bool fresh_connection);
  bool BeginInFlight(Pooled* p);  // false once cancelled
  bool EndInFlight(Pooled* p);    // whether Cancel() came meanwhile
  Error Cancelled(const Request& req) const;
  Error Describe(httplib::Error err, const Pooled& p, std::chrono::milliseconds elapsed,
                 std::chrono::milliseconds timeout) const;

  ClusterConnection conn_;
  TransportOptions options_;
  ParsedUrl url_;
  std::string base_path_;
  std::string display_url_;  // scheme://host:port
  std::string verify_name_;  // host name or IP checked against the server certificate
  std::string ca_description_;
  std::shared_ptr<const CaBundle> ca_;
  std::shared_ptr<const ClientIdentity> static_identity_;
  ParsedUrl proxy_;
  bool use_proxy_ = false;
  std::string proxy_source_;  // "proxy-url", or the environment variable it came from
  std::unique_ptr<Credentials> credentials_;

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Pooled>> idle_;
  std::set<Pooled*> in_flight_;  // under pool_mu_
  // Set once by Cancel(). Atomic: the socket hook reads it without the lock, so that a socket
  // opened just after Cancel() looked at in_flight_ is shut down too.
  std::atomic<bool> cancelled_{false};
  uint64_t exec_identity_generation_ = 0;
  std::shared_ptr<const ClientIdentity> exec_identity_;
};

Status HttpTransport::Init() {
  auto url = ParseUrl(conn_.server, "cluster " + Quote(conn_.cluster_name) + " in kubeconfig " +
                                        conn_.kubeconfig_path + ": server " + Quote(conn_.server));
  if (!url.ok()) return Fail(ErrorCode::kInvalidArgument, url.error().message);
  url_ = *url;
  if (url_.scheme != "https" && url_.scheme != "http") {
    return Fail(ErrorCode::kUnsupported,
                "server " + Quote(conn_.server) + ": scheme must be https or http");
  }
  if (!url_.userinfo.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "the server URL must not hold credentials (use the kubeconfig user)");
  }
  if (url_.port == 0) url_.port = url_.scheme == "https" ? 443 : 80;
  base_path_ = url_.path;
  while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
  display_url_ = Redact(url_);
  verify_name_ = conn_.tls_server_name.empty() ? url_.host : conn_.tls_server_name;

  if (!conn_.ca_pem.empty()) {
    ca_description_ = conn_.ca_file.empty() ? "the CA in certificate-authority-data of cluster " +
                                                  Quote(conn_.cluster_name)
                                            : "the CA in " + conn_.ca_file;
    auto ca = CaBundle::FromPem(conn_.ca_pem, ca_description_);
    if (!ca.ok()) return Fail(ErrorCode::kInvalidArgument, ca.error().message);
    ca_ = *ca;
  } else {
    ca_description_ = "a system CA";
  }
  if (!conn_.client_cert_pem.empty()) {
    auto id = ClientIdentity::FromPem(
        conn_.client_cert_pem, conn_.client_key_pem,
        "user " + Quote(conn_.user_name) + " in kubeconfig " + conn_.user_source);
    if (!id.ok()) return Fail(ErrorCode::kInvalidArgument, id.error().message);
    static_identity_ = *id;
  }
  // proxy-url wins; without it, the proxy environment as client-go reads it (url.h).
  std::string proxy_url = conn_.proxy_url;
  std::string proxy_what = "cluster " + Quote(conn_.cluster_name) + " in kubeconfig " +
                           conn_.kubeconfig_path + ": proxy-url";
  proxy_source_ = "proxy-url";
  if (proxy_url.empty()) {
    ServerUrl server{url_.scheme, url_.host, url_.port, base_path_};
    auto getenv = options_.getenv ? options_.getenv
                                  : std::function<const char*(const char*)>(
                                        [](const char* name) { return std::getenv(name); });
    EnvProxy env = ProxyFromEnvironment(server, getenv);
    proxy_url = env.url;
    proxy_what = "environment variable " + env.source;
    proxy_source_ = env.source;
  }
  if (!proxy_url.empty()) {
    auto proxy = ParseUrl(proxy_url, proxy_what);
    if (!proxy.ok()) return Fail(ErrorCode::kInvalidArgument, proxy.error().message);
    if (proxy->scheme != "http") {
      return Fail(ErrorCode::kUnsupported, proxy_what + " " + Quote(Redact(*proxy)) +
                                               ": only http:// proxies are supported (" +
                                               proxy->scheme + ":// is not)");
    }
    if (proxy->port == 0) proxy->port = 80;
    proxy_ = *proxy;
    use_proxy_ = true;
    log::Debug(
        "using a proxy",
        {{"cluster", conn_.context_name}, {"proxy", Redact(proxy_)}, {"from", proxy_source_}});
  }
  if (url_.scheme == "https" && conn_.insecure_skip_tls_verify) {
    std::lock_guard<std::mutex> lock(g_warned_mu);
    if (g_warned_insecure.insert(conn_.context_name).second) {
      log::Warn(
          "TLS VERIFICATION IS DISABLED (insecure-skip-tls-verify): the apiserver's identity is "
          "not checked and credentials can be stolen by anyone on the network path",
          {{"cluster", conn_.context_name}, {"server", display_url_}});
    }
  }
  Credentials::Options copt;
  copt.exec_timeout = options_.exec_timeout;
  credentials_ = std::make_unique<Credentials>(conn_, copt);
  return Status::Ok();
}

Result<std::unique_ptr<HttpTransport::Pooled>> HttpTransport::NewClient(const AuthMaterial& auth) {
  auto p = std::make_unique<Pooled>();
  p->generation = auth.exec_cert_generation;
  if (url_.scheme == "http") {
    p->client = std::make_unique<httplib::ClientImpl>(url_.host, url_.port);
  } else {
    std::shared_ptr<const ClientIdentity> identity = static_identity_;
    if (!auth.exec_cert_pem.empty()) {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!exec_identity_ || exec_identity_generation_ != auth.exec_cert_generation) {
        auto id = ClientIdentity::FromPem(
            auth.exec_cert_pem, auth.exec_key_pem,
            "exec plugin " + Quote(conn_.exec->command) + " (user " + Quote(conn_.user_name) + ")");
        if (!id.ok()) return Fail(ErrorCode::kUnauthenticated, id.error().message);
        exec_identity_ = *id;
        exec_identity_generation_ = auth.exec_cert_generation;
      }
      identity = exec_identity_;
    }
    std::unique_ptr<httplib::SSLClient> ssl;
    if (identity) {
      ssl = std::make_unique<httplib::SSLClient>(url_.host, url_.port, identity->cert(),
                                                 identity->key());
      for (const auto& extra : identity->chain())
        SSL_CTX_add1_chain_cert(ssl->ssl_context(), extra.get());
    } else {
      ssl = std::make_unique<httplib::SSLClient>(url_.host, url_.port);
    }
    if (!ssl->is_valid() || !ssl->ssl_context()) {
      return Fail(ErrorCode::kInternal, "cannot create a TLS context for " + display_url_);
    }
    // The connection (or the proxy's CONNECT) goes to the URL's host; SNI names tls-server-name.
    if (!SendSniAs(ssl->ssl_context(), &conn_.tls_server_name))
      return Fail(ErrorCode::kInternal,
                  "cannot send " + Quote(conn_.tls_server_name) + " as the TLS server name");
    // httplib's own check would also trust the system CAs next to a given CA; verify ourselves.
    ssl->enable_server_certificate_verification(false);
    if (!conn_.insecure_skip_tls_verify &&
        !ConfigureStrictVerify(ssl->ssl_context(), ca_.get(), verify_name_, p->verify.get())) {
      return Fail(ErrorCode::kInternal,
                  "cannot set up TLS verification for " + Quote(verify_name_));
    }
    p->client = std::move(ssl);
  }
  p->client->set_keep_alive(true);
  std::atomic<int>* socket_slot = &p->socket;
  p->client->set_socket_options([this, socket_slot](socket_t sock) {
    socket_slot->store(sock);
    if (cancelled_.load()) ::shutdown(sock, SHUT_RDWR);
  });
  if (use_proxy_) {
    p->client->set_proxy(proxy_.host, proxy_.port);
    if (!proxy_.userinfo.empty()) {
      size_t colon = proxy_.userinfo.find(':');
      p->client->set_proxy_basic_auth(
          PercentDecode(proxy_.userinfo.substr(0, colon)),
          colon == std::string::npos ? "" : PercentDecode(proxy_.userinfo.substr(colon + 1)));
    }
  }
  return p;
}

Result<std::unique_ptr<HttpTransport::Pooled>> HttpTransport::Acquire(const AuthMaterial& auth,
                                                                      bool& reused) {
  reused = false;
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    while (!idle_.empty()) {
      std::unique_ptr<Pooled> p = std::move(idle_.back());
      idle_.pop_back();
      if (p->generation == auth.exec_cert_generation) {
        reused = true;
        return p;
      }
      // built with an older exec client certificate: drop it
    }
  }
  return NewClient(auth);
}

void HttpTransport::Release(std::unique_ptr<Pooled> p) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (!cancelled_ && idle_.size() < options_.max_idle_clients) idle_.push_back(std::move(p));
}

Error HttpTransport::Describe(httplib::Error err, const Pooled& p,
                              std::chrono::milliseconds elapsed,
                              std::chrono::milliseconds timeout) const {
  const std::string via = use_proxy_ ? " via proxy " + Redact(proxy_) : "";
  switch (err) {
    case httplib::Error::Connection: {
      const std::string& host = use_proxy_ ? proxy_.host : url_.host;
      int port = use_proxy_ ? proxy_.port : url_.port;
      return Fail(
          ErrorCode::kUnavailable,
          "cannot connect to " +
              (use_proxy_ ? Redact(proxy_) + " (proxy for " + display_url_ + ")" : display_url_) +
              ": " + DiagnoseConnect(host, port));
    }
    case httplib::Error::ConnectionTimeout:
      return Fail(ErrorCode::kTimeout, "connecting to " + display_url_ + via + " timed out after " +
                                           FormatDuration(timeout));
    case httplib::Error::SSLConnection: {
      std::string why;
      if (p.verify->error != 0) {
        why = DescribeVerifyError(p.verify->error, ca_description_, verify_name_);
      } else if (elapsed >= timeout) {
        return Fail(ErrorCode::kTimeout, "TLS handshake with " + display_url_ + via +
                                             " timed out after " + FormatDuration(timeout));
      } else {
        unsigned long e = ERR_peek_last_error();
        char buf[256] = {0};
        if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
        why = e != 0 ? std::string("TLS error: ") + buf
                     : "the server closed the connection or does not speak TLS";
        if (use_proxy_) why += " (or the proxy refused the CONNECT)";
      }
      return Fail(ErrorCode::kUnavailable,
                  "TLS handshake with " + display_url_ + via + " failed: " + why);
    }
    case httplib::Error::SSLServerVerification:
      return Fail(ErrorCode::kUnavailable, "TLS handshake with " + display_url_ +
                                               " failed: server certificate verification failed");
    case httplib::Error::SSLLoadingCerts:
      return Fail(ErrorCode::kInternal, "loading the CA certificates failed");
    case httplib::Error::Read:
      if (elapsed + std::chrono::milliseconds(50) >= timeout) {
        return Fail(ErrorCode::kTimeout, "no response from " + display_url_ + via + " within " +
                                             FormatDuration(timeout));
      }
      return Fail(ErrorCode::kUnavailable,
                  "reading the response from " + display_url_ + via +
                      " failed: the connection was closed (a server that rejects the client "
                      "certificate closes it too)");
    case httplib::Error::Write:
      return Fail(ErrorCode::kUnavailable,
                  "sending the request to " + display_url_ + via + " failed: connection closed");
    case httplib::Error::Compression:
      return Fail(ErrorCode::kUnavailable,
                  "the response from " + display_url_ + " could not be decompressed");
    default:
      return Fail(ErrorCode::kUnavailable,
                  "request to " + display_url_ + via + " failed: " + httplib::to_string(err));
  }
}

bool HttpTransport::BeginInFlight(Pooled* p) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (cancelled_) return false;
  in_flight_.insert(p);
  return true;
}

bool HttpTransport::EndInFlight(Pooled* p) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  in_flight_.erase(p);
  return cancelled_;
}

Error HttpTransport::Cancelled(const Request& req) const {
  return Fail(ErrorCode::kUnavailable, "GET " + req.path + ": cancelled (shutting down)");
}

Result<Response> HttpTransport::Once(const Request& req, const ChunkSink* sink,
                                     const AuthMaterial& auth, bool fresh_connection) {
  bool reused = false;
  auto pooled = fresh_connection ? NewClient(auth) : Acquire(auth, reused);
  if (!pooled.ok()) return pooled.error();
  std::unique_ptr<Pooled> p = std::move(*pooled);
  *p->verify = VerifyOutcome{};
  SetTimeouts(*p->client, req.timeout);
  if (!BeginInFlight(p.get())) return Cancelled(req);

  const httplib::Headers headers = RequestHeaders(req, options_.user_agent, auth.authorization);
  const auto start = std::chrono::steady_clock::now();
  ResponseReader reader(req, sink, start + req.timeout);
  ERR_clear_error();
  httplib::Result res = p->client->Get(
      base_path_ + req.path, headers,
      [&reader](const httplib::Response& r) { return reader.OnResponse(r); },
      [&reader](const char* data, size_t len) { return reader.OnData(data, len); });
  const bool cancelled = EndInFlight(p.get());
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (res.error() == httplib::Error::Success) {
    if (res) reader.TakeStatusAndHeaders(*res);
    Release(std::move(p));
    return reader.Take();
  }
  // A failed client is dropped (its connection state is unknown).
  if (res.error() == httplib::Error::Canceled) {
    if (reader.sink_stopped()) return reader.Take();
    if (reader.over_cap()) {
      return Fail(ErrorCode::kResourceExhausted,
                  "GET " + req.path + ": the response is larger than the " +
                      std::to_string(req.max_body_bytes) + "-byte limit");
    }
    if (reader.past_deadline()) {
      return Fail(ErrorCode::kTimeout, "GET " + req.path + ": no complete response within " +
                                           FormatDuration(req.timeout));
    }
  }
  const httplib::Error e = res.error();
  if (cancelled) return Cancelled(req);
  if (ClosedWhileIdle(reused, reader.status(), elapsed, req.timeout, e))
    return Once(req, sink, auth, true);
  return Describe(e, *p, elapsed, req.timeout);
}

void HttpTransport::Cancel() {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (!cancelled_)
    log::Debug("cancelling requests",
               {{"cluster", conn_.context_name}, {"in_flight", in_flight_.size()}});
  cancelled_.store(true);
  for (Pooled* p : in_flight_) {
    int fd = p->socket.load();
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
  idle_.clear();
}

Result<Response> HttpTransport::Do(const Request& req, const ChunkSink* sink) {
  for (int attempt = 0;; ++attempt) {
    auto auth = credentials_->Current();
    if (!auth.ok()) return Fail(auth.error().code, auth.error().message);
    auto res = Once(req, sink, *auth, false);
    if (res.ok() && res->status == 401 && attempt == 0 && credentials_->Invalidate()) {
      log::Info("apiserver answered 401; refreshing credentials and retrying once",
                {{"cluster", conn_.context_name}, {"auth", credentials_->Kind()}});
      continue;
    }
    return res;
  }
}

}  // namespace

Result<std::unique_ptr<Transport>> MakeTransport(const ClusterConnection& conn,
                                                 const TransportOptions& options) {
  auto t = std::make_unique<HttpTransport>(conn, options);
  Status st = t->Init();
  if (!st.ok()) return st;
  return std::unique_ptr<Transport>(std::move(t));
}

Result<std::unique_ptr<Transport>> MakeTransport(const ClusterConnection& conn) {
  return MakeTransport(conn, TransportOptions{});
}

}  // namespace gpuattr::kube
