#include "gpuattr/app/process.h"

#include <string_view>

#include "gpuattr/util/platform.h"

namespace gpuattr::app {

Status KeepSecretsOutOfCoreDumps(bool allow_core_dumps) {
  if (allow_core_dumps) return Status::Ok();
  Status s = platform::ForbidCoreDumps();
  if (!s.ok())
    return MakeError(ErrorCode::kInternal, "cannot turn core dumps off (" + s.message() + ")");
  return Status::Ok();
}

bool CoreDumpsAllowed(const char* value) { return value && std::string_view(value) == "1"; }

}  // namespace gpuattr::app
