// PodUid: a canonical UUID in 16 bytes, anything else as text (pod_uid.h).
#include "gpuattr/ledger/pod_uid.h"

#include <optional>
#include <ostream>

namespace gpuattr::ledger {
namespace {

constexpr size_t kUuidLength = 36;
constexpr std::array<size_t, 4> kDashes = {8, 13, 18, 23};
constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: its text would not come back the same
}

bool IsDash(size_t i) {
  for (size_t d : kDashes)
    if (i == d) return true;
  return false;
}

// The 16 bytes of a canonical UUID text, else nothing.
std::optional<std::array<uint8_t, 16>> ParseUuid(std::string_view text) {
  if (text.size() != kUuidLength) return std::nullopt;
  std::array<uint8_t, 16> out{};
  size_t byte = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsDash(i)) {
      if (text[i] != '-') return std::nullopt;
      continue;
    }
    const int hi = HexValue(text[i]), lo = i + 1 < text.size() ? HexValue(text[i + 1]) : -1;
    if (hi < 0 || lo < 0 || IsDash(i + 1)) return std::nullopt;
    out[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    ++i;
  }
  return out;
}

std::string FormatUuid(const std::array<uint8_t, 16>& bytes) {
  std::string out;
  out.reserve(kUuidLength);
  for (size_t b = 0; b < bytes.size(); ++b) {
    if (IsDash(out.size())) out += '-';
    out += kHex[bytes[b] >> 4];
    out += kHex[bytes[b] & 0xf];
  }
  return out;
}

}  // namespace

PodUid::PodUid(std::string_view text) {
  if (text.empty()) return;
  if (auto uuid = ParseUuid(text))
    value_ = *uuid;
  else
    value_ = std::make_shared<const std::string>(text);
}

std::string PodUid::str() const {
  if (const auto* uuid = std::get_if<Uuid>(&value_)) return FormatUuid(*uuid);
  if (const auto* text = std::get_if<std::shared_ptr<const std::string>>(&value_)) return **text;
  return {};
}

bool PodUid::operator==(const PodUid& other) const {
  if (value_.index() != other.value_.index()) return false;
  if (const auto* uuid = std::get_if<Uuid>(&value_)) return *uuid == std::get<Uuid>(other.value_);
  if (const auto* text = std::get_if<std::shared_ptr<const std::string>>(&value_))
    return **text == *std::get<std::shared_ptr<const std::string>>(other.value_);
  return true;  // both empty
}

bool PodUid::operator==(std::string_view text) const {
  if (const auto* uuid = std::get_if<Uuid>(&value_)) {
    const auto parsed = ParseUuid(text);
    return parsed && *parsed == *uuid;
  }
  if (const auto* shared = std::get_if<std::shared_ptr<const std::string>>(&value_))
    return **shared == text;
  return text.empty();
}

std::ostream& operator<<(std::ostream& out, const PodUid& uid) { return out << uid.str(); }

}  // namespace gpuattr::ledger
