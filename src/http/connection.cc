// The server's socket loop (server_impl.h): one thread polls every socket, accepts, runs TLS
// handshakes, reads request heads under their caps and deadline, hands admitted requests to the
// workers and writes their responses without blocking.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>

#include "gpuattr/util/log.h"
#include "server_impl.h"

namespace gpuattr::http {
namespace {

constexpr size_t kReadChunk = 4096;
// One connection sends at most this much before the loop polls again: the others, and the health
// probes waiting behind them, get their turn while a large body goes out.
constexpr size_t kWriteSlice = 256 * 1024;
constexpr size_t kTlsWriteChunk = kWriteSlice;  // the same for every retry of an SSL_write
constexpr int kMaxIov = 64;
constexpr int kAcceptsPerWakeup = 64;
// The kernel's send buffer per connection (it doubles the figure): a client that stops reading
// holds at most this much kernel memory (~70 MB over every slot instead of 4 MB each), and the
// minimum send rate sees it stop within seconds. 512 KiB in flight is 5 MB/s at 100 ms RTT.
constexpr int kSendBuffer = 256 * 1024;

// The address bytes of a peer ("" when unknown).
std::string PeerOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a).sin_addr;
    return std::string(reinterpret_cast<const char*>(&v4), sizeof v4);
  }
  if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    return std::string(reinterpret_cast<const char*>(&v6), sizeof v6);
  }
  return {};
}

// When a response being sent must have made its next progress: send_grace plus its bytes sent so
// far at the minimum rate, within the write timeout.
Steady::time_point SendDeadline(const Conn& c, const ServerLimits& limits) {
  const Steady::time_point last = c.write_started + limits.write_timeout;
  if (limits.min_send_rate == 0) return last;
  const auto earned = std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(
      static_cast<double>(c.body_sent) / static_cast<double>(limits.min_send_rate)));
  return std::min(last, c.write_started + limits.send_grace + earned);
}

}  // namespace

Io TlsResult(SSL* ssl, int rc) {
  switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
      return Io::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Io::kWantWrite;
    default:
      ERR_clear_error();  // this connection's failure is not the next one's
      return Io::kClosed;
  }
}

Io Receive(Conn& c, char* buf, size_t n, size_t& got) {
  got = 0;
  if (c.ssl) {
    int rc = SSL_read(c.ssl, buf, static_cast<int>(n));
    if (rc > 0) {
      got = static_cast<size_t>(rc);
      return Io::kOk;
    }
    return TlsResult(c.ssl, rc);
  }
  while (true) {
    ssize_t rc = ::recv(c.fd, buf, n, MSG_DONTWAIT);
    if (rc > 0) {
      got = static_cast<size_t>(rc);
      return Io::kOk;
    }
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Io::kWantRead;
    return Io::kClosed;  // EOF or error
  }
}

void MetricsServer::Impl::Loop() {
  // Writes to a peer that went away must not raise SIGPIPE (OpenSSL writes with write()). The
  // signal is thread-directed, so blocking it here is enough.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);

  std::vector<pollfd> fds;
  std::vector<Conn*> polled;
  while (!stopping.load()) {
    Steady::time_point now = Steady::now();
    fds.clear();
    polled.clear();
    fds.push_back({waker.fd(), POLLIN, 0});
    const size_t slots = opt.limits.max_connections + opt.limits.health_connections;
    const bool room = Live() < slots || std::any_of(conns.begin(), conns.end(), [](const auto& c) {
                        return !c->dead && c->phase == Phase::kReading;
                      });
    const bool accepting = room && now >= accept_paused_until;
    fds.push_back({accepting ? listen_fd : -1, POLLIN, 0});  // a negative fd is skipped
    Steady::time_point next = Steady::time_point::max();
    if (!accepting && now < accept_paused_until) next = accept_paused_until;
    for (auto& c : conns) {
      if (c->phase == Phase::kWorking) continue;
      fds.push_back({c->fd, c->events, 0});
      polled.push_back(c.get());
      next = std::min(next, c->deadline);
    }
    int timeout = -1;
    if (next != Steady::time_point::max()) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
      timeout = static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
    }
    int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) {
      log::Error("poll failed", {{"err", std::strerror(errno)}});
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    now = Steady::now();
    if (n > 0 && fds[0].revents) TakeDone(now);
    for (size_t i = 0; n > 0 && i < polled.size(); ++i) {
      Conn& c = *polled[i];
      short revents = fds[i + 2].revents;
      if (!revents || c.dead || c.phase == Phase::kWorking) continue;
      if (revents & POLLNVAL) {
        c.dead = true;
        continue;
      }
      Advance(c, now);
    }
    // After the others' requests are read: a full house pushes out a connection still waiting
    // for its head, never one whose request already arrived.
    if (n > 0 && accepting && fds[1].revents) Accept(now);
    for (auto& c : conns)
      if (!c->dead && c->phase != Phase::kWorking && now >= c->deadline) Expire(*c, now);
    std::erase_if(conns, [](const std::unique_ptr<Conn>& c) { return c->dead; });
  }
  conns.clear();
}

