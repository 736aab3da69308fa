#include "gpuattr/scrape/cycle.h"

#include <optional>

#include "gpuattr/scrape/read.h"
#include "gpuattr/trust/vet.h"

namespace gpuattr::scrape {

ScrapeResult ReadCycle(discovery::Discovery& discovery, Fetcher& fetcher,
                       const kube::ClusterObjects& objects, const StopSignal* stop,
                       const kube::ClusterObjects* whole) {
  const discovery::ScrapeOptions& options = discovery.options().scrape;
  QueryApiReading preferred, fallback;
  const std::optional<discovery::QueryApiRead> first = discovery.Begin(objects, whole);
  if (first) preferred = ReadQueryApi(*first, fetcher, objects, stop);
  const std::vector<discovery::PodRead> reads =
      discovery.PlanPodReads(first ? &preferred.outcome : nullptr);
  PodReadings pods = ReadPods(reads, fetcher, options.concurrency, options.limits, stop);
  const std::optional<discovery::QueryApiRead> second =
      discovery.RecordPodReads(reads, pods.outcomes);
  if (second) fallback = ReadQueryApi(*second, fetcher, objects, stop);
  discovery::DiscoveryFindings found = discovery.Finish(second ? &fallback.outcome : nullptr);

  // Readings: the pods' in key order, then the query API's (per node and kind) but for the nodes
  // a pinned exporter pod answered for.
  ScrapeResult out{std::move(found.report), std::move(pods.readings), std::move(found.errors)};
  for (sources::ExporterReadings& e : second ? fallback.readings : preferred.readings)
    if (found.pinned_nodes.count(e.node) == 0) out.readings.push_back(std::move(e));
  // What they may not say is dropped before the stages see it, checked against the whole
  // cluster (a shard's query-API readings name other shards' nodes and pods too).
  trust::VetReadings(out.readings, whole ? *whole : objects);
  AttachRejections(out.readings, out.report.exporters);
  return out;
}

void AttachRejections(const std::vector<sources::ExporterReadings>& readings,
                      std::vector<discovery::ExporterStatus>& exporters) {
  auto row = [&](const sources::ExporterReadings& e) -> discovery::ExporterStatus* {
    for (discovery::ExporterStatus& s : exporters)
      if (s.up && s.namespace_ == e.namespace_ && s.pod == e.pod &&
          (s.kind == "prometheus") == e.from_query_api)
        return &s;
    return nullptr;
  };
  for (discovery::ExporterStatus& s : exporters)
    if (s.up)
      for (std::string_view reason : trust::kRejectReasons)
        s.rejected.try_emplace(std::string(reason), 0);
  for (const sources::ExporterReadings& e : readings)
    if (discovery::ExporterStatus* s = row(e))
      for (const auto& [reason, n] : sources::StatsOf(e.readings).rejected)
        s->rejected[reason] += n;
  for (discovery::ExporterStatus& s : exporters) {
    uint64_t total = 0;
    std::string by;
    for (const auto& [reason, n] : s.rejected) {
      if (n == 0) continue;
      total += n;
      by += (by.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    }
    if (total == 0) continue;
    s.reason +=
        (s.reason.empty() ? "" : "; ") + std::to_string(total) + " line(s) rejected (" + by + ")";
  }
}

}  // namespace gpuattr::scrape
