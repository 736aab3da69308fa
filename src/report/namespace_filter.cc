#include "gpuattr/report/namespace_filter.h"

#include <algorithm>

namespace gpuattr::report {
namespace {

template <typename Row, typename Pred>
void EraseUnless(std::vector<Row>& rows, Pred keep) {
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Row& r) { return !keep(r); }),
             rows.end());
}

}  // namespace

void KeepNamespace(StatusView& view, std::string_view ns) {
  EraseUnless(view.namespaces, [&](const NamespaceRow& r) { return r.name == ns; });
  auto pod_in = [&](const PodRow& r) { return r.pod != nullptr && r.pod->id.namespace_ == ns; };
  EraseUnless(view.idle, pod_in);
  EraseUnless(view.top_by_power, pod_in);
  EraseUnless(view.top_by_memory, pod_in);
  EraseUnless(view.pods, pod_in);
  EraseUnless(view.pending, [&](const PendingRow& r) {
    return r.pending != nullptr && r.pending->pod.namespace_ == ns;
  });
}

}  // namespace gpuattr::report
