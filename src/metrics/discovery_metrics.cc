#include "gpuattr/metrics/discovery_metrics.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kExporterUp{
    "gpuattr_exporter_up", MetricType::kGauge,
    "1 when the latest scrape of this exporter (pod proxy, or a query API for "
    "kind=\"prometheus\") succeeded, 0 when it failed (kind=\"unknown\" until classified)."};
constexpr FamilySpec kScrapeDuration{"gpuattr_exporter_scrape_duration_seconds", MetricType::kGauge,
                                     "Duration of the latest scrape of this exporter, in seconds."};
constexpr FamilySpec kScrapeBytes{"gpuattr_exporter_scrape_bytes", MetricType::kGauge,
                                  "Body size of the latest scrape of this exporter, in bytes."};
constexpr FamilySpec kParseErrors{"gpuattr_exporter_parse_errors", MetricType::kGauge,
                                  "Malformed lines in the latest scrape of this exporter."};
constexpr FamilySpec kRejectedLines{
    "gpuattr_exporter_rejected_lines", MetricType::kGauge,
    "Lines of the latest scrape of this exporter that gpuattr dropped, by reason: unknown_pod, "
    "pod_on_other_node (a per-pod label naming no pod of the exporter's node), duplicate_device "
    "(a device, by UUID or by GPU index on the node, another exporter of the kind reports), "
    "over_capacity (a card beyond those its node advertises), bad_value (out of range), "
    "label_too_long, bad_label (control or bidirectional characters), "
    "unknown_node (a query API's series for no node of the cluster), untrusted_target and "
    "no_target (a query API's series whose scrape target may not speak for GPUs, or is unknown)."};
constexpr FamilySpec kCandidates{
    "gpuattr_discovery_candidates", MetricType::kGauge,
    "Discovery candidates by outcome: the probe outcomes (accepted, unrecognised, error, pinned, "
    "untrusted: a pod that may not speak for GPUs, not read), no_port (never probed: no "
    "declared port nor prometheus.io/port annotation) and waiting "
    "(not probed yet: the per-cycle inference probe budget)."};

constexpr FamilySpec kReadPath{
    "gpuattr_discovery_read_path", MetricType::kGauge,
    "1 for how the latest cycle read the GPU series: path=\"exporters\" (one pod-proxy GET per "
    "exporter) or path=\"query_api\" (a Prometheus-compatible query API), and why (reason: "
    "below_threshold, disabled, preferred, no_trusted_query_api, fallback)."};

constexpr FamilySpec kSpecs[] = {kExporterUp,    kScrapeDuration, kScrapeBytes, kParseErrors,
                                 kRejectedLines, kCandidates,     kReadPath};

}  // namespace

std::span<const FamilySpec> DiscoveryFamilySpecs() { return kSpecs; }

// Family by family in table order (kSpecs), as the exposition is (text_writer.h, StreamTo).
void AddDiscoveryFamilies(const discovery::DiscoveryReport& report, FamilyWriter& writer) {
  const auto labels = [&](const discovery::ExporterStatus& e) {
    return Labels{{"cluster", report.cluster},
                  {"namespace", e.namespace_},
                  {"pod", e.pod},
                  {"node", e.node},
                  {"kind", e.kind}};
  };
  for (const discovery::ExporterStatus& e : report.exporters)
    writer.Add(kExporterUp, labels(e), e.up ? 1 : 0);
  for (const discovery::ExporterStatus& e : report.exporters)
    writer.Add(kScrapeDuration, labels(e), e.duration_seconds);
  for (const discovery::ExporterStatus& e : report.exporters)
    writer.Add(kScrapeBytes, labels(e), static_cast<double>(e.bytes));
  for (const discovery::ExporterStatus& e : report.exporters)
    writer.Add(kParseErrors, labels(e), static_cast<double>(e.parse_errors));
  for (const discovery::ExporterStatus& e : report.exporters)
    for (const auto& [reason, n] : e.rejected) {
      Labels r = labels(e);
      r.emplace("reason", reason);
      writer.Add(kRejectedLines, r, static_cast<double>(n));
    }
  for (const auto& [outcome, n] : report.outcome_counts)
    writer.Add(kCandidates, {{"cluster", report.cluster}, {"outcome", outcome}},
               static_cast<double>(n));
  if (!report.read_path_reason.empty())
    writer.Add(kReadPath,
               {{"cluster", report.cluster},
                {"path", report.read_path},
                {"reason", report.read_path_reason}},
               1);
}

const FamilyGroup kDiscoveryGroup{"discovery", kSpecs,
                                  [](const model::Snapshot& snapshot, FamilyWriter& writer) {
                                    for (const model::ClusterSnapshot& c : snapshot.clusters)
                                      if (c.latest.discovery)
                                        AddDiscoveryFamilies(*c.latest.discovery, writer);
                                  }};

}  // namespace gpuattr::metrics
