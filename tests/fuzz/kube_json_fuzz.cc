// libFuzzer target for what gpuattr reads from the kube-apiserver: the JSON tape parser
// (util/json_document), checked against nlohmann's parser as an oracle (same verdict on every
// input, the same tree on valid ones), then every kube decoder on the root and on each item of a
// list, as the ListWatcher hands them to the cache. A decode error must name the object's kind.
#include <cstdint>
#include <string>

#include "../support/json_compare.h"
#include "gpuattr/kube/decode.h"

#include "fuzz_check.h"

using gpuattr::fuzz::Check;

namespace {

template <typename T>
void DecodeAs(gpuattr::Result<T> (*decode)(gpuattr::JsonValue), gpuattr::JsonValue v,
              const char* kind) {
  auto r = decode(v);
  if (!r.ok()) Check(r.error().message.rfind(kind, 0) == 0, "a decode error names the kind");
}

void DecodeAll(gpuattr::JsonValue v) {
  using namespace gpuattr::kube;
  DecodeAs(&DecodePod, v, "pod");
  DecodeAs(&DecodeNode, v, "node");
  DecodeAs(&DecodeService, v, "service");
  DecodeAs(&DecodeResourceSlice, v, "resourceslice");
  DecodeAs(&DecodeResourceClaim, v, "resourceclaim");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = gpuattr::JsonDocument::Parse(text);
  // A raw NUL byte is never valid JSON (nlohmann stops reading at one, as at the end of a C
  // string). Deeper than our bound: refused by us, read by nlohmann. Otherwise both agree.
  const bool too_deep =
      !doc.ok() && doc.error().message.find("nested too deeply") != std::string::npos;
  if (text.find('\0') != std::string::npos) {
    Check(!doc.ok(), "a raw NUL byte is refused");
  } else if (!too_deep) {
    nlohmann::json theirs = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    Check(doc.ok() == !theirs.is_discarded(), "same verdict as nlohmann");
    if (doc.ok()) Check(gpuattr::testing::JsonDiff(doc->Root(), theirs).empty(), "same tree");
  }
  if (!doc.ok()) {
    Check(doc.error().message.find("invalid JSON at byte ") == 0 ||
              doc.error().code == gpuattr::ErrorCode::kResourceExhausted,
          "a parse error says where");
    return 0;
  }
  gpuattr::JsonValue root = doc->Root();
  DecodeAll(root);
  for (gpuattr::JsonValue item : root.Find("items").Elements()) DecodeAll(item);
  DecodeAll(root.Find("object"));  // a watch event
  return 0;
}
