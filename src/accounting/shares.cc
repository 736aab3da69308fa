// Each card's time split among its pods and idle on the three bases (docs/accounting.md). The
// shares of one device are worked out per basis as weights (pod → fraction of the device, never
// more than 1 in total), then scaled by the device's share of its card.
#include <algorithm>
#include <map>
#include <set>
#include <span>
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
// A pod's weight on one device; `uid` its UID when the sharer knows it already (the exporter's
// links), else null (looked up once it is in the output).
struct Weight {
  PodRef pod;
  const std::string* uid;
  double x;
};
using Weights = std::vector<Weight>;
struct PodRefLess {
  bool operator()(PodRef a, PodRef b) const { return *a < *b; }
};

// A device never gives away more than itself.
void Normalise(Weights& w) {
  double sum = 0;
  for (const Weight& p : w) sum += p.x;
  if (sum > 1)
    for (Weight& p : w) p.x /= sum;
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
      : in_(in), kind_of_(in.attribution.devices.size()), dra_(kube::IndexDraGpus(in.objects)) {
    IndexLinks();
    ResolveUids();
    SliceCountsByModel();
    IndexKinds();
    // Replicas matter on time-sliced kinds only: on whole GPUs and MIG slices, no index.
    if (std::any_of(kinds_.begin(), kinds_.end(), [](const Kind& k) { return k.replicas > 1; }))
      for (const allocation::PodRequest& p : in.allocation.pods) {
        replicas_[&p.pod] = &p.replicas;
        requests_by_node_[p.node].push_back(&p);
      }
  }

  // G of the card: the model's slice count, else the largest g of the model's slices seen,
  // never less than Σg of the card's slices. 0 when the card has no slices.
  int SliceCount(const attribution::Card& card) const {
    int g_total = 0;
    for (size_t i : card.devices)
      if (in_.attribution.devices[i].id.gpu_instance)
        g_total += attribution::ComputeSize(in_.attribution.devices[i].mig_profile);
    if (g_total == 0) return 0;
    auto it = slices_by_model_.find(card.model);
    return std::max(it == slices_by_model_.end() ? 0 : it->second, g_total);
  }

  // The device's share of its card (`slices` its card's SliceCount): a whole GPU its
  // gpu_equivalents (1; 0 beside slices), a MIG slice g/G.
  static double CardShare(const Device& d, int slices) {
    if (!d.id.gpu_instance) return d.gpu_equivalents;
    return slices > 0 ? static_cast<double>(attribution::ComputeSize(d.mig_profile)) / slices : 0;
  }

  // No exporter names a pod on the device: a whole GPU that DRA hands out goes to its holders,
  // on allocation and (an exclusive GPU) memory. A slice's DRA device cannot be told from its
  // card's other slices of the same profile: idle. Appends to `w`.
  void DraHolders(size_t i, Weights& w) const {
    const Device& d = in_.attribution.devices[i];
    if (d.id.gpu_instance || !Links(i).empty()) return;
    auto dra = dra_.by_uuid.find(d.uuid);
    if (dra != dra_.by_uuid.end())
      for (const kube::PodId& pod : dra->second)
        w.push_back({&pod, nullptr, 1.0 / static_cast<double>(dra->second.size())});
  }

  // Each basis' weights of device i, into `w` (cleared first: one buffer serves every device).
  void Allocation(size_t i, Weights& w) const;
  void Memory(size_t i, Weights& w) const;
  void Usage(size_t i, Weights& w) const;

 private:
  // The links of device i (the exporter's pods on it).
  std::span<const PodDevice* const> Links(size_t i) const {
    return {links_.data() + link_start_[i], links_.data() + link_start_[i + 1]};
  }
  // The links by device in one array (a counting sort: the attribution sorts them by pod), not a
  // vector per device: 8,000 allocations a cycle fewer.
  void IndexLinks() {
    const std::vector<PodDevice>& all = in_.attribution.pod_devices;
    link_start_.assign(in_.attribution.devices.size() + 1, 0);
    for (const PodDevice& l : all) ++link_start_[l.device + 1];
    for (size_t i = 1; i < link_start_.size(); ++i) link_start_[i] += link_start_[i - 1];
    links_.resize(all.size());
    std::vector<size_t> next(link_start_.begin(), link_start_.end() - 1);
    for (const PodDevice& l : all) links_[next[l.device]++] = &l;
  }

  // The UID of a link's pod (empty when its object is unknown).
  const std::string* UidOf(const PodDevice* l) const {
    return link_uid_[static_cast<size_t>(l - in_.attribution.pod_devices.data())];
  }

  // The UIDs of the links' pods, found by walking the pod objects along with the links (both
  // sorted): a step or two per pod instead of a tree lookup (docs/performance.md). Where the two
  // orders part ("a-b/x" sorts before "a/x" as a key, after it as a pod) or the walk would be
  // long (pods without GPUs between), the key is looked up.
  void ResolveUids() {
    static const std::string kNone;
    const std::map<std::string, kube::Pod>& pods = in_.objects.pods;
    auto at = pods.begin();
    std::string key;
    const std::string* uid = &kNone;
    const kube::PodId* last = nullptr;
    link_uid_.reserve(in_.attribution.pod_devices.size());
    for (const PodDevice& l : in_.attribution.pod_devices) {
      if (last == nullptr || !(l.pod == *last)) {
        last = &l.pod;
        key.assign(l.pod.namespace_).append("/").append(l.pod.name);
        for (int step = 0; at != pods.end() && at->first < key && step < 4; ++step) ++at;
        if (at == pods.end() || at->first != key) at = pods.lower_bound(key);
        uid = at != pods.end() && at->first == key ? &at->second.uid : &kNone;
      }
      link_uid_.push_back(uid);
    }
  }

  // Per model of the cards with slices: its known slice count, else the largest g of its slices
  // seen (once per model, not per device: the model name is upper-cased and searched).
  void SliceCountsByModel() {
    std::map<std::string_view, int> largest_g;
    for (const Device& d : in_.attribution.devices)
      if (d.id.gpu_instance) {
        int& g = largest_g[in_.attribution.cards[d.card].model];
        g = std::max(g, attribution::ComputeSize(d.mig_profile));
      }
    for (const auto& [model, g] : largest_g) {
      const int known = KnownSliceCount(model);
      slices_by_model_.emplace(model, known > 0 ? known : g);
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
        for (const PodDevice* l : Links(i))
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
  std::vector<const PodDevice*> links_;  // by device: device i's are from link_start_[i] on
  std::vector<size_t> link_start_;
  std::vector<const std::string*> link_uid_;  // by link (Attribution::pod_devices)
  std::vector<size_t> kind_of_;               // by device: its index in kinds_
  std::vector<Kind> kinds_;
  kube::DraGpuIndex dra_;  // DRA's holders of whole GPUs
  std::map<PodRef, const allocation::ResourceCounts*, PodRefLess> replicas_;
  std::unordered_map<std::string_view, std::vector<const allocation::PodRequest*>>
      requests_by_node_;
  std::map<std::string_view, int> slices_by_model_;  // card model (of cards with slices) → G
};

// Holders known from the exporter: a time-sliced device with r replicas gives each holder 1/r per
// replica it holds on it (its replicas spread over the devices it is seen on), evenly when r is
// unknown; an exclusive GPU or slice goes to its holder. Replica holders no exporter ties to a
// device share the node's devices of that kind as one pool (AddPool).
void Sharer::Allocation(size_t i, Weights& w) const {
  w.clear();
  const Kind& kind = kinds_[kind_of_[i]];
  const int64_t r = kind.replicas;
  // The holders: every link but those the scheduler handed nothing (two passes, no list).
  size_t holders = 0;
  bool shared = false;
  for (const PodDevice* l : Links(i))
    if (l->sharing != Sharing::kUnrequested) {
      ++holders;
      shared = shared || attribution::IsShared(l->sharing);
    }
  if (holders == 0) DraHolders(i, w);
  for (const PodDevice* l : Links(i)) {
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
    w.push_back({&l->pod, UidOf(l), x});
  }
  if (r > 1 && !kind.hami) AddPool(i, w);
  Normalise(w);
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
    if (held > 0) w.push_back({&p->pod, nullptr, static_cast<double>(held) / (r * n)});
  }
}

// The attribution's share of the device: memory used ÷ total on a shared device (else evenly),
// the whole device for the one pod of an exclusive GPU or slice.
void Sharer::Memory(size_t i, Weights& w) const {
  w.clear();
  DraHolders(i, w);
  for (const PodDevice* l : Links(i)) w.push_back({&l->pod, UidOf(l), l->share});
  Normalise(w);
}

// The device's utilisation, divided among its pods by memory used (normalised), else evenly.
void Sharer::Usage(size_t i, Weights& w) const {
  w.clear();
  const Device& d = in_.attribution.devices[i];
  if (!d.utilization || Links(i).empty()) return;
  const double u = std::clamp(*d.utilization, 0.0, 1.0);
  double memory = 0;
  bool known = true;
  for (const PodDevice* l : Links(i)) {
    known = known && l->memory_used_bytes && *l->memory_used_bytes >= 0;
    if (known) memory += *l->memory_used_bytes;
  }
  for (const PodDevice* l : Links(i)) {
    const double part = known && memory > 0 ? *l->memory_used_bytes / memory
                                            : 1.0 / static_cast<double>(Links(i).size());
    w.push_back({&l->pod, UidOf(l), u * part});
  }
  Normalise(w);
}

// Every (pod, basis, part of the card) of one card, then summed per pod: sorted rather than a map
// of pods, so that no pod's name is copied until it is in the output.
struct Part {
  PodRef pod;
  const std::string* uid;
  Basis basis;
  double x;
};

struct PodSum {
  PodRef pod;
  const std::string* uid;
  PerBasis v{};
};

// Buffers one ShareCards call reuses from card to card (8,000 cards: no allocation per device).
struct Scratch {
  Weights weights;
  std::vector<Part> parts;
  std::vector<PodSum> pods;
};

// Card ci's shares into `out`, refilled in place (its strings keep their buffers from card to
// card).
void ShareCard(const AccountingInput& in, const Sharer& sharer, size_t ci, Scratch& scratch,
               CardAccount& out) {
  const attribution::Card& card = in.attribution.cards[ci];
  out.node = card.node;
  out.gpu = card.gpu;
  out.uuid = card.uuid;
  out.model = card.model;
  out.total = 1;
  out.usage_measured = true;
  // The sort below is stable: each pod's parts add up in the order they came.
  std::vector<Part>& parts = scratch.parts;
  parts.clear();
  const int slices = sharer.SliceCount(card);
  for (size_t i : card.devices) {
    const Device& d = in.attribution.devices[i];
    const double share = Sharer::CardShare(d, slices);
    if (!d.utilization && share > 0) out.usage_measured = false;
    for (Basis basis : kAllBases) {
      Weights& weights = scratch.weights;
      switch (basis) {
        case Basis::kAllocation:
          sharer.Allocation(i, weights);
          break;
        case Basis::kMemory:
          sharer.Memory(i, weights);
          break;
        case Basis::kUsage:
          sharer.Usage(i, weights);
          break;
      }
      for (const Weight& w : weights) parts.push_back({w.pod, w.uid, basis, share * w.x});
    }
  }
  // A pod's parts mostly come by the same pointer (one link, three bases): compared by address
  // first, its name is not read three times over.
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.pod != b.pod && *a.pod < *b.pod; });
  std::vector<PodSum>& pods = scratch.pods;
  pods.clear();
  for (const Part& part : parts) {
    if (pods.empty() || (pods.back().pod != part.pod && !(*pods.back().pod == *part.pod)))
      pods.push_back({part.pod, nullptr});
    if (pods.back().uid == nullptr) pods.back().uid = part.uid;
    At(pods.back().v, part.basis) += part.x;
  }
  PerBasis used{};
  size_t n = 0;
  for (const PodSum& p : pods) {
    if (std::all_of(p.v.begin(), p.v.end(), [](double x) { return x <= 0; })) continue;
    const std::string* uid = p.uid;
    if (uid == nullptr) {  // a holder no exporter names (DRA, unplaced replicas)
      const kube::Pod* obj = in.objects.FindPod(p.pod->namespace_, p.pod->name);
      uid = obj ? &obj->uid : nullptr;
    }
    // Assigned over the last card's entry: no allocation while the names fit its buffers.
    if (n == out.pods.size()) out.pods.emplace_back();
    PodAccount& a = out.pods[n++];
    a.pod.namespace_ = p.pod->namespace_;
    a.pod.name = p.pod->name;
    if (uid) {
      a.uid = *uid;
    } else {
      a.uid.clear();
    }
    a.value = p.v;
    for (size_t b = 0; b < kBases; ++b) used[b] += p.v[b];
  }
  out.pods.resize(n);
  // Shares that add up to the whole card leave rounding dust, not negative idle.
  for (size_t b = 0; b < kBases; ++b) out.idle[b] = std::max(0.0, 1.0 - used[b]);
}

}  // namespace

void ForEachCardShare(const AccountingInput& input,
                      const std::function<void(size_t card, const CardAccount&)>& sink) {
  const Sharer sharer(input);
  Scratch scratch;
  CardAccount card;
  for (size_t ci = 0; ci < input.attribution.cards.size(); ++ci) {
    ShareCard(input, sharer, ci, scratch, card);
    sink(ci, card);
  }
}

std::vector<CardAccount> ShareCards(const AccountingInput& input) {
  std::vector<CardAccount> out;
  out.reserve(input.attribution.cards.size());
  ForEachCardShare(input, [&](size_t, const CardAccount& c) { out.push_back(c); });
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
