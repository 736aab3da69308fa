#include "gpuattr/util/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace gpuattr::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(LineFormat::kLogfmt)};
std::mutex g_mu;
Sink g_sink;  // guarded by g_mu; empty means stderr

const char* LevelName(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

// `v` in double quotes with quotes, backslashes and control characters escaped (`control`:
// the printf format of another control byte); other bytes as they are (UTF-8 stays UTF-8).
void AppendQuoted(std::string& out, std::string_view v, const char* control) {
  out.push_back('"');
  for (char c : v) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, control, static_cast<unsigned char>(c));
          out.append(buf);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// A logfmt value: bare unless it is empty or has a space, quote, '=', backslash or control byte.
void AppendValue(std::string& out, std::string_view v) {
  bool quote = v.empty();
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      quote = true;
      break;
    }
  }
  if (quote)
    AppendQuoted(out, v, "\\x%02x");
  else
    out.append(v);
}

void AppendJsonString(std::string& out, std::string_view v) { AppendQuoted(out, v, "\\u%04x"); }

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace

bool ParseLevel(std::string_view name, Level& out) {
  if (name == "debug")
    out = Level::kDebug;
  else if (name == "info")
    out = Level::kInfo;
  else if (name == "warn" || name == "warning")
    out = Level::kWarn;
  else if (name == "error")
    out = Level::kError;
  else
    return false;
  return true;
}

void SetLevel(Level level) { g_level.store(static_cast<int>(level)); }
Level GetLevel() { return static_cast<Level>(g_level.load()); }
bool Enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

bool ParseLineFormat(std::string_view name, LineFormat& out) {
  if (name == "logfmt")
    out = LineFormat::kLogfmt;
  else if (name == "json")
    out = LineFormat::kJson;
  else
    return false;
  return true;
}

void SetLineFormat(LineFormat format) { g_format.store(static_cast<int>(format)); }
LineFormat GetLineFormat() { return static_cast<LineFormat>(g_format.load()); }

void SetSink(Sink sink) {
  std::lock_guard lock(g_mu);
  g_sink = std::move(sink);
}
void ResetSink() { SetSink(nullptr); }

std::string Format(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  std::string line = "ts=" + Timestamp() + " level=" + LevelName(level) + " msg=";
  AppendValue(line, msg);
  for (const Field& f : fields) {
    line.push_back(' ');
    line.append(f.key);
    line.push_back('=');
    AppendValue(line, f.value);
  }
  return line;
}

std::string FormatJson(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  std::string line = "{\"ts\":";
  AppendJsonString(line, Timestamp());
  line += ",\"level\":";
  AppendJsonString(line, LevelName(level));
  line += ",\"msg\":";
  AppendJsonString(line, msg);
  for (const Field& f : fields) {
    line.push_back(',');
    AppendJsonString(line, f.key);
    line.push_back(':');
    AppendJsonString(line, f.value);
  }
  line.push_back('}');
  return line;
}

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (!Enabled(level)) return;
  std::string line = GetLineFormat() == LineFormat::kJson ? FormatJson(level, msg, fields)
                                                          : Format(level, msg, fields);
  std::lock_guard lock(g_mu);
  if (g_sink) {
    g_sink(line);
  } else {
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace gpuattr::log