void MetricsServer::Impl::TakeDone(Steady::time_point now) {
  waker.Drain();
  std::deque<Done> finished;
  {
    std::lock_guard<std::mutex> lock(mu);
    finished.swap(done);
  }
  for (Done& d : finished) {
    auto it = std::find_if(conns.begin(), conns.end(),
                           [&](const std::unique_ptr<Conn>& c) { return c->id == d.id; });
    if (it != conns.end() && (*it)->phase == Phase::kWorking)
      Respond(**it, std::move(d.response), now);
  }
}

size_t MetricsServer::Impl::Live() const {
  return static_cast<size_t>(
      std::count_if(conns.begin(), conns.end(), [](const auto& c) { return !c->dead; }));
}

Conn* MetricsServer::Impl::OldestReader() {
  Conn* oldest = nullptr;
  for (auto& c : conns)
    if (!c->dead && c->phase == Phase::kReading && (!oldest || c->deadline < oldest->deadline))
      oldest = c.get();
  return oldest;
}

bool MetricsServer::Impl::EvictOldestReader() {
  Conn* oldest = OldestReader();
  if (!oldest) return false;
  log::Debug("connection slots full: closing the connection that waited longest for a request");
  refusals->Add(Refusal::kEvicted);
  oldest->dead = true;
  return true;
}

void MetricsServer::Impl::Accept(Steady::time_point now) {
  const size_t slots = opt.limits.max_connections + opt.limits.health_connections;
  for (int i = 0; i < kAcceptsPerWakeup; ++i) {
    size_t live = Live();
    // Every slot taken and none to free: new connections wait in the listen backlog.
    if (live >= slots && !OldestReader()) return;
    sockaddr_storage from{};
    const platform::Accepted accepted = platform::Accept(listen_fd, from);
    const int fd = accepted.fd;
    if (fd < 0) {
      const int err = accepted.error;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err != EAGAIN && err != EWOULDBLOCK) {
        // Out of descriptors or memory: the pending connection stays in the backlog; retry
        // shortly instead of spinning on a listen socket that stays readable.
        log::Warn("cannot accept a connection", {{"err", std::strerror(err)}});
        accept_paused_until = now + std::chrono::milliseconds(100);
      }
      return;
    }
    auto c = std::make_unique<Conn>();
    c->fd = fd;  // closed with c
    c->peer = PeerOf(from);
    const auto same_peer = std::count_if(
        conns.begin(), conns.end(), [&](const auto& o) { return !o->dead && o->peer == c->peer; });
    if (static_cast<size_t>(same_peer) >= opt.limits.max_connections_per_peer) {
      log::Debug("too many connections from one address: closed at once");
      refusals->Add(Refusal::kPerPeerLimit);
      continue;
    }
    // Only now that a connection came (and may stay) is an older one pushed out for it.
    if (live >= slots && EvictOldestReader()) --live;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);
    c->id = next_id++;
    c->health_only = live >= opt.limits.max_connections;
    c->scanner = HeadScanner(opt.limits.http);
    c->deadline = now + opt.limits.header_timeout;
    if (tls) {
      c->ssl = SSL_new(tls.get());
      if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
        ERR_clear_error();
        continue;  // c closes the socket
      }
      SSL_set_accept_state(c->ssl);
      c->phase = Phase::kHandshake;
    }
    Conn& ref = *c;
    conns.push_back(std::move(c));
    Advance(ref, now);
  }
}

void MetricsServer::Impl::Advance(Conn& c, Steady::time_point now) {
  switch (c.phase) {
    case Phase::kHandshake:
      return Handshake(c, now);
    case Phase::kReading:
      return Read(c, now);
    case Phase::kWriting:
      return Write(c, now);
    case Phase::kLingering:
      return Linger(c);
    case Phase::kWorking:
      return;
  }
}

