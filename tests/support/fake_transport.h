// In-memory Transport for unit tests: scripted replies by path prefix, streams delivered in given
// chunks, streams that block until the caller's sink stops them, and a record of every request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/kube/transport.h"

namespace gpuattr::testing {

struct FakeReply {
  int status = 200;
  std::string body;                            // for Get
  std::vector<std::string> chunks;             // for Stream, delivered in order
  std::map<std::string, std::string> headers;  // lower-case names
  std::optional<Error> error;                  // a transport failure instead of a response
  // Stream only: after the chunks, keep the stream open until the sink returns false (the fake
  // offers it an empty chunk every millisecond) or EndStreams() is called.
  bool block = false;
  // Stream only: when set, nothing is delivered until OpenGate(gate) is called (the sink is polled
  // meanwhile, so the caller can still stop the stream).
  std::string gate;

  static FakeReply Json(std::string body, int status = 200);
  static FakeReply Chunks(std::vector<std::string> chunks, bool block = false);
  static FakeReply Blocking() { return Chunks({}, true); }
  static FakeReply Fail(Error error);
};

class FakeTransport : public kube::Transport {
 public:
  explicit FakeTransport(std::string cluster = "fake") : cluster_(std::move(cluster)) {}

  // Replies are matched by the longest path prefix that has one: queued replies first (each used
  // once, in order), then the default for that prefix. Unmatched requests get a 404 Status.
  void Enqueue(const std::string& path_prefix, FakeReply reply);
  void SetDefault(const std::string& path_prefix, FakeReply reply);
  // Ends every blocking stream, now and later.
  void EndStreams();
  // Lets streams waiting on `gate` deliver their chunks.
  void OpenGate(const std::string& gate);

  kube::Request LastRequest() const;
  std::vector<kube::Request> Requests() const;
  // Requests whose path starts with `prefix`.
  size_t CountRequests(const std::string& prefix) const;
  // Number of streams currently open.
  int OpenStreams() const;

  Result<kube::Response> Get(const kube::Request& req) override;
  Result<kube::Response> Stream(const kube::Request& req, const kube::ChunkSink& sink) override;
  std::string ClusterName() const override { return cluster_; }

 private:
  FakeReply Take(const kube::Request& req);
  // Polls `sink` with empty chunks until `done` holds (under mu_); false when the sink stopped.
  bool WaitPolling(const kube::ChunkSink& sink, const std::function<bool()>& done);

  std::string cluster_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::deque<FakeReply>> queued_;
  std::map<std::string, FakeReply> defaults_;
  std::vector<kube::Request> requests_;
  std::set<std::string> open_gates_;
  bool ended_ = false;
  int open_streams_ = 0;
};

}  // namespace gpuattr::testing
