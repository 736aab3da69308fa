// The status page's devices by node (cards and their MIG slices), GPU health and pending pods.
#include <string>
#include <vector>

#include "gpuattr/report/text_format.h"
#include "html.h"

namespace gpuattr::report::page {
namespace {

// The pods attributed the device, else "maybe " and its candidate pods.
std::string PodsText(const DeviceRow& d) {
  if (!d.pods.empty()) {
    std::string s;
    for (const auto& p : d.pods) s += (s.empty() ? "" : ", ") + p;
    return s;
  }
  const std::vector<kube::PodId>& cand = d.device->candidate_pods;
  if (!cand.empty()) {
    std::string s = "maybe ";
    for (size_t i = 0; i < cand.size(); ++i) s += (i ? ", " : "") + cand[i].Text();
    return s;
  }
  return "";
}

// The node's name and health, its power and its device counts.
std::string NodeHeading(const StatusView& v, const NodeRow& n) {
  std::string h = "<h3 data-node=\"" + HtmlEscape(NsKey(v, n.cluster, n.node)) + "\">" +
                  HtmlEscape(v.multi_cluster ? n.cluster + " / " + n.node : n.node) +
                  " <span class=\"b " + std::string(health::StateName(n.health)) + "\">" +
                  std::string(health::StateName(n.health)) + "</span></h3>\n<p class=\"note\">";
  h += HtmlEscape(Known(n.power_watts, WattsText)) + " GPU power, " +
       HtmlEscape(Known(n.unattributed_power_watts, WattsText)) + " not attributed to a pod";
  if (n.capacity)
    h += " &middot; devices: " + std::to_string(*n.capacity) + " capacity, " +
         (n.allocatable ? std::to_string(*n.allocatable) : std::string("-")) + " allocatable, " +
         std::to_string(n.requested) + " requested";
  return h + "</p>\n";
}

// The card's row, then a MIG card's slices.
void AddCard(const StatusView& v, const NodeRow& n, const CardRow& c, Table& t) {
  const attribution::Card& card = *c.card;
  const std::string key = NsKey(v, n.cluster, n.node + "/" + card.gpu);
  std::string mem =
      Known(c.memory_used_bytes, BytesText) + " / " + Known(c.memory_total_bytes, BytesText);
  t.Row({Text("GPU " + card.gpu), Text(card.model), Util(c.utilization),
         Cell{HtmlEscape(mem), c.memory_used_bytes, "memory_used_bytes", true},
         Number(card.power_watts, WattsText, "card_power_watts"),
         Number(c.temperature_celsius, CelsiusText, "temperature_celsius"),
         Badge(std::string(health::StateName(c.health))),
         Text(c.mig ? Plural(c.slices, "MIG slice", "MIG slices")
                    : (c.devices.empty() ? "" : PodsText(c.devices[0])))},
        key, "card-row");
  if (!c.mig) return;
  for (const DeviceRow& row : c.devices) {
    const attribution::Device& d = *row.device;
    if (!d.id.gpu_instance) continue;  // the card-level line: shown as the card
    std::string dm =
        Known(d.memory_used_bytes, BytesText) + " / " + Known(d.memory_total_bytes, BytesText);
    t.Row(
        {Text("└ " + card.gpu + ":" + d.id.gpu_instance.value_or("")), Text(d.mig_profile),
         Util(d.utilization), Cell{HtmlEscape(dm), d.memory_used_bytes, "memory_used_bytes", true},
         Number(d.power_watts, WattsText, "device_power_watts"), Text(""), Text(""),
         Text(PodsText(row))},
        key + ":" + d.id.gpu_instance.value_or(""), "slice");
  }
}

}  // namespace

std::string DevicesSection(const StatusView& v) {
  if (v.nodes.empty()) return Section("devices", "Devices by node", Muted("No GPU node seen."));
  std::string h;
  for (const NodeRow& n : v.nodes) {
    h += NodeHeading(v, n);
    if (n.cards.empty()) {
      h += Muted("No exporter reports this node's GPUs.");
      continue;
    }
    Table t("",
            {{"GPU"},
             {"model or profile"},
             {"utilisation", true},
             {"memory", true},
             {"power", true},
             {"temp", true},
             {"health"},
             {"pods", false, false, true}},
            false);
    for (const CardRow& c : n.cards) AddCard(v, n, c, t);
    h += t.Html();
  }
  return Section("devices", "Devices by node", h);
}

std::string HealthSection(const StatusView& v) {
  if (v.health.empty())
    return Section("health", "GPU health",
                   Muted("No GPU or node reports a warning or a critical problem."));
  Table t("health-table", WithCluster(v, {{"GPU"}, {"state"}, {"why", false, true, true}}));
  for (const HealthRow& r : v.health) {
    std::string what, why;
    if (r.gpu.empty()) {
      what = "node " + r.node;
      for (const auto& s : r.reasons) why += (why.empty() ? "" : "<br>") + HtmlEscape(s);
    } else {
      what = r.node + "/" + r.gpu + (r.model.empty() ? "" : " (" + r.model + ")") +
             (r.slices ? ", " + Plural(r.slices, "MIG slice", "MIG slices") : "");
      for (const health::Issue& i : r.issues)
        why += (why.empty() ? "" : "<br>") + std::string(health::SeverityName(i.severity)) + ": " +
               HtmlEscape(i.text);
    }
    t.Row(WithCluster(v, r.cluster,
                      {Text(what), Badge(std::string(health::StateName(r.state))), Html(why)}),
          NsKey(v, r.cluster, r.gpu.empty() ? r.node : r.node + "/" + r.gpu));
  }
  return Section("health", "GPU health",
                 t.Html() +
                     "<p class=\"note\">One line per physical GPU: MIG slices share their "
                     "card's health.</p>\n");
}

std::string PendingSection(const StatusView& v) {
  if (v.pending.empty())
    return Section("pending", "Pending GPU pods", Muted("No pending GPU pods."));
  Table t(
      "pending-table",
      WithCluster(
          v, {{"pod"}, {"pending for", true}, {"requests"}, {"hint"}, {"why", false, true, true}}));
  for (const PendingRow& p : v.pending)
    t.Row(WithCluster(v, p.cluster,
                      {Text(p.pending->pod.Text()),
                       Number(p.pending->age_seconds, DurationText, "pending_seconds"),
                       Text(ResourcesText(p.pending->requested)), Text(p.pending->hint.code),
                       Text(p.pending->hint.text)}),
          NsKey(v, p.cluster, p.pending->pod.Text()));
  return Section("pending", "Pending GPU pods", t.Html());
}

}  // namespace gpuattr::report::page
