// Node shapes from labels (docs/design.md#node-shapes). Every value is untrusted text: a value
// that does not parse is reported, never guessed, and disagreeing replica counts resolve to the
// largest, so that a node is never counted as more physical GPUs than it has.
#include "gpuattr/attribution/node_shape.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace gpuattr::attribution {
namespace {

constexpr std::string_view kMigStrategy = "nvidia.com/mig.strategy";
constexpr std::string_view kSharingStrategy = "nvidia.com/gpu.sharing-strategy";
constexpr std::string_view kReplicas = "nvidia.com/gpu.replicas";
constexpr std::string_view kProduct = "nvidia.com/gpu.product";
constexpr std::string_view kGkeSharing = "cloud.google.com/gke-gpu-sharing-strategy";
constexpr std::string_view kGkeClients = "cloud.google.com/gke-max-shared-clients-per-gpu";
constexpr std::string_view kGkePartition = "cloud.google.com/gke-gpu-partition-size";
constexpr std::string_view kGkeAccelerator = "cloud.google.com/gke-accelerator";
constexpr std::string_view kHamiRegister = kube::kHamiRegisterAnnotation;
// Far above any real node (HAMi's default split is 10, GKE's maximum 48 clients).
constexpr int64_t kMaxReplicas = 1024;

const std::string* Label(const kube::Node& node, std::string_view key) {
  auto it = node.labels.find(std::string(key));
  return it == node.labels.end() ? nullptr : &it->second;
}

std::optional<int64_t> PositiveInt(std::string_view v, int64_t max) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > max) return std::nullopt;
  return n;
}

struct Reader {
  const kube::Node& node;
  NodeShape shape;
  std::vector<ShapeKind> kinds;  // every shape a label claims

  void Unrecognised(std::string_view key, std::string_view value) {
    shape.unrecognised.push_back(std::string(key) + "=" + std::string(value));
  }
  void Replicas(int64_t r) { shape.replicas = std::max(shape.replicas, r); }
  void SliceProfile(std::string_view key, const std::string& profile) {
    if (!shape.slice_profile.empty() && shape.slice_profile != profile) {
      Unrecognised(key, profile);  // two profiles for one unit: trust neither
      shape.slice_profile = "-";
      return;
    }
    shape.slice_profile = profile;
  }

  void Nvidia() {
    if (const std::string* v = Label(node, kMigStrategy)) {
      if (*v == "single") {
        kinds.push_back(ShapeKind::kMigSingle);
        const std::string* product = Label(node, kProduct);
        std::string_view p = product ? MigProfileOfProduct(*product) : "";
        if (!p.empty() && LooksLikeMigProfile(p)) SliceProfile(kProduct, std::string(p));
      } else if (*v == "mixed") {
        kinds.push_back(ShapeKind::kMigMixed);
      } else if (*v != "none") {
        Unrecognised(kMigStrategy, *v);
      }
    }
    std::optional<int64_t> r;
    if (const std::string* v = Label(node, kReplicas)) {
      r = PositiveInt(*v, kMaxReplicas);
      if (!r) Unrecognised(kReplicas, *v);
    }
    const std::string* strategy = Label(node, kSharingStrategy);
    if (strategy && *strategy == "mps") {
      kinds.push_back(ShapeKind::kMps);
      if (!r) Unrecognised(kSharingStrategy, *strategy);  // MPS without its replica count
    } else if (strategy && *strategy != "time-slicing" && *strategy != "none") {
      Unrecognised(kSharingStrategy, *strategy);
    } else if (r && *r > 1) {
      kinds.push_back(ShapeKind::kTimeSlicing);
    }
    if (r) Replicas(*r);
  }

  void Gke() {
    if (const std::string* v = Label(node, kGkeSharing)) {
      const bool known = *v == "time-sharing" || *v == "mps";
      if (known)
        kinds.push_back(*v == "mps" ? ShapeKind::kGkeMps : ShapeKind::kGkeTimeSharing);
      else
        Unrecognised(kGkeSharing, *v);
      const std::string* clients = Label(node, kGkeClients);
      std::optional<int64_t> r = clients ? PositiveInt(*clients, kMaxReplicas) : std::nullopt;
      if (r)
        Replicas(*r);
      else if (known)
        Unrecognised(kGkeClients, clients ? *clients : "");
    }
    if (const std::string* v = Label(node, kGkePartition)) {
      if (LooksLikeMigProfile(*v)) {
        kinds.push_back(ShapeKind::kGkePartition);
        SliceProfile(kGkePartition, *v);
      } else {
        Unrecognised(kGkePartition, *v);
      }
    }
    if (const std::string* v = Label(node, kGkeAccelerator)) shape.model_hint = *v;
  }