void MetricsServer::Impl::Expire(Conn& c, Steady::time_point now) {
  if (c.phase == Phase::kReading && !c.in.empty()) {
    refusals->Add(Refusal::kHeadTimeout);
    Respond(c, Refuse({408, "the request head did not arrive in time"}, false), now);
    return;
  }
  if (c.phase == Phase::kHandshake) refusals->Add(Refusal::kTlsHandshake);
  if (c.phase == Phase::kWriting) refusals->Add(Refusal::kSlowReader);
  c.dead = true;  // a handshake or an idle keep-alive that timed out, a write or a linger
}

void MetricsServer::Impl::Handshake(Conn& c, Steady::time_point now) {
  int rc = SSL_do_handshake(c.ssl);
  if (rc == 1) {
    c.phase = Phase::kReading;
    c.events = POLLIN;
    return Read(c, now);
  }
  Io io = TlsResult(c.ssl, rc);
  if (io == Io::kClosed) {
    log::Debug("TLS handshake failed");
    refusals->Add(Refusal::kTlsHandshake);
    c.dead = true;
    return;
  }
  c.events = io == Io::kWantWrite ? POLLOUT : POLLIN;
}

void MetricsServer::Impl::Read(Conn& c, Steady::time_point now) {
  const size_t cap = HeadLimit(opt.limits.http) + 1;
  // Bytes that followed the previous request (pipelining) come first.
  HeadScanner::State state = c.in.empty() ? HeadScanner::State::kNeedMore : c.scanner.Scan(c.in);
  while (state == HeadScanner::State::kNeedMore) {
    if (c.in.size() >= cap) {  // the scanner decides before this; a guard, not a path
      state = HeadScanner::State::kRejected;
      break;
    }
    const size_t old = c.in.size();
    c.in.resize(old + std::min(kReadChunk, cap - old));
    size_t got = 0;
    Io io = Receive(c, c.in.data() + old, c.in.size() - old, got);
    c.in.resize(old + got);
    if (io == Io::kWantRead || io == Io::kWantWrite) {
      c.events = io == Io::kWantWrite ? POLLOUT : POLLIN;
      return;
    }
    if (io == Io::kClosed) {
      c.dead = true;
      return;
    }
    state = c.scanner.Scan(c.in);
  }
  if (state == HeadScanner::State::kRejected) {
    HttpError e = c.scanner.error();
    if (e.reason.empty()) e = {431, "request head too large"};
    refusals->Add(Refusal::kBadRequest);
    return Respond(c, Refuse(e, false), now);
  }
  Dispatch(c, now);
}

void MetricsServer::Impl::Dispatch(Conn& c, Steady::time_point now) {
  const size_t n = c.scanner.head_size();
  ParsedHead parsed = ParseRequestHead(std::string_view(c.in).substr(0, n));
  c.in.erase(0, n);
  if (!parsed.head) {
    refusals->Add(Refusal::kBadRequest);
    return Respond(c, Refuse(parsed.error, false), now);
  }
  RequestHead& head = *parsed.head;
  if (auto refused = Admit(head, loopback)) {
    log::Debug("request refused", {{"status", refused->status}, {"reason", refused->reason}});
    refusals->Add(Refusal::kBadRequest);
    return Respond(c, Refuse(*refused, head.method == "HEAD"), now);
  }
  c.requests++;
  const bool close =
      c.health_only || !head.KeepAlive() || c.requests >= opt.limits.max_requests_per_connection;
  if (AnswerHealth(c, head, close, now)) return;
  if (c.health_only) {
    refusals->Add(Refusal::kHealthSlotOnly);
    return Respond(c,
                   Refuse({503,
                           "every connection slot is busy; only /healthz and /readyz are "
                           "answered on this one"},
                          head.method == "HEAD"),
                   now);
  }
  c.phase = Phase::kWorking;
  {
    std::lock_guard<std::mutex> lock(mu);
    jobs.push_back({c.id, std::move(head), close});
  }
  cv.notify_one();
}

bool MetricsServer::Impl::AnswerHealth(Conn& c, const RequestHead& head, bool close,
                                       Steady::time_point now) {
  if (head.path != "/healthz" && head.path != "/readyz") return false;
  if (auth) {
    const std::string* header = head.Header("authorization");
    if (!header || auth->CheckRemembered(*header) != AuthVerdict::kAccepted) return false;
  }
  Respond(c, Serve(head, routes, close), now);
  return true;
}

void MetricsServer::Impl::Respond(Conn& c, Response r, Steady::time_point now) {
  c.response = std::move(r);
  c.out.clear();
  c.out.push_back(c.response.head);
  if (std::string_view p = c.response.NextBodyPiece(); !p.empty()) c.out.push_back(p);
  c.out_index = 0;
  c.out_offset = 0;
  c.phase = Phase::kWriting;
  c.events = POLLOUT;
  c.write_started = now;
  c.body_sent = 0;
  c.deadline = SendDeadline(c, opt.limits);
  Write(c, now);
}

