// The one seam between gpuattr and the network for apiserver traffic: a GET that returns a body or
// an error, and a streaming GET for WATCH. Real implementation: HTTPS with the kubeconfig's
// credentials (kube/http_transport.h). Tests use an in-memory fake or the fake apiserver.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

struct Request {
  std::string path;  // absolute path with query, e.g. "/api/v1/pods?limit=500"
  std::map<std::string, std::string> headers;
  // Get: the whole request (connect, TLS, headers and body). Stream: the connect timeout and the
  // longest silence between chunks (set it above the watch's bookmark interval).
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 64u << 20;  // enforced while reading (after gzip decoding)
};

struct Response {
  int status = 0;  // HTTP status; 0 when no response arrived
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

// Receives chunks of a streaming body; return false to stop the stream.
using ChunkSink = std::function<bool(std::string_view chunk)>;

class Transport {
 public:
  virtual ~Transport() = default;
  // Any HTTP status is a successful Result; only transport failures (connect, TLS, timeout, body
  // over the cap, credential plugin failure) are errors. Each error message names the cluster.
  virtual Result<Response> Get(const Request& req) = 0;
  // Streams the body of a long-running GET (WATCH) into `sink`. Returns the status line's code
  // (and headers, with an empty body) when the stream ends or the sink stops it. Only 2xx bodies
  // go to the sink; any other status returns its body (capped) in Response::body, unstreamed.
  // The sink may also be called with an empty chunk, at least once when a 2xx status arrived
  // (the stream is open) and possibly while waiting; an empty chunk carries no data.
  virtual Result<Response> Stream(const Request& req, const ChunkSink& sink) = 0;
  // Shutdown: aborts every request in flight, whatever its timeout (their calls return an error
  // promptly), and makes every later request fail at once. Callable from any thread, more than
  // once. The default does nothing (transports whose requests end quickly on their own).
  virtual void Cancel() {}
  // The cluster name used in messages ("cluster \"kind-gpu\"").
  virtual std::string ClusterName() const = 0;
};

}  // namespace gpuattr::kube
