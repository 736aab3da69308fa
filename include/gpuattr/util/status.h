// Errors are values across module edges: Status for "did it work", Result<T> for "a T or why not".
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gpuattr {

// Broad classes of failure that callers branch on; the message carries the detail for humans.
enum class ErrorCode {
  kInvalidArgument,   // bad flag, bad config key, malformed input
  kNotFound,          // file, object or key absent (HTTP 404)
  kUnauthenticated,   // HTTP 401
  kPermissionDenied,  // HTTP 403
  kUnavailable,       // connection refused, 5xx, DNS; worth retrying
  kTimeout,
  kResourceExhausted,  // body too large, HTTP 429
  kGone,               // HTTP 410 (watch resourceVersion too old)
  kUnsupported,
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  // The status of the HTTP response that failed, set where the response is read (the apiserver's
  // answer, kube/api_client.h); 0 when no response arrived (timeout, connection, credentials).
  int http_status = 0;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)), ok_(false) {}  // NOLINT: implicit by design
  static Status Ok() { return {}; }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }
  ErrorCode code() const { return error_.code; }
  const std::string& message() const { return error_.message; }

 private:
  Error error_;
  bool ok_ = true;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Error e) : v_(std::move(e)) {}                  // NOLINT
  Result(Status s) : v_(s.error()) { assert(!s.ok()); }  // NOLINT: propagate a failed Status

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

namespace internal {
inline Status AsStatus(Status s) { return s; }
template <typename T>
Status AsStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace gpuattr

// Returns from the enclosing function (which returns Status or Result<T>) when `expr`, a Status
// or a Result<T>, failed:  GPUATTR_RETURN_IF_ERROR(reader.Keys(node, path, known));
#define GPUATTR_RETURN_IF_ERROR(...)                                                    \
  do {                                                                                  \
    if (::gpuattr::Status gpuattr_status_ = ::gpuattr::internal::AsStatus(__VA_ARGS__); \
        !gpuattr_status_.ok())                                                          \
      return gpuattr_status_;                                                           \
  } while (false)

// Evaluates `expr` (a Result<T>); returns its error from the enclosing function, or moves its
// value into `lhs`, which may declare a variable:  GPUATTR_ASSIGN_OR_RETURN(auto conns, Load());
#define GPUATTR_ASSIGN_OR_RETURN(lhs, ...) \
  GPUATTR_ASSIGN_OR_RETURN_(GPUATTR_STATUS_CONCAT_(gpuattr_result_, __LINE__), lhs, __VA_ARGS__)
#define GPUATTR_ASSIGN_OR_RETURN_(tmp, lhs, ...) \
  auto tmp = (__VA_ARGS__);                      \
  if (!tmp.ok()) return tmp.error();             \
  lhs = std::move(*tmp)
#define GPUATTR_STATUS_CONCAT_(a, b) GPUATTR_STATUS_CONCAT_INNER_(a, b)
#define GPUATTR_STATUS_CONCAT_INNER_(a, b) a##b
