#include "support/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace gpuattr::testing {

size_t RssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

std::string Get(std::string_view path, std::string_view extra) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + std::string(extra) +
         "\r\n";
}

int StatusOf(std::string_view response) {
  if (!response.starts_with("HTTP/1.1 ") || response.size() < 12) return 0;
  return std::stoi(std::string(response.substr(9, 3)));
}

std::string BodyOf(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

Raw::Raw(int port, const std::string& source, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (receive_buffer > 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    // The port is chosen at connect, for the whole address pair: many connections from one
    // source address do not run out of ports bound ahead of time.
    int one = 1;
    ::setsockopt(fd_, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      error_ = "cannot bind " + source + ": " + std::strerror(errno);
      return;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (!connected_) error_ = std::strerror(errno);
}

Raw::~Raw() {
  if (fd_ >= 0) ::close(fd_);
}

bool Raw::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool Raw::Receive(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[65536];
  ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) return false;
  pending_.append(buf, static_cast<size_t>(n));
  return true;
}

std::string Raw::ReadUntilClosed(std::chrono::milliseconds timeout, size_t limit) {
  const auto deadline = SteadyClock::now() + timeout;
  while (pending_.size() < limit && Receive(deadline)) {
  }
  return std::exchange(pending_, std::string());
}

std::string Raw::ReadResponse(std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (true) {
    size_t end = pending_.find("\r\n\r\n");
    if (end != std::string::npos) {
      size_t cl = pending_.find("Content-Length: ");
      size_t want = end + 4 + (cl < end ? std::stoull(pending_.substr(cl + 16)) : 0);
      if (pending_.size() >= want) {
        std::string one = pending_.substr(0, want);
        pending_.erase(0, want);
        return one;
      }
    }
    if (!Receive(deadline)) break;
  }
  return std::exchange(pending_, std::string());
}

bool Raw::ReadSome(size_t n) {
  char buf[4096];
  size_t want = std::min(n, sizeof buf);
  ssize_t got = ::recv(fd_, buf, want, MSG_DONTWAIT);
  if (got == 0) return false;
  if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  pending_.append(buf, static_cast<size_t>(got));
  return true;
}

}  // namespace gpuattr::testing
