// `kubectl gpuattr -n NAMESPACE` (docs/install.md#kubectl-gpuattr): the view of one namespace. Its
// namespace row, its pods (idle holders, top pods, every pod) and its pending pods stay; the
// cluster lines, the headline totals, the nodes, cards and health stay whole (a card is shared
// across namespaces, and its health is everyone's).
#pragma once

#include <string_view>

#include "gpuattr/report/view.h"

namespace gpuattr::report {

void KeepNamespace(StatusView& view, std::string_view ns);

}  // namespace gpuattr::report