// Moves the write position forward by `n` bytes.
void MetricsServer::Impl::Sent(Conn& c, size_t n) {
  while (n > 0 && c.out_index < c.out.size()) {
    size_t left = c.out[c.out_index].size() - c.out_offset;
    size_t step = std::min(n, left);
    c.out_offset += step;
    n -= step;
    if (c.out_offset == c.out[c.out_index].size()) {
      c.out_index++;
      c.out_offset = 0;
    }
  }
}

// The next body piece into c.out once everything before it is sent; false at the end.
bool MetricsServer::Impl::NextPiece(Conn& c) {
  std::string_view p = c.response.NextBodyPiece();
  if (p.empty()) return false;  // never an empty piece: SSL_write takes no empty write
  c.out.assign(1, p);
  c.out_index = 0;
  c.out_offset = 0;
  return true;
}

void MetricsServer::Impl::Write(Conn& c, Steady::time_point now) {
  size_t budget = kWriteSlice;
  while (c.out_index < c.out.size() || NextPiece(c)) {
    if (budget == 0) {
      c.events = POLLOUT;  // more next time round
      return;
    }
    if (c.ssl) {
      std::string_view piece = c.out[c.out_index].substr(c.out_offset);
      int rc =
          SSL_write(c.ssl, piece.data(), static_cast<int>(std::min(piece.size(), kTlsWriteChunk)));
      if (rc > 0) {
        Sent(c, static_cast<size_t>(rc));
        budget -= std::min(budget, static_cast<size_t>(rc));
        c.body_sent += static_cast<size_t>(rc);
        c.deadline = SendDeadline(c, opt.limits);
        continue;
      }
      Io io = TlsResult(c.ssl, rc);
      if (io == Io::kClosed) {
        c.dead = true;
        return;
      }
      c.events = io == Io::kWantRead ? POLLIN : POLLOUT;
      return;
    }
    iovec iov[kMaxIov];
    int count = 0;
    size_t room = budget;
    for (size_t i = c.out_index; i < c.out.size() && count < kMaxIov && room > 0; ++i) {
      std::string_view p = c.out[i].substr(i == c.out_index ? c.out_offset : 0);
      p = p.substr(0, room);
      room -= p.size();
      iov[count++] = {const_cast<char*>(p.data()), p.size()};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t rc = ::sendmsg(c.fd, &msg, platform::kSendNoSignal | MSG_DONTWAIT);
    if (rc >= 0) {
      Sent(c, static_cast<size_t>(rc));
      budget -= std::min(budget, static_cast<size_t>(rc));
      c.body_sent += static_cast<size_t>(rc);
      c.deadline = SendDeadline(c, opt.limits);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      c.events = POLLOUT;
      return;
    }
    c.dead = true;
    return;
  }
  if (c.response.body_failed()) {  // fewer bytes than the head announced: end it here
    log::Error("the response body could not be completed; closing the connection");
    c.dead = true;
    return;
  }
  // The response is out: let go of it (and of the exposition it holds).
  const bool close = c.response.close;
  c.response = Response();
  c.out.clear();
  if (close || stopping.load()) return StartLinger(c, now);
  c.phase = Phase::kReading;
  c.events = POLLIN;
  c.scanner.Reset();
  c.deadline = now + opt.limits.header_timeout;
  Read(c, now);  // a pipelined request, or bytes TLS already holds, would wake no poll
}

void MetricsServer::Impl::StartLinger(Conn& c, Steady::time_point now) {
  if (c.ssl) {
    SSL_shutdown(c.ssl);  // close_notify, once; the reply is not awaited
    ERR_clear_error();
  }
  ::shutdown(c.fd, SHUT_WR);
  c.phase = Phase::kLingering;
  c.events = POLLIN;
  c.deadline = now + opt.limits.linger;
  c.in.clear();
  c.in.shrink_to_fit();
  Linger(c);
}

// Reads and drops what the peer still sends (the rest of a refused body, say), at most
// linger_bytes, so that closing does not reset the connection before it read our answer.
void MetricsServer::Impl::Linger(Conn& c) {
  char buf[16384];
  while (c.lingered <= opt.limits.linger_bytes) {
    ssize_t rc = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (rc > 0) {
      c.lingered += static_cast<size_t>(rc);
      continue;
    }
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break;  // the peer closed, or an error
  }
  c.dead = true;
}

}  // namespace gpuattr::http
