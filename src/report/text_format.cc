#include "gpuattr/report/text_format.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "gpuattr/allocation/resources.h"

namespace gpuattr::report {
namespace {

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 → "1,234,567" (integers only).
std::string Grouped(double v) {
  std::string digits = Printf("%.0f", std::fabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 && digits != "0" ? "-" : "") + out;
}

}  // namespace

std::string BytesText(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  size_t unit = 0;
  while (std::fabs(v) >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  // Whole numbers below KiB and for MiB (memory is held in MiB steps); one decimal below 100 of
  // the larger units.
  if (unit <= 2 || std::fabs(v) >= 100) return Printf("%.0f", v) + " " + kUnits[unit];
  std::string s = Printf("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s + " " + kUnits[unit];
}

std::string WattsText(double watts) {
  if (std::fabs(watts) >= 100) return Grouped(watts) + " W";
  return Printf("%.1f", watts) + " W";
}

std::string PercentText(double ratio) {
  const double p = ratio * 100;
  if (p != 0 && std::fabs(p) < 10) return Printf("%.1f", p) + "%";
  return Printf("%.0f", p) + "%";
}

std::string GpuEqText(double g) {
  std::string s = Printf("%.2f", g);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string EnergyText(double joules) {
  const double wh = joules / 3600;
  if (std::fabs(wh) < 1000) return Printf("%.0f", wh) + " Wh";
  const double kwh = wh / 1000;
  if (std::fabs(kwh) < 100) return Printf("%.1f", kwh) + " kWh";
  return Grouped(kwh) + " kWh";
}

std::string DurationText(double seconds) {
  const long long s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return std::to_string(s) + " s";
  const long long m = s / 60;
  if (m < 60) return std::to_string(m) + " min";
  const long long h = m / 60;
  if (h < 24)
    return std::to_string(h) + " h" + (m % 60 ? " " + std::to_string(m % 60) + " min" : "");
  const long long d = h / 24;
  return std::to_string(d) + " d" + (h % 24 ? " " + std::to_string(h % 24) + " h" : "");
}

std::string UtcText(double t) {
  std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string DayText(int64_t day) { return UtcText(static_cast<double>(day) * 86400).substr(0, 10); }

std::string GpuHoursText(double hours) {
  const double a = std::fabs(hours);
  if (a >= 1000) return Grouped(hours);
  std::string s = Printf(a >= 10 ? "%.1f" : "%.2f", hours);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string MoneyText(double amount, const std::string& currency) {
  const double cents = std::round(std::fabs(amount) * 100);
  std::string s = Grouped(std::floor(cents / 100)) + Printf(".%02.0f", std::fmod(cents, 100));
  if (amount < 0 && cents > 0) s = "-" + s;
  return currency.empty() ? s : s + " " + currency;
}

std::string WindowText(int days) {
  return days == 1 ? "today" : "last " + std::to_string(days) + " days";
}

std::string CelsiusText(double c) { return Printf("%.0f", c) + " °C"; }

std::string PrintableText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += '?';  // a C1 control (U+0080..U+009F), e.g. CSI
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string ResourcesText(const allocation::ResourceCounts& counts) {
  std::string out;
  for (const auto& [resource, n] : counts)
    out += (out.empty() ? "" : ", ") + allocation::ShortResourceName(resource) + " " +
           std::to_string(n);
  return out.empty() ? kUnknownText : out;
}

}  // namespace gpuattr::report
