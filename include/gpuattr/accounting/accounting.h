// GPU-hours (docs/accounting.md): every card's time split among the pods on it, or idle, on three
// bases side by side. Pure: one cycle's attribution, allocation and Kubernetes objects in, per
// card the fraction (ShareCards) or the GPU-hours over an interval (Account) of each pod and of
// idle out. The ledger (ledger/ledger.h) adds them up between successful cycles.
//
//   allocation  what the scheduler handed out: a whole GPU to its holder, a MIG slice g/G of its
//               card, a time-sliced replica 1/r of its device;
//   memory      occupancy: a shared device by memory used ÷ total (else evenly), an exclusive GPU
//               or a slice whole to its holder;
//   usage       compute used: device share × utilisation, split by memory used (else evenly).
//
// Per card and basis, Σ pods + idle = the card (1, or Δt/3600 GPU-hours).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/allocation/types.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::accounting {

enum class Basis { kAllocation = 0, kMemory = 1, kUsage = 2 };
inline constexpr size_t kBases = 3;
inline constexpr std::array<Basis, kBases> kAllBases = {Basis::kAllocation, Basis::kMemory,
                                                        Basis::kUsage};
std::string_view BasisName(Basis basis);  // "allocation", "memory", "usage"
std::optional<Basis> ParseBasis(std::string_view name);

// One number per basis, indexed by Basis.
using PerBasis = std::array<double, kBases>;
inline double& At(PerBasis& v, Basis b) { return v[static_cast<size_t>(b)]; }
inline double At(const PerBasis& v, Basis b) { return v[static_cast<size_t>(b)]; }

struct PodAccount {
  kube::PodId pod;
  std::string uid;  // metadata.uid; empty when the pod object is unknown
  PerBasis value{};
};

// One card: what each pod and idle got, in the unit of `total` (1 for shares, else GPU-hours).
struct CardAccount {
  std::string node;
  std::string gpu;
  std::string uuid;
  std::string model;
  double total = 1;
  std::vector<PodAccount> pods;  // sorted by pod; pods with any basis above 0
  PerBasis idle{};               // total − Σ pods, per basis
  // Every device of the card has a utilisation reading; otherwise the unmeasured devices are idle
  // on `usage` ("not measured" on the status page).
  bool usage_measured = true;
};

struct AccountingInput {
  const attribution::Attribution& attribution;
  const allocation::Allocation& allocation;  // replicas each pod holds
  const kube::ClusterObjects& objects;       // node labels (replicas per device), pod UIDs
};

// The number of compute slices of the card model (docs/accounting.md#mig-slices): 7 on A100,
// H100, H200, B200 (and GH200, GB200), 4 on A30; 0 when the model is not known.
int KnownSliceCount(std::string_view model);

// Per card (in the attribution's card order), the fraction of the card each pod and idle get.
std::vector<CardAccount> ShareCards(const AccountingInput& input);

// The same handed to `sink` one card at a time with the card's index in the attribution. The card
// is a buffer refilled for the next one: the daemon never holds 8,000 cards' copies of their
// node, UUID, model and pod names at once (docs/accounting.md).
void ForEachCardShare(const AccountingInput& input,
                      const std::function<void(size_t card, const CardAccount&)>& sink);

// The same over an interval of `seconds`: GPU-hours (total = seconds / 3600).
std::vector<CardAccount> Account(const AccountingInput& input, double seconds);

}  // namespace gpuattr::accounting
