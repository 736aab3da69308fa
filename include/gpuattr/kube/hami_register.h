// HAMi's registration of a node's cards, the node annotation `hami.io/node-nvidia-register`
// (docs/design.md#node-shapes), read once when the node is decoded: it is JSON on HAMi v2.10.0,
// and every stage of every cycle asks for the node's shape, so it is never parsed again per call.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuattr::kube {

inline constexpr std::string_view kHamiRegisterAnnotation = "hami.io/node-nvidia-register";
// Far above any real node (HAMi's default split is 10).
inline constexpr int64_t kHamiMaxSplit = 1024;
inline constexpr int64_t kHamiMaxCards = 64;

struct HamiRegistration {
  bool malformed = false;  // the annotation is there but neither format parses (then 0 cards)
  int64_t cards = 0;
  int64_t split = 0;  // the largest split count of a card
  bool operator==(const HamiRegistration&) const = default;
};

// v2.10.0 writes a JSON array of {"id","count",...}; earlier versions "id,count,mem,cores,type,
// numa,health[,index,mode]:" per card. Untrusted text: bounded, and anything else is `malformed`.
HamiRegistration ReadHamiRegistration(std::string_view text);

}  // namespace gpuattr::kube
