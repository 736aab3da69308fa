// Label sets shared by the attribution family groups (devices, pods, namespaces, node power).
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

// cluster, node, gpu and gpu_instance (left out for a whole GPU: absent, not "").
// (Built in name order, so that every label is appended: a label set is made per series.)
inline Labels DeviceLabels(const std::string& cluster, const attribution::DeviceId& id) {
  Labels l{{"cluster", cluster}, {"gpu", id.gpu}};
  if (id.gpu_instance) l.emplace("gpu_instance", *id.gpu_instance);
  l.emplace("node", id.node);
  return l;
}

// A physical card: cluster, node and gpu, never gpu_instance, so a whole GPU's card labels are its
// device labels (the same series) and a MIG card's carry none of its slices' labels.
inline Labels CardLabels(const std::string& cluster, const attribution::Card& card) {
  return Labels{{"cluster", cluster}, {"gpu", card.gpu}, {"node", card.node}};
}

inline Labels PodLabels(const std::string& cluster, const kube::PodId& id) {
  return Labels{{"cluster", cluster}, {"namespace", id.namespace_}, {"pod", id.name}};
}

// Adds a series only when the value is known: absent means unknown, never a fake 0.
inline void AddKnown(FamilyWriter& w, const FamilySpec& spec, const Labels& labels,
                     const std::optional<double>& value) {
  if (value) w.Add(spec, labels, *value);
}

}  // namespace gpuattr::metrics