  void HamiCards() {
    // Read once when the node was decoded (kube/hami_register.h), not per call.
    const std::optional<kube::HamiRegistration>& h = node.hami_registration;
    if (!h) return;
    if (h->malformed) {
      Unrecognised(kHamiRegister, "<malformed>");  // the annotation may be long: not shown
      return;
    }
    kinds.push_back(ShapeKind::kHami);
    shape.hami_cards = h->cards;
    Replicas(h->split);
  }

  // One kind; or slices of one profile whose units are also shared by replicas (the unit is
  // still a slice). Anything else contradicts itself: every sharing label is then named.
  void Decide() {
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    auto has = [&](ShapeKind k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); };
    shape.mps_sharing = has(ShapeKind::kMps) || has(ShapeKind::kGkeMps);
    if (has(ShapeKind::kMigSingle) && has(ShapeKind::kGkePartition))
      std::erase(kinds, ShapeKind::kMigSingle);  // GKE's partitioned nodes may carry both
    const bool slices = has(ShapeKind::kMigSingle) || has(ShapeKind::kGkePartition);
    if (slices && !has(ShapeKind::kHami) && !has(ShapeKind::kMigMixed))
      std::erase_if(kinds, [](ShapeKind k) {
        return k == ShapeKind::kTimeSlicing || k == ShapeKind::kMps ||
               k == ShapeKind::kGkeTimeSharing || k == ShapeKind::kGkeMps;
      });
    if (shape.slice_profile == "-") shape.slice_profile.clear();
    if (kinds.size() > 1 && shape.unrecognised.empty())
      for (std::string_view key :
           {kMigStrategy, kSharingStrategy, kReplicas, kGkeSharing, kGkeClients, kGkePartition})
        if (const std::string* v = Label(node, key)) Unrecognised(key, *v);
    if (kinds.size() > 1 && has(ShapeKind::kHami)) Unrecognised(kHamiRegister, "<registered>");
    if (!shape.unrecognised.empty())
      shape.kind = ShapeKind::kUnrecognised;
    else if (kinds.size() == 1)
      shape.kind = kinds[0];
    std::sort(shape.unrecognised.begin(), shape.unrecognised.end());
    shape.unrecognised.erase(std::unique(shape.unrecognised.begin(), shape.unrecognised.end()),
                             shape.unrecognised.end());
  }
};

}  // namespace

std::string_view ShapeKindName(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::kWhole:
      return "whole";
    case ShapeKind::kMigMixed:
      return "mig-mixed";
    case ShapeKind::kMigSingle:
      return "mig-single";
    case ShapeKind::kTimeSlicing:
      return "time-slicing";
    case ShapeKind::kMps:
      return "mps";
    case ShapeKind::kGkeTimeSharing:
      return "gke-time-sharing";
    case ShapeKind::kGkeMps:
      return "gke-mps";
    case ShapeKind::kGkePartition:
      return "gke-partition";
    case ShapeKind::kHami:
      return "hami";
    case ShapeKind::kUnrecognised:
      return "unrecognised";
  }
  return "unrecognised";
}

std::string_view MigProfileOfProduct(std::string_view product) {
  constexpr std::string_view kMig = "-MIG-";
  const size_t at = product.rfind(kMig);
  return at == std::string_view::npos ? std::string_view() : product.substr(at + kMig.size());
}

bool LooksLikeMigProfile(std::string_view p) {
  p = p.substr(0, p.find('+'));  // "1g.10gb+me": a media-extension variant of 1g.10gb
  if (p.size() < 6 || p[0] < '1' || p[0] > '8' || p[1] != 'g' || p[2] != '.' || !p.ends_with("gb"))
    return false;
  std::string_view gb = p.substr(3, p.size() - 5);
  return !gb.empty() && gb.size() <= 4 &&
         std::all_of(gb.begin(), gb.end(), [](char c) { return c >= '0' && c <= '9'; });
}

NodeShape NodeShapeOf(const kube::Node& node) {
  Reader r{node, {}, {}};
  r.Nvidia();
  r.Gke();
  r.HamiCards();
  r.Decide();
  return std::move(r.shape);
}

std::string UnrecognisedText(const NodeShape& shape) {
  if (shape.unrecognised.empty()) return "";
  std::string out = "unrecognised sharing labels: ";
  for (size_t i = 0; i < shape.unrecognised.size(); ++i)
    out += (i ? ", " : "") + shape.unrecognised[i];
  return out;
}

}  // namespace gpuattr::attribution
