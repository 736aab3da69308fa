// Power: a card's power is counted once (the max over all its lines: MIG slices and time-sliced
// pods repeat it), then split over the card's reported slices by compute size, so that device
// power always sums to card power, and pods + unattributed always sum to node power.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "gpuattr/attribution/node_shape.h"
#include "gpuattr/attribution/work.h"

namespace gpuattr::attribution {
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

int ModelSliceCount(std::string_view model) {
  std::string upper(model);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view seven : {"A100", "H100", "H200", "H800", "A800", "B200", "GH200", "GB200"})
    if (HasToken(upper, seven)) return 7;
  if (HasToken(upper, "A30")) return 4;
  return 0;
}

int ComputeSize(std::string_view mig_profile) {
  size_t digits = 0;
  while (digits < mig_profile.size() &&
         std::isdigit(static_cast<unsigned char>(mig_profile[digits])))
    ++digits;
  if (digits == 0 || digits >= mig_profile.size() || mig_profile[digits] != 'g') return 1;
  int g = 0;
  auto [p, ec] = std::from_chars(mig_profile.data(), mig_profile.data() + digits, g);
  if (ec != std::errc() || g <= 0) return 1;
  return g;
}

void SplitCardPower(Work& work) {
  for (auto& [key, c] : work.cards) {
    std::optional<double> power;
    std::vector<Device*> slices, wholes;
    for (DeviceWork* d : c.devices) {
      MaxInto(power, d->device.power_watts);  // the card's, as the device's lines repeat it
      (d->device.id.gpu_instance ? slices : wholes).push_back(&d->device);
    }
    c.card.power_watts = power;
    if (!slices.empty()) {
      int total = 0;
      for (const Device* s : slices) total += ComputeSize(s->mig_profile);
      // GPU-equivalents g/G (G: the model's slice count, else Σg), so that a partly partitioned
      // card's slices add up to less than 1; power is the card's, split by g/Σg.
      const int slice_count = std::max(ModelSliceCount(c.card.model), total);
      for (Device* s : slices) {
        double fraction = static_cast<double>(ComputeSize(s->mig_profile)) / total;
        s->gpu_equivalents = static_cast<double>(ComputeSize(s->mig_profile)) / slice_count;
        s->power_watts = power ? std::optional<double>(*power * fraction) : std::nullopt;
      }
      // A whole-card line beside slices describes the parent, not another device's share.
      for (Device* w : wholes) {
        w->gpu_equivalents = 0;
        w->power_watts.reset();
      }
    } else {
      // Normally one device per card; several (the same UUID under two indexes) share it evenly.
      double fraction = 1.0 / static_cast<double>(wholes.size());
      for (Device* w : wholes) {
        w->gpu_equivalents = fraction;
        w->power_watts = power ? std::optional<double>(*power * fraction) : std::nullopt;
      }
    }
  }
}

std::vector<NodePower> NodePowers(const Work& work) {
  std::map<std::string, NodePower> nodes;
  for (const auto& [key, c] : work.cards) {
    NodePower& n = nodes[key.node];
    n.node = key.node;
    AddInto(n.power_watts, c.card.power_watts);
  }
  std::map<std::string, double> attributed;
  for (const auto& [key, link] : work.links)
    if (link.power_watts) attributed[key.second.node] += *link.power_watts;
  std::vector<NodePower> out;
  for (auto& [name, n] : nodes) {
    if (auto it = work.nodes.find(name); it != work.nodes.end()) n.tier = it->second.tier;
    if (n.power_watts) {
      auto it = attributed.find(name);
      double rest = *n.power_watts - (it == attributed.end() ? 0.0 : it->second);
      // Shares that add up to the whole device leave rounding dust, not negative watts.
      if (rest < 0 && rest > -1e-9 * *n.power_watts) rest = 0;
      n.unattributed_power_watts = rest;
    }
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace gpuattr::attribution
