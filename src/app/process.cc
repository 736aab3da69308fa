#include "gpuattr/app/process.h"

#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuattr::app {

Status KeepSecretsOutOfCoreDumps(bool allow_core_dumps) {
  if (allow_core_dumps) return Status::Ok();
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return MakeError(
        ErrorCode::kInternal,
        std::string("cannot turn core dumps off (prctl PR_SET_DUMPABLE): ") + std::strerror(errno));
  return Status::Ok();
}

bool CoreDumpsAllowed(const char* value) { return value && std::string_view(value) == "1"; }

}  // namespace gpuattr::app
