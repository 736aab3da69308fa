#include "gpuattr/util/json_document.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace gpuattr {

const char* JsonValue::type_name() const {
  switch (type()) {
    case JsonType::kNull:
      return "null";
    case JsonType::kBoolean:
      return "boolean";
    case JsonType::kInteger:
    case JsonType::kFloat:
      return "number";
    case JsonType::kString:
      return "string";
    case JsonType::kArray:
      return "array";
    case JsonType::kObject:
      return "object";
  }
  return "null";
}

// Recursive descent over the text, appending nodes in document order (a value's children follow
// it; its `end` is filled when they are done). Errors are thrown as ParseError inside this file
// and returned as values by JsonDocument::Parse.
class JsonParser {
 public:
  explicit JsonParser(JsonDocument& doc) : doc_(doc), p_(doc.text_.data()) {
    begin_ = p_;
    end_ = p_ + doc.text_.size();
  }

  void Run() {
    SkipSpace();
    Value(0);
    SkipSpace();
    if (p_ != end_) Fail("unexpected text after the value");
  }

  struct ParseError {
    std::string what;
    size_t offset;
  };

 private:
  using Node = JsonDocument::Node;

  [[noreturn]] void Fail(const char* what) const {
    throw ParseError{what, static_cast<size_t>(p_ - begin_)};
  }

  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  uint32_t Offset(const char* at) const { return static_cast<uint32_t>(at - begin_); }

  uint32_t Push(JsonType type, const char* at) {
    Node n;
    n.type = type;
    n.offset = Offset(at);
    doc_.nodes_.push_back(n);
    return static_cast<uint32_t>(doc_.nodes_.size() - 1);
  }

  void Close(uint32_t index) { doc_.nodes_[index].end = static_cast<uint32_t>(doc_.nodes_.size()); }

  void Value(int depth) {
    if (p_ == end_) Fail("unexpected end of input, expected a value");
    switch (*p_) {
      case '{':
        return Container(JsonType::kObject, depth + 1);
      case '[':
        return Container(JsonType::kArray, depth + 1);
      case '"':
        return String();
      case 't':
        return Literal("true", JsonType::kBoolean, true);
      case 'f':
        return Literal("false", JsonType::kBoolean, false);
      case 'n':
        return Literal("null", JsonType::kNull, false);
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return Number();
        Fail("unexpected character, expected a value");
    }
  }

