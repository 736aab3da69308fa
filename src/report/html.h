// Building blocks of the status page (status_page.cc and its sections): escaped cells that carry
// their raw values, tables that turn into cards on narrow screens, sections and tiles. Private to
// report/.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuattr/kube/pod_id.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/report/view.h"

namespace gpuattr::report::page {

// A number as data-v carries it: every digit, so that sorting and tests read the exact value.
std::string Num(double v);

// One cell: already-escaped HTML, and for numbers the raw value (sorting, tests) and the field
// name it shows (data-k, the exposition's meaning).
struct Cell {
  std::string html;
  std::optional<double> value;
  std::string key;
  bool numeric = false;
};

inline Cell Text(const std::string& text) { return {HtmlEscape(text), std::nullopt, "", false}; }
inline Cell Html(std::string html) { return {std::move(html), std::nullopt, "", false}; }

template <typename F>
Cell Number(const std::optional<double>& v, F format, std::string key) {
  if (!v) return {"-", std::nullopt, std::move(key), true};
  return {HtmlEscape(format(*v)), *v, std::move(key), true};
}

inline Cell Count(double v, std::string key) { return {Num(v), v, std::move(key), true}; }

// A ratio as a bar and a percentage.
Cell Util(const std::optional<double>& v, std::string key = "utilization_ratio");
Cell Badge(const std::string& state);  // "up", "critical", ... in its colour
Cell PodCell(const kube::PodId& id);   // the namespace muted, then the name

struct Column {
  std::string name;
  bool numeric = false;
  bool sortable = true;
  bool wide = false;  // free text: a whole line of its card on narrow screens
};

// A table that becomes a list of cards on narrow screens (every cell carries its column name).
class Table {
 public:
  Table(std::string id, std::vector<Column> columns, bool sortable = true)
      : id_(std::move(id)), columns_(std::move(columns)), sortable_(sortable) {}

  void Row(const std::vector<Cell>& cells, const std::string& key = "",
           const std::string& cls = "");
  size_t size() const { return count_; }
  std::string Html() const;

 private:
  std::string id_;
  std::vector<Column> columns_;
  bool sortable_;
  std::string rows_;
  size_t count_ = 0;
};

std::string Section(const std::string& id, const std::string& title, const std::string& body);
std::string Muted(const std::string& text);
std::string Tile(const std::string& value, const std::string& label, const char* cls = "");

// With more than one cluster, keys and tables name the cluster.
std::string NsKey(const StatusView& v, const std::string& cluster, const std::string& rest);
std::vector<Column> WithCluster(const StatusView& v, std::vector<Column> cols);
std::vector<Cell> WithCluster(const StatusView& v, const std::string& cluster,
                              std::vector<Cell> cells);

// The page's sections, in page order (status_page.cc, status_devices.cc, status_discovery.cc).
std::string ClustersSection(const StatusView& v);
std::string WhoseSection(const StatusView& v);
std::string CostsSection(const StatusView& v);        // status_costs.cc
std::string RightsizingSection(const StatusView& v);  // status_rightsizing.cc
std::string IdleSection(const StatusView& v);
std::string TopSection(const StatusView& v);
std::string DevicesSection(const StatusView& v);
std::string HealthSection(const StatusView& v);
std::string PendingSection(const StatusView& v);
std::string ExportersSection(const StatusView& v);

}  // namespace gpuattr::report::page
