// Snapshot → metric families. Every family is declared once in a FamilySpec table of its group
// (one file per group under src/metrics/), and every group is listed once in FamilyGroups()
// (src/metrics/families.cc). Groups write series through one interface, FamilyWriter:
// TextWriter (metrics/text_writer.h) streams the exposition text straight into a buffer; it is
// what /metrics serves (RenderText). Tests add a reference writer over prometheus-cpp
// (tests/support/family_collector.h) and check that both print the same text.
// Families are built fresh from each Snapshot, so series of things that vanished disappear on the
// next rendering.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/model/snapshot.h"

namespace gpuattr::metrics {

// The two types gpuattr publishes (Prometheus text format 0.0.4: "# TYPE name gauge|counter").
enum class MetricType { kGauge, kCounter };

// "gauge", "counter".
constexpr std::string_view MetricTypeName(MetricType type) {
  return type == MetricType::kCounter ? "counter" : "gauge";
}

struct FamilySpec {
  std::string_view name;
  MetricType type;        // kGauge or kCounter
  std::string_view help;  // what the number means, with its unit
};

// One label as a pair of views: the name and value must outlive the FamilyWriter::Add call they
// are passed to (they point into the snapshot or at constants). Binding a temporary std::string
// does not compile, so a view cannot dangle.
struct Label {
  constexpr Label(std::string_view n, std::string_view v) : name(n), value(v) {}
  constexpr Label(std::string_view n, const char* v) : name(n), value(v) {}
  Label(std::string_view, std::string&&) = delete;
  constexpr Label() = default;
  std::string_view name;
  std::string_view value;
};

// A label set of at most kMax labels, kept sorted by name (the order the exposition writes them),
// without allocating. Like std::map::emplace, adding a name that is already present keeps the
// first value.
class Labels {
 public:
  static constexpr size_t kMax = 12;

  Labels() = default;
  Labels(std::initializer_list<Label> labels) {
    for (const Label& l : labels) emplace(l.name, l.value);
  }
  // Throws std::length_error past kMax labels (a programming error in a group, never input).
  bool emplace(std::string_view name, std::string_view value) {
    if (size_ < kMax && (size_ == 0 || NameOrder(items()[size_ - 1].name, name) < 0)) {
      new (storage_ + size_ * sizeof(Label)) Label(name, value);  // in order: append
      ++size_;
      return true;
    }
    return Insert(name, value);
  }
  bool emplace(std::string_view name, const char* value) {
    return emplace(name, std::string_view(value));
  }
  bool emplace(std::string_view name, std::string&& value) = delete;  // would dangle

  const Label* begin() const { return items(); }
  const Label* end() const { return items() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // a <=> b as std::string_view orders them (bytes as unsigned char), inline: label names are a
  // few bytes long and a label set is built for every series rendered.
  static int NameOrder(std::string_view a, std::string_view b) {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i])
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
    return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
  }
  bool Insert(std::string_view name, std::string_view value);  // out of order, duplicate, full
  // Raw storage, not kMax constructed Labels: a label set is made for every series rendered, and
  // only its first size_ items are ever read (string_view is trivially copyable).
  const Label* items() const { return std::launder(reinterpret_cast<const Label*>(storage_)); }
  Label* items() { return std::launder(reinterpret_cast<Label*>(storage_)); }
  alignas(Label) unsigned char storage_[kMax * sizeof(Label)];
  size_t size_ = 0;
};

// Where groups put their series. A family with no series is left out of the output; families come
// out in table order (group order, then spec order within the group) whatever order groups add
// series in; series of one family keep the order they were added in.
class FamilyWriter {
 public:
  virtual ~FamilyWriter() = default;
  virtual void Add(const FamilySpec& spec, const Labels& labels, double value) = 0;
};

struct FamilyGroup {
  std::string_view name;                 // "self", "discovery", "devices", ...
  std::span<const FamilySpec> families;  // every family the group may emit
  void (*build)(const model::Snapshot&, FamilyWriter&);
};

// The table of groups, in output order.
std::span<const FamilyGroup* const> FamilyGroups();

class FamilyFilter;  // metrics/family_filter.h

// Prometheus text format 0.0.4 of every group of the table, streamed by TextWriter: the bytes
// /metrics serves for this snapshot (SnapshotStore keeps them rendered, metrics/store.h), without
// the families `filter` excludes (null: none).
std::string RenderText(const model::Snapshot& snapshot, const FamilyFilter* filter = nullptr);

// Groups (one file each).
extern const FamilyGroup kSelfMetricsGroup;  // self_metrics.cc
extern const FamilyGroup kDiscoveryGroup;    // discovery_metrics.cc

}  // namespace gpuattr::metrics
