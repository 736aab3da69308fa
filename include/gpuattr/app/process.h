// What the process does to itself before it holds any credential.
#pragma once

#include <string>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

// The environment variable that keeps core dumps on (value "1"), for debugging a crash.
inline constexpr const char* kAllowCoreDumpsEnv = "GPUATTR_ALLOW_CORE_DUMPS";

// Marks the process not dumpable (prctl PR_SET_DUMPABLE 0) unless `allow_core_dumps`: no core
// file, and no other process of the same user may ptrace it or read /proc/PID/mem, so bearer
// tokens, exec credentials and client keys never leave it that way. Off Linux only the core file
// (RLIMIT_CORE 0; util/platform.h).
// docs/security.md#the-process
Status KeepSecretsOutOfCoreDumps(bool allow_core_dumps);

// True when `value` (the environment variable's, nullptr when unset) asks for core dumps.
bool CoreDumpsAllowed(const char* value);

}  // namespace gpuattr::app
