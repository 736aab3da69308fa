// Logging on stderr with levels, one line per event: logfmt (`ts=... level=warn msg="..."
// key=value ...`) or, with --log.format json, one JSON object with the same fields in the same
// order (`{"ts":"...","level":"warn","msg":"...","key":"value"}`, every value a string).
// Never pass a secret (token, key, certificate data) as a field: nothing here can tell.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gpuattr::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LineFormat { kLogfmt, kJson };

struct Field {
  std::string key;
  std::string value;
  Field(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  Field(std::string k, const char* v) : key(std::move(k)), value(v) {}
  Field(std::string k, std::string_view v) : key(std::move(k)), value(v) {}
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  Field(std::string k, N v) : key(std::move(k)), value(std::to_string(v)) {}
};

// "debug", "info", "warn", "error"; false when the name is unknown.
bool ParseLevel(std::string_view name, Level& out);
void SetLevel(Level level);
Level GetLevel();
bool Enabled(Level level);

// "logfmt", "json"; false when the name is unknown.
bool ParseLineFormat(std::string_view name, LineFormat& out);
void SetLineFormat(LineFormat format);
LineFormat GetLineFormat();

// Replaces where finished lines go (stderr by default); tests capture lines with it.
using Sink = std::function<void(std::string_view line)>;
void SetSink(Sink sink);
void ResetSink();

// Formats one logfmt line (without the trailing newline); values are quoted when needed.
std::string Format(Level level, std::string_view msg, std::initializer_list<Field> fields);
// The same line as one JSON object (without the trailing newline).
std::string FormatJson(Level level, std::string_view msg, std::initializer_list<Field> fields);

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
inline void Debug(std::string_view msg, std::initializer_list<Field> f = {}) {
  Write(Level::kDebug, msg, f);
}
inline void Info(std::string_view msg, std::initializer_list<Field> f = {}) {
  Write(Level::kInfo, msg, f);
}
inline void Warn(std::string_view msg, std::initializer_list<Field> f = {}) {
  Write(Level::kWarn, msg, f);
}
inline void Error(std::string_view msg, std::initializer_list<Field> f = {}) {
  Write(Level::kError, msg, f);
}

}  // namespace gpuattr::log
