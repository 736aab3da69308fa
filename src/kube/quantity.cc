#include "gpuattr/kube/quantity.h"

#include <cctype>
#include <limits>
#include <string>

namespace gpuattr::kube {
namespace {

__extension__ using Int128 = __int128;

// value = mantissa × num / den, all exact.
struct Rational {
  Int128 num = 1;
  Int128 den = 1;
};

Int128 Pow(Int128 base, int exp) {
  Int128 r = 1;
  for (int i = 0; i < exp; ++i) r *= base;
  return r;
}

bool SuffixFactor(std::string_view s, Rational& out) {
  if (s.empty()) return true;
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    auto pos = kBinary.find(s[0]);
    if (pos == std::string_view::npos) return false;
    out.num = Int128{1} << (10 * (pos + 1));
    return true;
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        out.den = Pow(10, 9);
        return true;
      case 'u':
        out.den = Pow(10, 6);
        return true;
      case 'm':
        out.den = Pow(10, 3);
        return true;
      case 'k':
        out.num = Pow(10, 3);
        return true;
      case 'M':
        out.num = Pow(10, 6);
        return true;
      case 'G':
        out.num = Pow(10, 9);
        return true;
      case 'T':
        out.num = Pow(10, 12);
        return true;
      case 'P':
        out.num = Pow(10, 15);
        return true;
      case 'E':
        out.num = Pow(10, 18);
        return true;
      default:
        return false;
    }
  }
  // Decimal exponent: e3, E-2, e+6.
  if (s[0] == 'e' || s[0] == 'E') {
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 2) return false;
    int exp = 0;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      exp = exp * 10 + (c - '0');
    }
    if (exp > 18) return false;
    (negative ? out.den : out.num) = Pow(10, exp);
    return true;
  }
  return false;
}

Error Bad(std::string_view text, std::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "invalid quantity \"" + std::string(text) + "\": " + std::string(why));
}

// Rounds a non-negative num/den up.
Int128 CeilDiv(Int128 num, Int128 den) {
  Int128 q = num / den;
  if (num % den != 0) ++q;
  return q;
}

Result<int64_t> Parse(std::string_view text, Int128 scale) {
  std::string_view s = text;
  if (s.empty()) return Bad(text, "empty");
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  Int128 mantissa = 0;
  Int128 frac_den = 1;
  int digits = 0;
  bool seen_dot = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_dot) return Bad(text, "two decimal points");
      seen_dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (mantissa == 0 && c == '0' && !seen_dot) continue;  // leading zeros carry no digits
    if (++digits > 19) return Bad(text, "too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (seen_dot) frac_den *= 10;
  }
  if (digits == 0 && (i == 0 || (i == 1 && seen_dot))) return Bad(text, "no digits");
  Rational factor;
  if (!SuffixFactor(s.substr(i), factor)) return Bad(text, "unknown suffix");
  // mantissa < 1e19, num ≤ 2^60, scale ≤ 1000: an overflow of 128 bits means far out of range.
  constexpr Int128 kMax = std::numeric_limits<int64_t>::max();
  Int128 num = 0;
  if (__builtin_mul_overflow(mantissa, factor.num, &num) ||
      __builtin_mul_overflow(num, scale, &num)) {
    return Bad(text, "out of range");
  }
  Int128 den = frac_den * factor.den;
  // Round towards +inf like Quantity.Value(): up for positive values, truncate for negative ones.
  Int128 value = negative ? num / den : CeilDiv(num, den);
  if (value > kMax) return Bad(text, "out of range");
  return static_cast<int64_t>(negative ? -value : value);
}

}  // namespace

Result<int64_t> ParseQuantityMilli(std::string_view text) { return Parse(text, 1000); }

Result<int64_t> ParseQuantity(std::string_view text) { return Parse(text, 1); }

}  // namespace gpuattr::kube
