// Each card's time split among its pods and idle on the three bases (docs/accounting.md). The
// shares of one device are worked out per basis as weights (pod → fraction of the device, never
// more than 1 in total), then scaled by the device's share of its card.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/work.h"
#include "gpuattr/kube/dra_gpus.h"

namespace gpuattr::accounting {
namespace {

using attribution::Device;
using attribution::PodDevice;
using attribution::Sharing;
// Pods by pointer (into the attribution's links, DRA's index or the allocation, which outlive a
// ShareCards call): 16,000 pods' names are not copied three times a cycle (docs/performance.md).
using PodRef = const kube::PodId*;
using Weights = std::vector<std::pair<PodRef, double>>;
struct PodRefLess {
  bool operator()(PodRef a, PodRef b) const { return *a < *b; }
};

// A device never gives away more than itself.
void Normalise(Weights& w) {
  double sum = 0;
  for (const auto& [pod, x] : w) sum += x;
  if (sum > 1)
    for (auto& [pod, x] : w) x /= sum;
}

// A node with a nvidia.com/mig-* resource hands its slices out by profile (mig.strategy=mixed).
bool AdvertisesMigProfiles(const kube::Node& node) {
  for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
    for (const auto& [name, amount] : *list)
      if (name.starts_with("nvidia.com/mig-")) return true;
  return false;
}

// The devices of one node handed out as one device resource: nvidia.com/gpu for a whole GPU and
// for slices on a mig.strategy=single node, nvidia.com/mig-<profile> on a mixed node (its
// replicas are `<resource>.shared`, or the resource itself when the node time-slices it
// unrenamed).
struct Kind {
  const kube::Node* node = nullptr;  // null when the node object is unknown
  std::string resource;
  int64_t replicas = 1;  // per device (the node's labels); 1 without a node object
  bool hami = false;     // HAMi places every pod by its annotation: no pool of unplaced replicas
  size_t devices = 0;
  // Pods the exporter places on devices of this kind (requested ones), with how many such
  // devices each is on; kept for time-sliced kinds only (replicas > 1), the only ones that ask.
  std::map<PodRef, int, PodRefLess> linked;
};

// A (node, profile) key hashed as its two views.
struct KindKeyHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& k) const {
    const std::hash<std::string_view> h;
    return h(k.first) * 31 + h(k.second);
  }
};

// Everything one cycle knows that the shares of a device depend on.
class Sharer {
 public:
  explicit Sharer(const AccountingInput& in)
      : in_(in),
        links_(in.attribution.devices.size()),
        kind_of_(in.attribution.devices.size()),
        dra_(kube::IndexDraGpus(in.objects)) {
    for (const PodDevice& l : in.attribution.pod_devices) links_[l.device].push_back(&l);
    LargestSlices();
    IndexKinds();
    // Replicas matter on time-sliced kinds only: on whole GPUs and MIG slices, no index.
    if (std::any_of(kinds_.begin(), kinds_.end(), [](const Kind& k) { return k.replicas > 1; }))
      for (const allocation::PodRequest& p : in.allocation.pods) {
        replicas_[&p.pod] = &p.replicas;
        requests_by_node_[p.node].push_back(&p);
      }
  }

  // The device's share of its card: a whole GPU its gpu_equivalents (1; 0 beside slices), a MIG
  // slice g/G with G the model's slice count, else the largest g of the model's slices seen,
  // never less than Σg of the card's slices.
  double CardShare(const Device& d) const {
    if (!d.id.gpu_instance) return d.gpu_equivalents;
    const attribution::Card& card = in_.attribution.cards[d.card];
    int g_total = 0;
    for (size_t i : card.devices)
      if (in_.attribution.devices[i].id.gpu_instance)
        g_total += attribution::ComputeSize(in_.attribution.devices[i].mig_profile);
    int slices = KnownSliceCount(card.model);
    if (slices == 0) {
      auto it = largest_g_.find(card.model);
      slices = it == largest_g_.end() ? 0 : it->second;
    }
    slices = std::max(slices, g_total);
    return slices > 0 ? static_cast<double>(attribution::ComputeSize(d.mig_profile)) / slices : 0;
  }

  // No exporter names a pod on the device: a whole GPU that DRA hands out goes to its holders,
  // on allocation and (an exclusive GPU) memory. A slice's DRA device cannot be told from its
  // card's other slices of the same profile: idle.
  Weights DraHolders(size_t i) const {
    const Device& d = in_.attribution.devices[i];
    Weights w;
    if (d.id.gpu_instance || !links_[i].empty()) return w;
    auto dra = dra_.by_uuid.find(d.uuid);
    if (dra != dra_.by_uuid.end())
      for (const kube::PodId& pod : dra->second)
        w.emplace_back(&pod, 1.0 / static_cast<double>(dra->second.size()));
    return w;
  }

