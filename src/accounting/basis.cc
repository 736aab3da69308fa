// Basis names and card models' slice counts (docs/accounting.md).
#include <cctype>
#include <string>

#include "gpuattr/accounting/accounting.h"

namespace gpuattr::accounting {
namespace {

// Whether `token` appears in `model` as a whole word ("NVIDIA A30" has A30, "A3000" has not).
bool HasToken(std::string_view model, std::string_view token) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = model.find(token); at != std::string_view::npos;
       at = model.find(token, at + 1)) {
    const bool left = at == 0 || !word(model[at - 1]);
    const size_t end = at + token.size();
    const bool right = end == model.size() || !word(model[end]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace

std::string_view BasisName(Basis basis) {
  switch (basis) {
    case Basis::kAllocation:
      return "allocation";
    case Basis::kMemory:
      return "memory";
    case Basis::kUsage:
      return "usage";
  }
  return "allocation";
}

std::optional<Basis> ParseBasis(std::string_view name) {
  for (Basis b : kAllBases)
    if (BasisName(b) == name) return b;
  return std::nullopt;
}

int KnownSliceCount(std::string_view model) {
  std::string upper(model);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view seven : {"A100", "H100", "H200", "H800", "A800", "B200", "GH200", "GB200"})
    if (HasToken(upper, seven)) return 7;
  if (HasToken(upper, "A30")) return 4;
  return 0;
}

}  // namespace gpuattr::accounting
