#include "gpuattr/rightsizing/workload.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace gpuattr::rightsizing {
namespace {

// The API group of an apiVersion: "apps/v1" → "apps", "v1" → "" (the core group).
std::string_view Group(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

// "D" when `name` is "D-<suffix>" with a non-empty D, else empty.
std::string_view PrefixBefore(std::string_view name, std::string_view suffix) {
  if (suffix.empty() || name.size() < suffix.size() + 2) return {};
  if (!name.ends_with(suffix) || name[name.size() - suffix.size() - 1] != '-') return {};
  return name.substr(0, name.size() - suffix.size() - 1);
}

// The CronJob of a Job named "C-<8 or more digits>" (the scheduled time in minutes), else empty.
std::string_view CronJobOf(std::string_view job) {
  const size_t dash = job.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return {};
  const std::string_view digits = job.substr(dash + 1);
  if (digits.size() < 8) return {};
  if (!std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return {};
  return job.substr(0, dash);
}

}  // namespace

WorkloadId WorkloadOf(const kube::Pod& pod) {
  const kube::OwnerReference* owner = pod.Controller();
  if (owner == nullptr || owner->kind.empty() || owner->name.empty())
    return {pod.namespace_, "Pod", pod.name};
  const std::string_view group = Group(owner->api_version);
  if (owner->kind == "ReplicaSet" && group == "apps") {
    auto hash = pod.labels.find("pod-template-hash");
    if (hash != pod.labels.end()) {
      const std::string_view deployment = PrefixBefore(owner->name, hash->second);
      if (!deployment.empty()) return {pod.namespace_, "Deployment", std::string(deployment)};
    }
  }
  if (owner->kind == "Job" && group == "batch") {
    const std::string_view cronjob = CronJobOf(owner->name);
    if (!cronjob.empty()) return {pod.namespace_, "CronJob", std::string(cronjob)};
  }
  return {pod.namespace_, owner->kind, owner->name};
}

}  // namespace gpuattr::rightsizing