  Weights Allocation(size_t i) const;
  Weights Memory(size_t i) const;
  Weights Usage(size_t i) const;

 private:
  void LargestSlices() {
    for (const Device& d : in_.attribution.devices)
      if (d.id.gpu_instance) {
        int& g = largest_g_[in_.attribution.cards[d.card].model];
        g = std::max(g, attribution::ComputeSize(d.mig_profile));
      }
  }
  // Each device's kind, and what the kinds hold. A node's labels are read once per kind, not
  // once per device.
  void IndexKinds() {
    // (node, profile when handed out by profile, else "") → kind; views into the devices.
    std::unordered_map<std::pair<std::string_view, std::string_view>, size_t, KindKeyHash> index;
    std::string_view last_node;
    const kube::Node* node = nullptr;
    bool by_profile = false;
    for (size_t i = 0; i < in_.attribution.devices.size(); ++i) {
      const Device& d = in_.attribution.devices[i];
      if (i == 0 || d.id.node != last_node) {
        last_node = d.id.node;
        node = in_.objects.FindNode(d.id.node);
        by_profile = node && AdvertisesMigProfiles(*node);
      }
      const bool profiled = by_profile && d.id.gpu_instance && !d.mig_profile.empty();
      const std::string_view profile = profiled ? std::string_view(d.mig_profile) : "";
      auto [it, added] = index.try_emplace({d.id.node, profile}, kinds_.size());
      if (added) {
        Kind k;
        k.node = node;
        k.resource = profiled ? "nvidia.com/mig-" + d.mig_profile : "nvidia.com/gpu";
        if (node) {
          k.replicas = attribution::ReplicasLabel(*node, k.resource);
          k.hami = attribution::NodeShapeOf(*node).kind == attribution::ShapeKind::kHami;
        }
        kinds_.push_back(std::move(k));
      }
      Kind& kind = kinds_[it->second];
      kind_of_[i] = it->second;
      ++kind.devices;
      if (kind.replicas > 1)
        for (const PodDevice* l : links_[i])
          if (l->sharing != Sharing::kUnrequested) ++kind.linked[&l->pod];
    }
  }
  // Replicas of `resource` the pod holds (`.shared` and unrenamed); 0 when it holds none.
  int64_t Replicas(const kube::PodId& pod, const std::string& resource) const {
    auto it = replicas_.find(&pod);
    if (it == replicas_.end()) return 0;
    int64_t n = 0;
    for (const std::string& r : {resource, resource + ".shared"})
      if (auto c = it->second->find(r); c != it->second->end()) n += c->second;
    return n;
  }
  void AddPool(size_t i, Weights& w) const;

  const AccountingInput& in_;
  std::vector<std::vector<const PodDevice*>> links_;  // by device
  std::vector<size_t> kind_of_;                       // by device: its index in kinds_
  std::vector<Kind> kinds_;
  kube::DraGpuIndex dra_;  // DRA's holders of whole GPUs
  std::map<PodRef, const allocation::ResourceCounts*, PodRefLess> replicas_;
  std::unordered_map<std::string_view, std::vector<const allocation::PodRequest*>>
      requests_by_node_;
  std::map<std::string, int> largest_g_;  // card model → largest g among its slices
};

// Holders known from the exporter: a time-sliced device with r replicas gives each holder 1/r per
// replica it holds on it (its replicas spread over the devices it is seen on), evenly when r is
// unknown; an exclusive GPU or slice goes to its holder. Replica holders no exporter ties to a
// device share the node's devices of that kind as one pool (AddPool).
Weights Sharer::Allocation(size_t i) const {
  const Kind& kind = kinds_[kind_of_[i]];
  const int64_t r = kind.replicas;
  // The holders: every link but those the scheduler handed nothing (two passes, no list).
  size_t holders = 0;
  bool shared = false;
  for (const PodDevice* l : links_[i])
    if (l->sharing != Sharing::kUnrequested) {
      ++holders;
      shared = shared || attribution::IsShared(l->sharing);
    }
  Weights w = holders == 0 ? DraHolders(i) : Weights{};
  for (const PodDevice* l : links_[i]) {
    if (l->sharing == Sharing::kUnrequested) continue;
    double x = 1.0 / static_cast<double>(holders);
    if (l->sharing == Sharing::kHami) {
      x = l->share;  // its fraction of the card (docs/design.md#node-shapes), not 1/r per slot
    } else if (shared && r > 1) {
      const int64_t held = Replicas(l->pod, kind.resource);
      const int on = kind.linked.at(&l->pod);
      x = held > 0 ? static_cast<double>(held) / on / static_cast<double>(r)
                   : 1.0 / static_cast<double>(r);
    }
    w.emplace_back(&l->pod, x);
  }
  if (r > 1 && !kind.hami) AddPool(i, w);
  Normalise(w);
  return w;
}

