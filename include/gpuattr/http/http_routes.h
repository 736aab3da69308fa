// What each path answers, as complete HTTP/1.1 responses: /metrics (the exposition rendered at
// publication, or its gzip stream, with the process_* tail of this scrape), /healthz, /readyz,
// the status page /, /snapshot.json and /snapshot.md (built once per snapshot, page_cache.h);
// and the refusals. No sockets here: the server (http/server.cc) sends what these build.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/http/http_request.h"
#include "gpuattr/http/page_cache.h"
#include "gpuattr/metrics/exposition.h"
#include "gpuattr/metrics/store.h"
#include "gpuattr/report/view.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::http {

struct Response {
  int status = 200;
  std::string head;  // status line and header fields, the blank line included
  std::string body;  // unless `exposition` or `shared_body` is set
  // "/", /snapshot.json and /snapshot.md: the body every connection sending it shares.
  std::shared_ptr<const std::string> shared_body;
  // /metrics: the body is the exposition's text (or gzip stream) and then `tail`, sent without
  // copying the exposition.
  std::shared_ptr<const metrics::Exposition> exposition;
  bool gzip = false;
  std::string tail;
  bool head_only = false;  // HEAD: the head says what GET would send; no body follows
  bool close = false;      // the head says "Connection: close"

  size_t BodySize() const;
  // The body bytes to send, in order (none for HEAD), one piece per call: a view valid until the
  // next call; empty at the end. An exposition's text (a scrape without gzip) is inflated here as
  // it goes out, 256 KB at a time.
  std::string_view NextBodyPiece();
  // Whether the body ended early (inflating failed): the connection must close.
  bool body_failed() const { return reader && reader->failed(); }

  size_t next_piece = 0;                        // NextBodyPiece's position
  std::unique_ptr<metrics::TextReader> reader;  // the text being inflated
};

struct RouteContext {
  const metrics::SnapshotStore* store = nullptr;
  Clock* clock = nullptr;      // the status page's "ago" times
  PageCache* pages = nullptr;  // the bodies of "/" and the snapshots, shared
  report::ViewOptions view;
};

// The answer to an admitted GET or HEAD (http/http_request.h, Admit), after authentication.
// `close`: the connection ends after it.
Response Serve(const RequestHead& request, const RouteContext& context, bool close);

// A refusal before routing (Admit's, or a head that could not be read): the status, the reason
// as text, "Connection: close", and "Allow: GET, HEAD" with 405.
Response Refuse(const HttpError& error, bool head_only);

// 401 with the Basic challenge.
Response Unauthorized(bool head_only, bool close);

std::string_view StatusText(int status);

}  // namespace gpuattr::http
