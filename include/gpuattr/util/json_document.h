// A parsed JSON text as one flat array of nodes (a "tape"): no allocation per value, strings as
// views into the text (or, when they hold escapes, into one side buffer of unescaped bytes).
// Made for the Kubernetes LIST pages and WATCH events gpuattr decodes by the megabyte: nlohmann's
// DOM spent most of its time in malloc and free there (README, Performance).
//
// Strict RFC 8259: UTF-8 is validated, escapes and numbers follow the grammar, nothing may follow
// the root value, nesting is bounded (kMaxDepth) so a hostile body cannot exhaust the stack.
// Objects keep their members in document order; Find returns the last of duplicate keys, as
// nlohmann's DOM keeps it.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr {

enum class JsonType : uint8_t { kNull, kBoolean, kInteger, kFloat, kString, kArray, kObject };

class JsonDocument;
struct JsonMember;

// A value inside a JsonDocument; a handle, valid while its document lives (and is not moved).
// A default-constructed value is null.
class JsonValue {
 public:
  JsonValue() = default;

  JsonType type() const;
  // "null", "boolean", "number", "string", "array", "object" (nlohmann's words).
  const char* type_name() const;
  bool is_null() const { return type() == JsonType::kNull; }
  bool is_boolean() const { return type() == JsonType::kBoolean; }
  bool is_integer() const { return type() == JsonType::kInteger; }  // fits int64, no . or e
  bool is_number() const { return is_integer() || type() == JsonType::kFloat; }
  bool is_string() const { return type() == JsonType::kString; }
  bool is_array() const { return type() == JsonType::kArray; }
  bool is_object() const { return type() == JsonType::kObject; }

  // The value as that type; a neutral value ("", 0, false) when it is another type.
  std::string_view str() const;
  int64_t integer() const;
  double number() const;  // integers too
  bool boolean() const;

  // Members of an object or elements of an array (0 for anything else).
  size_t size() const;
  // The member `key` of an object; null when absent or when this is not an object.
  JsonValue Find(std::string_view key) const;

  // Iterates an array's elements (Elements) or an object's members (Members); empty otherwise.
  template <typename T>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = T;
    Iterator(const JsonDocument* doc, uint32_t index) : doc_(doc), index_(index) {}
    T operator*() const;
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return index_ == o.index_; }

   private:
    const JsonDocument* doc_;
    uint32_t index_;
  };
  template <typename T>
  struct Range {
    Iterator<T> b, e;
    Iterator<T> begin() const { return b; }
    Iterator<T> end() const { return e; }
  };
  Range<JsonValue> Elements() const;
  Range<JsonMember> Members() const;

 private:
  friend class JsonDocument;
  JsonValue(const JsonDocument* doc, uint32_t index) : doc_(doc), index_(index) {}
  const JsonDocument* doc_ = nullptr;
  uint32_t index_ = 0;
};

// An object's member: its name (unescaped) and its value.
struct JsonMember {
  std::string_view key;
  JsonValue value;
};

class JsonDocument {
 public:
  static constexpr int kMaxDepth = 512;

  // Parses `text` (kept by the document). The error says what is wrong and at which byte.
  static Result<JsonDocument> Parse(std::string text);
  // The same into this document, reusing its buffers: a LIST parses page after page, and on
  // this kind of VM faulting in fresh pages costs more than the parse itself. On error the
  // document is empty.
  Status Load(std::string text);

  JsonDocument() = default;
  JsonDocument(JsonDocument&&) = default;
  JsonDocument& operator=(JsonDocument&&) = default;
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;

  JsonValue Root() const { return nodes_.empty() ? JsonValue() : JsonValue(this, 0); }
  size_t node_count() const { return nodes_.size(); }

  // The tape, for JsonValue and its iterators.

  struct Node {
    JsonType type = JsonType::kNull;
    bool unescaped = false;  // a string whose bytes are in unescaped_, not in text_
    uint32_t end = 0;        // index one past this value's subtree
    uint32_t count = 0;      // members or elements; a string's length
    uint32_t offset = 0;     // a string's first byte (in text_ or unescaped_)
    union {
      int64_t i;
      double d;
      bool b;
    } n{};
  };

  const Node& At(uint32_t index) const { return nodes_[index]; }
  std::string_view StringAt(uint32_t index) const;

 private:
  friend class JsonParser;

  std::string text_;
  std::string unescaped_;
  std::vector<Node> nodes_;
};

// ---- inline: the accessors run once per field of every object decoded ---------------------------

inline JsonType JsonValue::type() const {
  return doc_ == nullptr ? JsonType::kNull : doc_->At(index_).type;
}
inline std::string_view JsonValue::str() const {
  return is_string() ? doc_->StringAt(index_) : std::string_view();
}
inline int64_t JsonValue::integer() const { return is_integer() ? doc_->At(index_).n.i : 0; }
inline double JsonValue::number() const {
  return is_integer()                 ? static_cast<double>(doc_->At(index_).n.i)
         : type() == JsonType::kFloat ? doc_->At(index_).n.d
                                      : 0.0;
}
inline bool JsonValue::boolean() const { return is_boolean() && doc_->At(index_).n.b; }
inline size_t JsonValue::size() const {
  return is_array() || is_object() ? doc_->At(index_).count : 0;
}
inline std::string_view JsonDocument::StringAt(uint32_t index) const {
  const Node& n = nodes_[index];
  return std::string_view(n.unescaped ? unescaped_ : text_).substr(n.offset, n.count);
}

template <>
inline JsonValue JsonValue::Iterator<JsonValue>::operator*() const {
  return JsonValue(doc_, index_);
}
template <>
inline JsonMember JsonValue::Iterator<JsonMember>::operator*() const {
  return {doc_->StringAt(index_), JsonValue(doc_, index_ + 1)};
}
template <>
inline JsonValue::Iterator<JsonValue>& JsonValue::Iterator<JsonValue>::operator++() {
  index_ = doc_->At(index_).end;
  return *this;
}
template <>
inline JsonValue::Iterator<JsonMember>& JsonValue::Iterator<JsonMember>::operator++() {
  index_ = doc_->At(index_ + 1).end;  // past the key and its value
  return *this;
}

inline JsonValue::Range<JsonValue> JsonValue::Elements() const {
  if (!is_array()) return {{nullptr, 0}, {nullptr, 0}};
  return {{doc_, index_ + 1}, {doc_, doc_->At(index_).end}};
}
inline JsonValue::Range<JsonMember> JsonValue::Members() const {
  if (!is_object()) return {{nullptr, 0}, {nullptr, 0}};
  return {{doc_, index_ + 1}, {doc_, doc_->At(index_).end}};
}

inline JsonValue JsonValue::Find(std::string_view key) const {
  JsonValue found;
  for (const JsonMember& m : Members())
    if (m.key == key) found = m.value;
  return found;
}

}  // namespace gpuattr