// Each replica no exporter places holds 1/(r·n) of each of the node's n devices of its kind.
void Sharer::AddPool(size_t i, Weights& w) const {
  const Kind& kind = kinds_[kind_of_[i]];
  auto on_node = requests_by_node_.find(in_.attribution.devices[i].id.node);
  if (on_node == requests_by_node_.end()) return;
  const double r = static_cast<double>(kind.replicas), n = static_cast<double>(kind.devices);
  for (const allocation::PodRequest* p : on_node->second) {
    if (kind.linked.count(&p->pod)) continue;
    const int64_t held = Replicas(p->pod, kind.resource);
    if (held > 0) w.emplace_back(&p->pod, static_cast<double>(held) / (r * n));
  }
}

// The attribution's share of the device: memory used ÷ total on a shared device (else evenly),
// the whole device for the one pod of an exclusive GPU or slice.
Weights Sharer::Memory(size_t i) const {
  Weights w = DraHolders(i);
  for (const PodDevice* l : links_[i]) w.emplace_back(&l->pod, l->share);
  Normalise(w);
  return w;
}

// The device's utilisation, divided among its pods by memory used (normalised), else evenly.
Weights Sharer::Usage(size_t i) const {
  const Device& d = in_.attribution.devices[i];
  Weights w;
  if (!d.utilization || links_[i].empty()) return w;
  const double u = std::clamp(*d.utilization, 0.0, 1.0);
  double memory = 0;
  bool known = true;
  for (const PodDevice* l : links_[i]) {
    known = known && l->memory_used_bytes && *l->memory_used_bytes >= 0;
    if (known) memory += *l->memory_used_bytes;
  }
  for (const PodDevice* l : links_[i]) {
    const double part = known && memory > 0 ? *l->memory_used_bytes / memory
                                            : 1.0 / static_cast<double>(links_[i].size());
    w.emplace_back(&l->pod, u * part);
  }
  Normalise(w);
  return w;
}

CardAccount ShareCard(const AccountingInput& in, const Sharer& sharer, size_t ci) {
  const attribution::Card& card = in.attribution.cards[ci];
  CardAccount out;
  out.node = card.node;
  out.gpu = card.gpu;
  out.uuid = card.uuid;
  out.model = card.model;
  // Every (pod, basis, hours) part, then summed per pod: sorted rather than a map of pods, so
  // that no pod's name is copied until it is in the output. The sort is stable: each pod's parts
  // add up in the order they came.
  struct Part {
    PodRef pod;
    Basis basis;
    double x;
  };
  std::vector<Part> parts;
  for (size_t i : card.devices) {
    const Device& d = in.attribution.devices[i];
    const double share = sharer.CardShare(d);
    if (!d.utilization && share > 0) out.usage_measured = false;
    const std::pair<Basis, Weights> by_basis[] = {{Basis::kAllocation, sharer.Allocation(i)},
                                                  {Basis::kMemory, sharer.Memory(i)},
                                                  {Basis::kUsage, sharer.Usage(i)}};
    for (const auto& [basis, weights] : by_basis)
      for (const auto& [pod, x] : weights) parts.push_back({pod, basis, share * x});
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return *a.pod < *b.pod; });
  std::vector<std::pair<PodRef, PerBasis>> pods;
  for (const Part& part : parts) {
    if (pods.empty() || !(*pods.back().first == *part.pod)) pods.emplace_back(part.pod, PerBasis{});
    At(pods.back().second, part.basis) += part.x;
  }
  PerBasis used{};
  for (const auto& [pod, v] : pods) {
    if (std::all_of(v.begin(), v.end(), [](double x) { return x <= 0; })) continue;
    const kube::Pod* obj = in.objects.FindPod(pod->namespace_, pod->name);
    out.pods.push_back({*pod, obj ? obj->uid : std::string(), v});
    for (size_t b = 0; b < kBases; ++b) used[b] += v[b];
  }
  // Shares that add up to the whole card leave rounding dust, not negative idle.
  for (size_t b = 0; b < kBases; ++b) out.idle[b] = std::max(0.0, 1.0 - used[b]);
  return out;
}

}  // namespace

std::vector<CardAccount> ShareCards(const AccountingInput& input) {
  const Sharer sharer(input);
  std::vector<CardAccount> out;
  out.reserve(input.attribution.cards.size());
  for (size_t ci = 0; ci < input.attribution.cards.size(); ++ci)
    out.push_back(ShareCard(input, sharer, ci));
  return out;
}

std::vector<CardAccount> Account(const AccountingInput& input, double seconds) {
  std::vector<CardAccount> cards = ShareCards(input);
  const double hours = seconds / 3600;
  for (CardAccount& c : cards) {
    c.total = hours;
    for (PodAccount& p : c.pods)
      for (double& x : p.value) x *= hours;
    for (double& x : c.idle) x *= hours;
  }
  return cards;
}

}  // namespace gpuattr::accounting
