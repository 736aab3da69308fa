// A pod's metadata.uid as the ledger keeps it: every pod has a record in the energy ledger and
// one in the GPU-hours counters (16,000 pods at 1,000 nodes, docs/performance.md), and a UID
// kept as text is 36 characters on the heap behind a 32-byte string. The apiserver's UIDs are
// canonical UUIDs (lower-case 8-4-4-4-12 hex): those are kept as their 16 bytes; any other text
// (an older state file, a test, another apiserver) is kept as it is. Either way it compares
// with, and gives back, exactly the text it was made from.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace gpuattr::ledger {

class PodUid {
 public:
  PodUid() = default;
  PodUid(std::string_view text);  // NOLINT(google-explicit-constructor): stands for a string
  PodUid(const std::string& text) : PodUid(std::string_view(text)) {}  // NOLINT
  PodUid(const char* text) : PodUid(std::string_view(text)) {}         // NOLINT

  bool empty() const { return std::holds_alternative<std::monostate>(value_); }
  std::string str() const;

  bool operator==(const PodUid& other) const;
  bool operator==(std::string_view text) const;
  bool operator==(const std::string& text) const { return *this == std::string_view(text); }
  bool operator==(const char* text) const { return *this == std::string_view(text); }

 private:
  using Uuid = std::array<uint8_t, 16>;
  // Other text is shared, never changed: a copied record copies a pointer.
  std::variant<std::monostate, Uuid, std::shared_ptr<const std::string>> value_;
};

std::ostream& operator<<(std::ostream& out, const PodUid& uid);

}  // namespace gpuattr::ledger
