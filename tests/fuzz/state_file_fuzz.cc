// libFuzzer target for the state file decoder: whatever is on disk (truncated, foreign, hostile)
// decodes to a value or an error, and a decoded state encodes and decodes back to itself.
#include <cstdint>
#include <string_view>

#include "gpuattr/ledger/state_codec.h"

#include "fuzz_check.h"

using gpuattr::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuattr::ledger;
  auto decoded = DecodeStateFile(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!decoded.ok()) return 0;
  auto again = DecodeStateFile(EncodeStateFile(*decoded));
  Check(again.ok(), "an encoded state decodes");
  Check(*again == *decoded, "encode/decode round-trips");
  return 0;
}
