// The server's inside, shared by server.cc (start, stop, the worker pool) and connection.cc (the
// socket loop: accept, TLS handshakes, request heads, responses, lingering). Private to http/.
#pragma once

#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuattr/http/http_routes.h"
#include "gpuattr/http/server.h"
#include "gpuattr/util/platform.h"

namespace gpuattr::http {

using Steady = std::chrono::steady_clock;

// Where a connection is. Every phase but kWorking has a deadline and waits on its socket.
enum class Phase {
  kHandshake,  // TLS
  kReading,    // the request head
  kWorking,    // a worker builds the response
  kWriting,
  kLingering,  // after a refusal: shut for writing, reading and dropping until the peer closes
};

struct Conn {
  uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  std::string peer;          // the client's address bytes (max_connections_per_peer)
  bool health_only = false;  // accepted into a health slot (ServerLimits::health_connections)
  Phase phase = Phase::kReading;
  Steady::time_point deadline;
  short events = POLLIN;
  std::string in;  // the head being read, and what followed it (at most HeadLimit + 1 bytes)
  HeadScanner scanner;
  size_t requests = 0;
  Response response;
  std::vector<std::string_view> out;  // response.head, then one body piece at a time
  size_t out_index = 0;
  size_t out_offset = 0;
  size_t lingered = 0;
  Steady::time_point write_started;  // of the response being sent
  size_t body_sent = 0;              // its bytes sent so far (head included)
  bool dead = false;

  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn() {
    if (ssl) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }
};

struct Job {
  uint64_t id;
  RequestHead head;
  bool close;
};

struct Done {
  uint64_t id;
  Response response;
};

enum class Io { kOk, kWantRead, kWantWrite, kClosed };

// What an SSL call's failure means for the connection.
Io TlsResult(SSL* ssl, int rc);
// Reads what is there (TLS or plain), without blocking.
Io Receive(Conn& c, char* buf, size_t n, size_t& got);

struct MetricsServer::Impl {
  ServerOptions opt;
  std::shared_ptr<const metrics::SnapshotStore> store;
  SslCtxPtr tls;
  std::unique_ptr<BasicAuth> auth;
  PageCache pages;
  std::shared_ptr<RefusalCounters> refusals;  // never null once started
  RouteContext routes;
  int listen_fd = -1;
  platform::Waker waker;  // Wake(): out of the loop's poll
  bool loopback = false;
  int port = 0;

  std::thread loop;
  std::vector<std::thread> workers;
  std::atomic<bool> stopping{false};

  std::mutex mu;                      // guards jobs, done, bcrypt_jobs, workers_stop
  std::condition_variable cv;         // jobs for the workers
  std::condition_variable bcrypt_cv;  // bcrypt_jobs
  std::deque<Job> jobs;               // at most one per connection
  std::deque<Done> done;
  std::deque<Job> bcrypt_jobs;  // credentials that need bcrypt, for the one bcrypt thread
  bool workers_stop = false;
  std::thread bcrypt;

  // Owned by the loop thread.
  std::vector<std::unique_ptr<Conn>> conns;
  uint64_t next_id = 1;
  Steady::time_point accept_paused_until;

  ~Impl();
  void Wake();  // the loop thread: out of its poll, to take finished responses or stop

  // ---- the worker pool (server.cc) -----------------------------------------------------------
  void Work();
  void CheckPasswords();  // the bcrypt thread
  // The response to `job`, or nullopt when its credentials were queued for the bcrypt thread.
  std::optional<Response> Handle(Job& job);
  Response Build(const Job& job);  // after authentication
  void Finish(uint64_t id, Response r);

  // ---- the socket loop (connection.cc) -------------------------------------------------------
  void Loop();
  void TakeDone(Steady::time_point now);
  void Accept(Steady::time_point now);
  size_t Live() const;  // connections not yet closed
  // The connection that has waited longest for a request head; null when none waits.
  Conn* OldestReader();
  // Closes OldestReader(); false when none waits.
  bool EvictOldestReader();
  // A health check answered here, without a worker, when no bcrypt is needed: true if answered.
  bool AnswerHealth(Conn& c, const RequestHead& head, bool close, Steady::time_point now);
  void Advance(Conn& c, Steady::time_point now);
  void Expire(Conn& c, Steady::time_point now);
  void Handshake(Conn& c, Steady::time_point now);
  void Read(Conn& c, Steady::time_point now);
  void Dispatch(Conn& c, Steady::time_point now);
  void Respond(Conn& c, Response r, Steady::time_point now);
  // Moves the write position forward by `n` bytes.
  static void Sent(Conn& c, size_t n);
  // The next body piece into c.out once everything before it is sent; false at the end.
  static bool NextPiece(Conn& c);
  void Write(Conn& c, Steady::time_point now);
  void StartLinger(Conn& c, Steady::time_point now);
  // Reads and drops what the peer still sends (the rest of a refused body, say), at most
  // linger_bytes, so that closing does not reset the connection before it read our answer.
  void Linger(Conn& c);
};

}  // namespace gpuattr::http
