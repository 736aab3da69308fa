#include "gpuattr/discovery/pins.h"

#include <algorithm>
#include <charconv>

namespace gpuattr::discovery {
namespace {

constexpr std::string_view kForms = "expected ns/pod-prefix:port or ns/svc/name:port";

Error Bad(std::string_view text, std::string_view what) {
  return MakeError(ErrorCode::kInvalidArgument, "target \"" + std::string(text) +
                                                    "\": " + std::string(what) + " (" +
                                                    std::string(kForms) + ")");
}

// Kubernetes object names: lower-case alphanumerics, '-' and '.'. A prefix may end in '-'.
bool IsNameChars(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

Result<PodPin> ParsePodPin(std::string_view text) {
  auto parts = Split(text, '/');
  if (parts.size() != 2) return Bad(text, "a pod pin has exactly one '/'");
  if (!IsNameChars(parts[0]))
    return Bad(text, "namespace \"" + std::string(parts[0]) + "\" is not a valid name");
  size_t colon = parts[1].rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "missing \":port\"");
  std::string_view prefix = parts[1].substr(0, colon);
  std::string_view port_text = parts[1].substr(colon + 1);
  if (!IsNameChars(prefix))
    return Bad(text, "pod prefix \"" + std::string(prefix) + "\" is not a valid name prefix");
  int32_t port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
      port < 1 || port > 65535)
    return Bad(text, "port \"" + std::string(port_text) + "\" is not a number in 1..65535");
  return PodPin{std::string(parts[0]), std::string(prefix), port, std::string(text)};
}

Result<ServicePin> ParseServicePin(std::string_view text) {
  auto parts = Split(text, '/');
  if (parts.size() != 3 || parts[1] != "svc")
    return Bad(text, "a service pin looks like ns/svc/name:port");
  if (!IsNameChars(parts[0]))
    return Bad(text, "namespace \"" + std::string(parts[0]) + "\" is not a valid name");
  size_t colon = parts[2].rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "missing \":port\"");
  std::string_view name = parts[2].substr(0, colon);
  std::string_view port = parts[2].substr(colon + 1);
  if (!IsNameChars(name))
    return Bad(text, "service name \"" + std::string(name) + "\" is not a valid name");
  if (!IsNameChars(port))
    return Bad(text, "port \"" + std::string(port) + "\" is neither a number nor a port name");
  if (std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc() || v < 1 || v > 65535)
      return Bad(text, "port \"" + std::string(port) + "\" is not a number in 1..65535");
  }
  return ServicePin{std::string(parts[0]), std::string(name), std::string(port), std::string(text)};
}

Result<Pins> ParsePins(const std::vector<std::string>& texts) {
  Pins pins;
  for (const std::string& t : texts) {
    size_t slashes = static_cast<size_t>(std::count(t.begin(), t.end(), '/'));
    if (slashes == 2) {
      auto s = ParseServicePin(t);
      if (!s) return s.error();
      pins.services.push_back(std::move(*s));
    } else {
      auto p = ParsePodPin(t);
      if (!p) return p.error();
      pins.pods.push_back(std::move(*p));
    }
  }
  return pins;
}

PinnedCandidates ResolvePins(const Pins& pins, const kube::ClusterObjects& objects) {
  PinnedCandidates out;
  for (const PodPin& pin : pins.pods) {
    PinStatus status{pin.text, "pod", {}, ""};
    // Pods are keyed "ns/name", so the pins' pods are one contiguous range.
    const std::string from = pin.namespace_ + "/" + pin.pod_prefix;
    for (auto it = objects.pods.lower_bound(from);
         it != objects.pods.end() && it->first.compare(0, from.size(), from) == 0; ++it) {
      const kube::Pod& pod = it->second;
      if (pod.phase != "Running") continue;
      Candidate c = MakeCandidate(pod, {pin.port, "pin"}, Role::kExporter, "pin " + pin.text);
      c.pinned = true;
      out.candidates.push_back(std::move(c));
      status.matched_pods.push_back(pod.name);
    }
    status.note = status.matched_pods.empty()
                      ? "no Running pod in namespace " + pin.namespace_ + " starts with \"" +
                            pin.pod_prefix + "\""
                      : std::to_string(status.matched_pods.size()) + " Running pod(s) match";
    out.statuses.push_back(std::move(status));
  }
  for (const ServicePin& pin : pins.services)
    out.statuses.push_back(
        {pin.text, "service", {}, "query API: used only when no exporter pod answers"});
  std::sort(out.candidates.begin(), out.candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.Key() < b.Key(); });
  return out;
}

}  // namespace gpuattr::discovery
