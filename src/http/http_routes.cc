#include "gpuattr/http/http_routes.h"

#include <zlib.h>

#include <ctime>
#include <initializer_list>
#include <utility>

#include "gpuattr/metrics/process_metrics.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/report/status_page.h"

namespace gpuattr::http {
namespace {

constexpr std::string_view kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextType = "text/plain; charset=utf-8";
// Smaller bodies are sent as they are: gzip would save a few bytes at the price of a call.
constexpr size_t kGzipAtLeast = 1024;

using Fields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// "Tue, 01 Dec 2026 12:00:00 GMT" (RFC 9110 section 5.6.7), independent of the locale.
std::string HttpDate() {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t now = std::time(nullptr);
  std::tm t{};
  gmtime_r(&now, &t);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[t.tm_wday % 7],
                t.tm_mday, kMonths[t.tm_mon % 12], t.tm_year + 1900, t.tm_hour, t.tm_min, t.tm_sec);
  return buf;
}

// The head of `r` for a body of r.BodySize() bytes.
void WriteHead(Response& r, std::string_view content_type, Fields extra = {}) {
  std::string& h = r.head;
  h = "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(StatusText(r.status)) + "\r\n";
  h.append("Content-Type: ").append(content_type).append("\r\n");
  h.append("Content-Length: ").append(std::to_string(r.BodySize())).append("\r\n");
  if (r.gzip) h.append("Content-Encoding: gzip\r\n");
  for (const auto& [name, value] : extra) h.append(name).append(": ").append(value).append("\r\n");
  h.append("Date: ").append(HttpDate()).append("\r\n");
  h.append("X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n");
  if (r.close) h.append("Connection: close\r\n");
  h.append("\r\n");
}

// A whole gzip member of `text` (RFC 1952), or "" when zlib fails.
std::string Gzip(std::string_view text) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    return {};
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

// A page, JSON or text body, gzipped when the client takes it and it is worth it.
Response Body(const RequestHead& req, bool close, int status, std::string body,
              std::string_view content_type) {
  Response r;
  r.status = status;
  r.head_only = req.method == "HEAD";
  r.close = close;
  r.body = std::move(body);
  if (r.body.size() >= kGzipAtLeast && r.body.size() < (1u << 30) && AcceptsGzip(req)) {
    std::string z = Gzip(r.body);
    if (!z.empty()) {
      r.body = std::move(z);
      r.gzip = true;
    }
  }
  WriteHead(r, content_type, {{"Vary", "Accept-Encoding"}});
  return r;
}

Response Metrics(const RequestHead& req, const RouteContext& ctx, bool close) {
  Response r;
  r.head_only = req.method == "HEAD";
  r.close = close;
  r.exposition = ctx.store->GetExposition();
  r.tail = metrics::RenderProcessMetrics(metrics::ReadProcessStats());
  if (AcceptsGzip(req)) {
    r.gzip = true;
    r.tail = metrics::GzipTail(*r.exposition, r.tail);
  }
  WriteHead(r, kMetricsType, {{"Vary", "Accept-Encoding"}});
  return r;
}

// A page built once per snapshot (http/page_cache.h) and sent from the bytes every connection
// shares.
Response Shared(const RequestHead& req, const RouteContext& ctx, bool close, Page page,
                std::string_view content_type) {
  auto snapshot = ctx.store->Get();
  auto render = [&](double now) -> std::string {
    if (page == Page::kStatus) return report::RenderStatusPage(*snapshot, now, ctx.view);
    report::StatusView view = report::BuildStatusView(*snapshot, now, ctx.view);
    return page == Page::kSnapshotJson ? report::RenderSnapshotJson(view)
                                       : report::RenderMarkdown(view);
  };
  auto compress = [](const std::string& text) {
    return text.size() >= kGzipAtLeast && text.size() < (1u << 30) ? Gzip(text) : std::string();
  };
  Response r;
  r.head_only = req.method == "HEAD";
  r.close = close;
  r.shared_body = ctx.pages->Get(page, AcceptsGzip(req), snapshot,
                                 UnixSeconds(ctx.clock->WallNow()), render, compress, &r.gzip);
  WriteHead(r, content_type, {{"Vary", "Accept-Encoding"}});
  return r;
}

}  // namespace

size_t Response::BodySize() const {
  if (shared_body) return shared_body->size();
  if (!exposition) return body.size();
  return (gzip ? exposition->gzip_head.size() : exposition->text_size) + tail.size();
}

std::string_view Response::NextBodyPiece() {
  if (head_only) return {};
  // Pieces in order: 0 the body, or the gzip stream, or the text (read by `reader`); 1 the tail.
  while (next_piece < 2) {
    if (next_piece == 0) {
      if (shared_body) {
        next_piece = 2;
        if (!shared_body->empty()) return *shared_body;
        break;
      }
      if (!exposition) {
        next_piece = 2;
        if (!body.empty()) return body;
        break;
      }
      if (gzip) {
        next_piece = 1;
        return exposition->gzip_head;
      }
      if (!reader) reader = std::make_unique<metrics::TextReader>(*exposition);
      if (std::string_view p = reader->Next(); !p.empty()) return p;
      if (reader->failed()) return {};
      next_piece = 1;
    }
    next_piece = 2;
    if (!tail.empty()) return tail;
  }
  return {};
}

Response Serve(const RequestHead& req, const RouteContext& ctx, bool close) {
  const std::string& path = req.path;
  if (path == ctx.view.metrics_path) return Metrics(req, ctx, close);
  if (path == "/healthz") return Body(req, close, 200, "ok\n", kTextType);
  if (path == "/readyz") {
    if (ctx.store->Ready()) return Body(req, close, 200, "ready\n", kTextType);
    return Body(req, close, 503, "not ready: the first cycle has not finished\n", kTextType);
  }
  if (path == "/") return Shared(req, ctx, close, Page::kStatus, "text/html; charset=utf-8");
  if (path == "/snapshot.json")
    return Shared(req, ctx, close, Page::kSnapshotJson, "application/json");
  if (path == "/snapshot.md")
    return Shared(req, ctx, close, Page::kSnapshotMarkdown, "text/markdown; charset=utf-8");
  return Body(req, close, 404, "404 page not found\n", kTextType);
}

Response Refuse(const HttpError& error, bool head_only) {
  Response r;
  r.status = error.status;
  r.head_only = head_only;
  r.close = true;
  r.body = std::to_string(error.status) + " " + std::string(StatusText(error.status)) + ": " +
           error.reason + "\n";
  if (error.status == 405)
    WriteHead(r, kTextType, {{"Allow", "GET, HEAD"}});
  else
    WriteHead(r, kTextType);
  return r;
}

Response Unauthorized(bool head_only, bool close) {
  Response r;
  r.status = 401;
  r.head_only = head_only;
  r.close = close;
  r.body = "401 unauthorized\n";
  WriteHead(r, kTextType, {{"WWW-Authenticate", "Basic realm=\"gpuattr\", charset=\"UTF-8\""}});
  return r;
}

std::string_view StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 421:
      return "Misdirected Request";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace gpuattr::http
