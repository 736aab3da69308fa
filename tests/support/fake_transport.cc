#include "support/fake_transport.h"

namespace gpuattr::testing {

FakeReply FakeReply::Json(std::string body, int status) {
  FakeReply r;
  r.status = status;
  r.body = std::move(body);
  r.headers["content-type"] = "application/json";
  return r;
}

FakeReply FakeReply::Chunks(std::vector<std::string> chunks, bool block) {
  FakeReply r;
  r.chunks = std::move(chunks);
  r.block = block;
  return r;
}

FakeReply FakeReply::Fail(Error error) {
  FakeReply r;
  r.status = 0;
  r.error = std::move(error);
  return r;
}

void FakeTransport::Enqueue(const std::string& path_prefix, FakeReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_[path_prefix].push_back(std::move(reply));
}

void FakeTransport::SetDefault(const std::string& path_prefix, FakeReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  defaults_[path_prefix] = std::move(reply);
}

void FakeTransport::EndStreams() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
  }
  cv_.notify_all();
}

void FakeTransport::OpenGate(const std::string& gate) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_gates_.insert(gate);
  }
  cv_.notify_all();
}

bool FakeTransport::WaitPolling(const kube::ChunkSink& sink, const std::function<bool()>& done) {
  // Bounded: one hour of 1 ms polls at most, so a broken test cannot hang forever.
  for (int i = 0; i < 3'600'000; ++i) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(1), done)) return true;
    }
    if (!sink(std::string_view())) return false;
  }
  return true;
}

kube::Request FakeTransport::LastRequest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.empty() ? kube::Request{} : requests_.back();
}

std::vector<kube::Request> FakeTransport::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t FakeTransport::CountRequests(const std::string& prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& r : requests_) n += r.path.compare(0, prefix.size(), prefix) == 0 ? 1 : 0;
  return n;
}

int FakeTransport::OpenStreams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_streams_;
}

// Under mu_.
FakeReply FakeTransport::Take(const kube::Request& req) {
  requests_.push_back(req);
  auto matches = [&](const std::string& prefix) {
    return req.path.compare(0, prefix.size(), prefix) == 0;
  };
  std::deque<FakeReply>* best = nullptr;
  size_t best_len = 0;
  for (auto& [prefix, queue] : queued_) {
    if (!queue.empty() && matches(prefix) && (best == nullptr || prefix.size() > best_len)) {
      best = &queue;
      best_len = prefix.size();
    }
  }
  if (best != nullptr) {
    FakeReply r = std::move(best->front());
    best->pop_front();
    return r;
  }
  const FakeReply* fallback = nullptr;
  best_len = 0;
  for (const auto& [prefix, reply] : defaults_) {
    if (matches(prefix) && (fallback == nullptr || prefix.size() > best_len)) {
      fallback = &reply;
      best_len = prefix.size();
    }
  }
  if (fallback != nullptr) return *fallback;
  return FakeReply::Json(
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"fake: no reply for )" +
          req.path + R"(","reason":"NotFound","code":404})",
      404);
}

Result<kube::Response> FakeTransport::Get(const kube::Request& req) {
  FakeReply r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    r = Take(req);
  }
  if (r.error) return *r.error;
  kube::Response resp;
  resp.status = r.status;
  resp.headers = r.headers;
  resp.body = r.body;
  for (const auto& c : r.chunks) resp.body += c;
  if (resp.body.size() > req.max_body_bytes) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "fake: body over the cap on cluster \"" + cluster_ + "\"");
  }
  return resp;
}

Result<kube::Response> FakeTransport::Stream(const kube::Request& req,
                                             const kube::ChunkSink& sink) {
  FakeReply r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    r = Take(req);
    ++open_streams_;
  }
  struct Closer {
    FakeTransport* t;
    ~Closer() {
      std::lock_guard<std::mutex> lock(t->mu_);
      --t->open_streams_;
    }
  } closer{this};
  if (r.error) return *r.error;
  kube::Response resp;
  resp.status = r.status;
  resp.headers = r.headers;
  // As the real transport: a non-2xx body is returned, not streamed; a 2xx opens the stream
  // (the sink hears an empty chunk) before any data.
  if (r.status < 200 || r.status >= 300) {
    for (const auto& c : r.chunks) resp.body += c;
    if (r.chunks.empty()) resp.body = r.body;
    return resp;
  }
  if (!sink(std::string_view()))
    return MakeError(ErrorCode::kUnavailable, "fake: stream canceled by the sink");
  if (!r.gate.empty() && !WaitPolling(sink, [&] { return open_gates_.count(r.gate) > 0; })) {
    return MakeError(ErrorCode::kUnavailable, "fake: stream canceled by the sink");
  }
  std::vector<std::string> chunks = r.chunks;
  if (chunks.empty() && !r.body.empty()) chunks.push_back(r.body);
  for (const auto& c : chunks) {
    if (!sink(c)) return MakeError(ErrorCode::kUnavailable, "fake: stream canceled by the sink");
  }
  if (!r.block) return resp;
  if (!WaitPolling(sink, [this] { return ended_; })) {
    return MakeError(ErrorCode::kUnavailable, "fake: stream canceled by the sink");
  }
  return resp;
}

}  // namespace gpuattr::testing
