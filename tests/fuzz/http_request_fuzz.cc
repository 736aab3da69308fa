// libFuzzer target for request heads (http/http_request.h): bytes arrive in chunks of a size
// the first byte picks, into a buffer no larger than the server's; the scanner must decide within
// HeadLimit bytes, and whatever it delimits must parse or be refused without crashing.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/http/http_request.h"

#include "fuzz_check.h"

using gpuattr::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuattr::http;
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  HttpLimits limits;
  limits.max_request_line = 64;  // small caps, so that the fuzzer reaches them
  limits.max_header_bytes = 128;
  limits.max_headers = 4;
  const size_t cap = HeadLimit(limits) + 1;
  HeadScanner scanner(limits);
  std::string buffer;
  HeadScanner::State state = HeadScanner::State::kNeedMore;
  while (state == HeadScanner::State::kNeedMore && !input.empty() && buffer.size() < cap) {
    const size_t n = std::min({chunk, input.size(), cap - buffer.size()});
    buffer.append(input.substr(0, n));
    input.remove_prefix(n);
    state = scanner.Scan(buffer);
  }
  if (buffer.size() >= cap) Check(state != HeadScanner::State::kNeedMore, "decided within cap");
  if (state == HeadScanner::State::kRejected) {
    const int s = scanner.error().status;
    Check(s == 400 || s == 414 || s == 431, "a scanner refusal is 400, 414 or 431");
    return 0;
  }
  if (state != HeadScanner::State::kComplete) return 0;
  Check(scanner.head_size() <= buffer.size() && scanner.head_size() <= HeadLimit(limits),
        "the head fits the buffer and the limit");
  ParsedHead parsed = ParseRequestHead(std::string_view(buffer).substr(0, scanner.head_size()));
  if (!parsed.head) {
    Check(parsed.error.status == 400 || parsed.error.status == 505, "a parse refusal is 400/505");
    return 0;
  }
  const RequestHead& h = *parsed.head;
  Check(!h.method.empty() && !h.target.empty() && !h.path.empty(), "a parsed head is whole");
  Check(h.headers.size() <= limits.max_headers, "no more fields than the cap");
  for (const auto& [name, value] : h.headers)
    Check(name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ:") == std::string::npos,
          "field names are lower-case tokens");
  for (bool loopback : {true, false})
    if (auto e = Admit(h, loopback)) {
      Check(e->status == 400 || e->status == 405 || e->status == 413 || e->status == 421,
            "an admission refusal is 400, 405, 413 or 421");
      Check(loopback || e->status != 421, "421 only when bound to loopback");
    } else {
      Check(h.method == "GET" || h.method == "HEAD", "only GET and HEAD pass");
      Check(!loopback || IsLoopbackAuthority(h.authority), "a passing authority is loopback");
    }
  (void)AcceptsGzip(h);
  (void)h.KeepAlive();
  return 0;
}
