#include "gpuattr/attribution/types.h"

namespace gpuattr::attribution {

std::string DeviceIdText(const DeviceId& id) {
  std::string s = id.node + "/" + id.gpu;
  if (id.gpu_instance) s += ":" + *id.gpu_instance;
  return s;
}

std::string_view SharingName(Sharing sharing) {
  switch (sharing) {
    case Sharing::kExclusive:
      return "exclusive";
    case Sharing::kMig:
      return "mig";
    case Sharing::kTimeSliced:
      return "time_sliced";
    case Sharing::kUnrequested:
      return "unrequested";
    case Sharing::kMps:
      return "mps";
    case Sharing::kHami:
      return "hami";
  }
  return "unknown";
}

std::string_view MethodName(Method method) {
  switch (method) {
    case Method::kProcess:
      return "process";
    case Method::kDcgmPod:
      return "dcgm_pod";
    case Method::kEvenSplit:
      return "even_split";
  }
  return "unknown";
}

}  // namespace gpuattr::attribution
