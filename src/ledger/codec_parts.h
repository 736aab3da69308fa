// The state file codec's building blocks (state_codec.h), shared by its files: the streaming
// pretty printer, and the checked readers of numbers, strings and lists over the parsed tape
// (util/json_document.h; std::runtime_error naming the field, which DecodeStateFile turns into an
// error). Internal.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/ledger/state.h"
#include "gpuattr/util/json_document.h"

namespace gpuattr::ledger::codec {

using nlohmann::json;

// The reading side keeps nlohmann's DOM semantics, which the format was defined with: a key whose
// value is null is present (GetArray, Has), duplicate keys keep the last, objects iterate in key
// order (Items), and messages show values as json::dump shows them (Dump).

// The member `key` of object `j` (the last of duplicates), or none when absent or `j` is no object.
std::optional<JsonValue> Member(const JsonValue& j, std::string_view key);
inline bool Has(const JsonValue& j, std::string_view key) { return Member(j, key).has_value(); }
// An object's members in key order, one per key (the last of duplicates), as nlohmann's items().
std::vector<JsonMember> Items(const JsonValue& j);
// The value as nlohmann's json::dump() writes it (error messages only).
std::string Dump(const JsonValue& v);

// A number in [0, 1e18] at `key`, or absent. Anything else is a format error.
std::optional<double> GetOptional(const JsonValue& j, std::string_view key,
                                  const std::string& where);
double GetNumber(const JsonValue& j, std::string_view key, const std::string& where);
std::string GetString(const JsonValue& j, std::string_view key, const std::string& where);
JsonValue GetArray(const JsonValue& j, std::string_view key,
                   const std::string& where);  // absent: []
accounting::PerBasis GetPerBasis(const JsonValue& j, std::string_view key,
                                 const std::string& where);
GpuHours GetGpuHours(const JsonValue& j, const std::string& where);
KeySet GetStrings(const JsonValue& j, std::string_view key, const std::string& where);

// Writes what nlohmann's json::dump(1, ' ', false, error_handler_t::replace) writes for the same
// document, member by member, without building the document (16,000 pods made a DOM of ~26 MB):
// objects' members must come in key order, as nlohmann's std::map keeps them. Output goes to the
// sink in chunks of about kChunk bytes.
class PrettyJson {
 public:
  explicit PrettyJson(const std::function<void(std::string_view)>& sink) : sink_(sink) {}

  void Open(char bracket) {
    out_ += bracket;
    empty_.push_back(true);
  }
  void Close(char bracket) {
    const bool empty = empty_.back();
    empty_.pop_back();
    if (!empty) {
      out_ += '\n';
      out_.append(empty_.size(), ' ');
    }
    out_ += bracket;
    if (out_.size() >= kChunk) Flush();
  }
  // Before an element of an array.
  void Element() {
    if (empty_.back())
      out_ += '\n';
    else
      out_ += ",\n";
    empty_.back() = false;
    out_.append(empty_.size(), ' ');
  }
  PrettyJson& Key(std::string_view key) {
    Element();
    String(key);
    out_ += ": ";
    return *this;
  }
  void String(std::string_view s) {
    const bool plain = std::all_of(
        s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
    if (plain) {
      out_ += '"';
      out_ += s;
      out_ += '"';
    } else {  // escapes and UTF-8 repair exactly as nlohmann does them
      out_ += json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  void Number(double v) {
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    char buf[64];
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, static_cast<size_t>(end - buf));
  }
  void Integer(int v) { out_ += std::to_string(v); }
  void Raw(std::string_view s) { out_ += s; }
  void Flush() {
    if (!out_.empty()) sink_(out_);
    out_.clear();
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  const std::function<void(std::string_view)>& sink_;
  std::string out_;
  std::vector<bool> empty_;  // per open object or array: nothing written in it yet
};

void EncodePerBasis(PrettyJson& j, const char* key, const accounting::PerBasis& v);
void EncodeGpuHours(PrettyJson& j, const GpuHours& g);
void EncodeStrings(PrettyJson& j, const char* key, const KeySet& strings);

// The accounting's "days" (docs/accounting.md#daily-totals), and back.
void EncodeDays(PrettyJson& j, const std::map<UtcDay, DayTotals>& days);
std::map<UtcDay, DayTotals> DecodeDays(const JsonValue& j, const std::string& where);

}  // namespace gpuattr::ledger::codec
