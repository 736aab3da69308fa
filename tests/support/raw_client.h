// A TCP client driven by hand, for tests that play a hostile or slow HTTP client against the
// server (tests/e2e/server_hostile_test.cc, server_pressure_test.cc): raw bytes out, raw bytes
// in, from a chosen loopback address.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuattr::testing {

inline constexpr size_t kMiB = 1u << 20;

// VmRSS of this process, in bytes.
size_t RssBytes();

// "GET <path> HTTP/1.1" with Host 127.0.0.1, `extra` header lines (each ending in \r\n) and the
// blank line.
std::string Get(std::string_view path, std::string_view extra = "");
int StatusOf(std::string_view response);  // 0 when it is no HTTP/1.1 response
std::string BodyOf(const std::string& response);

class Raw {
 public:
  // Connects to 127.0.0.1:port from `source` (any 127.x.y.z address: each is another peer to
  // the server), or from the default address when empty.
  // `receive_buffer` > 0: SO_RCVBUF, set before connecting (a reader that holds little).
  explicit Raw(int port, const std::string& source = "", int receive_buffer = 0);
  ~Raw();
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  bool connected() const { return connected_; }
  const std::string& error() const { return error_; }  // why it is not connected
  int fd() const { return fd_; }

  bool Send(std::string_view bytes);
  // Everything until the server closes, `timeout` passes, or `limit` bytes came.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout, size_t limit = 4 * kMiB);
  // One response: the head, then Content-Length bytes of body. Bytes of a next (pipelined)
  // response stay for the next call.
  std::string ReadResponse(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Reads at most `n` bytes that are there now (none when nothing is), kept for the next Read*
  // call to return; false once closed.
  bool ReadSome(size_t n);
  size_t buffered() const { return pending_.size(); }  // received and not yet returned

 private:
  using SteadyClock = std::chrono::steady_clock;
  // Waits until `deadline` for bytes and appends what one recv gives to pending_; false when
  // the time is up or the connection closed.
  bool Receive(SteadyClock::time_point deadline);

  int fd_ = -1;
  bool connected_ = false;
  std::string error_;
  std::string pending_;  // received, not yet returned
};

}  // namespace gpuattr::testing