  void Literal(std::string_view word, JsonType type, bool value) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      Fail("invalid literal");
    uint32_t i = Push(type, p_);
    doc_.nodes_[i].n.b = value;
    p_ += word.size();
    Close(i);
  }

  // An object or an array: its bracket, members (name, colon, value) or values separated by
  // commas, the closing bracket.
  void Container(JsonType type, int depth) {
    const bool object = type == JsonType::kObject;
    const char close = object ? '}' : ']';
    if (depth > JsonDocument::kMaxDepth) Fail("nested too deeply");
    uint32_t i = Push(type, p_);
    ++p_;
    SkipSpace();
    uint32_t count = 0;
    if (p_ != end_ && *p_ == close) {
      ++p_;
    } else {
      for (;;) {
        if (object) {
          if (p_ == end_ || *p_ != '"') Fail("expected a member name in quotes");
          String();
          SkipSpace();
          if (p_ == end_ || *p_ != ':') Fail("expected ':' after a member name");
          ++p_;
          SkipSpace();
        }
        Value(depth);
        ++count;
        SkipSpace();
        if (p_ == end_)
          Fail(object ? "unexpected end of input in an object"
                      : "unexpected end of input in an array");
        if (*p_ == ',') {
          ++p_;
          SkipSpace();
          continue;
        }
        if (*p_ == close) {
          ++p_;
          break;
        }
        Fail(object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
      }
    }
    doc_.nodes_[i].count = count;
    Close(i);
  }

  // Plain bytes run until a quote, a backslash, a control character or a non-ASCII byte.
  static bool Plain(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\' && c < 0x80; }

  void String() {
    uint32_t i = Push(JsonType::kString, p_);
    ++p_;
    const char* start = p_;
    std::string* out = nullptr;  // set once an escape is met
    size_t out_start = 0;
    for (;;) {
      const char* run = p_;
      while (p_ != end_ && Plain(static_cast<unsigned char>(*p_))) ++p_;
      if (out != nullptr) out->append(run, p_);
      if (p_ == end_) Fail("unexpected end of input in a string");
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') break;
      if (c < 0x20) Fail("control character in a string (must be escaped)");
      if (c >= 0x80) {
        const char* cp = p_;
        Utf8();
        if (out != nullptr) out->append(cp, p_);
        continue;
      }
      // A backslash: from here on the string's bytes go to the side buffer.
      if (out == nullptr) {
        out = &doc_.unescaped_;
        out_start = out->size();
        out->append(start, p_);
      }
      Escape(*out);
    }
    Node& n = doc_.nodes_[i];
    if (out != nullptr) {
      n.unescaped = true;
      n.offset = static_cast<uint32_t>(out_start);
      n.count = static_cast<uint32_t>(out->size() - out_start);
    } else {
      n.offset = Offset(start);
      n.count = static_cast<uint32_t>(p_ - start);
    }
    ++p_;  // the closing quote
    n.end = i + 1;
  }

  // One UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
  void Utf8() {
    auto byte = [&](size_t k) -> unsigned char {
      return p_ + k < end_ ? static_cast<unsigned char>(p_[k]) : 0;
    };
    auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
      unsigned char b = byte(k);
      return b >= lo && b <= hi;
    };
    unsigned char c = byte(0);
    size_t len = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = cont(1) ? 2 : 0;
    } else if (c == 0xE0) {
      len = cont(1, 0xA0) && cont(2) ? 3 : 0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      len = cont(1) && cont(2) ? 3 : 0;
    } else if (c == 0xED) {
      len = cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    } else if (c == 0xF0) {
      len = cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    } else if (c >= 0xF1 && c <= 0xF3) {
      len = cont(1) && cont(2) && cont(3) ? 4 : 0;
    } else if (c == 0xF4) {
      len = cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    }
    if (len == 0) Fail("invalid UTF-8 in a string");
    p_ += len;
  }

  unsigned Hex4() {
    if (end_ - p_ < 4) Fail("unexpected end of input in a \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        Fail("invalid \\u escape (want 4 hex digits)");
    }
    return v;
  }

  static void AppendUtf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  void Escape(std::string& out) {
    ++p_;  // the backslash
    if (p_ == end_) Fail("unexpected end of input in an escape");
    char c = *p_++;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out += c;
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u': {
        unsigned cp = Hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) Fail("lone low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
            Fail("high surrogate without its low half");
          p_ += 2;
          unsigned lo = Hex4();
          if (lo < 0xDC00 || lo > 0xDFFF) Fail("high surrogate without its low half");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        AppendUtf8(out, cp);
        return;
      }
      default:
        --p_;
        Fail("invalid escape");
    }
  }

  void Number() {
    const char* start = p_;
    bool integral = true;
    if (*p_ == '-') ++p_;
    auto digits = [&] {
      const char* d = p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ - d;
    };
    if (p_ == end_) Fail("unexpected end of input in a number");
    if (*p_ == '0') {
      ++p_;
    } else if (digits() == 0) {
      Fail("invalid number");
    }
    if (p_ != end_ && *p_ == '.') {
      integral = false;
      ++p_;
      if (digits() == 0) Fail("invalid number: digits must follow '.'");
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integral = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (digits() == 0) Fail("invalid number: digits must follow the exponent");
    }
    uint32_t i = Push(JsonType::kInteger, start);
    Node& n = doc_.nodes_[i];
    if (integral) {
      auto [ptr, ec] = std::from_chars(start, p_, n.n.i);
      if (ec == std::errc() && ptr == p_) {
        Close(i);
        return;
      }
      // Beyond int64: kept as a floating-point number, as nlohmann keeps what its types cannot.
    }
    double d = 0;
    auto [ptr, ec] = std::from_chars(start, p_, d);
    if (ec == std::errc::result_out_of_range) {
      // Underflow reads as strtod reads it (zero or a denormal); overflow is refused, as
      // nlohmann refuses it: no finite double holds it.
      d = std::strtod(std::string(start, p_).c_str(), nullptr);
      if (!std::isfinite(d)) Fail("number out of range");
    } else if (ec != std::errc() || ptr != p_) {
      Fail("invalid number");
    }
    n.type = JsonType::kFloat;
    n.n.d = d;
    Close(i);
  }

  JsonDocument& doc_;
  const char* p_;
  const char* begin_;
  const char* end_;
};

Result<JsonDocument> JsonDocument::Parse(std::string text) {
  JsonDocument doc;
  Status s = doc.Load(std::move(text));
  if (!s.ok()) return s;
  return doc;
}

Status JsonDocument::Load(std::string text) {
  nodes_.clear();
  unescaped_.clear();
  text_ = std::move(text);
  if (text_.size() >= std::numeric_limits<uint32_t>::max()) {
    text_.clear();
    return MakeError(ErrorCode::kResourceExhausted, "JSON text larger than 4 GiB");
  }
  // Kubernetes objects run at about one value per 16-20 bytes; the guess saves regrowth.
  nodes_.reserve(text_.size() / 16 + 4);
  try {
    JsonParser(*this).Run();
    return Status::Ok();
  } catch (const JsonParser::ParseError& e) {
    nodes_.clear();
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid JSON at byte " + std::to_string(e.offset) + ": " + e.what);
  } catch (const std::bad_alloc&) {
    nodes_.clear();
    return MakeError(ErrorCode::kResourceExhausted, "out of memory parsing JSON");
  }
}

}  // namespace gpuattr
