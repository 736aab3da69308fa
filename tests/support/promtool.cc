#include "support/promtool.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <system_error>

#include "support/paths.h"

namespace gpuattr::testing {

PromtoolCheck PromtoolCheckMetrics(std::string_view exposition) {
  namespace fs = std::filesystem;
  PromtoolCheck r;
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (!fs::exists(kPromtool)) return r;
  r.available = true;
  std::string dir_template = (fs::temp_directory_path() / "gpuattr-promtool-XXXXXX").string();
  if (::mkdtemp(dir_template.data()) == nullptr) {
    r.printed = "cannot create a temporary directory";
    return r;
  }
  const fs::path dir = dir_template, in = dir / "in.prom", out = dir / "out.txt";
  std::ofstream(in, std::ios::binary) << exposition;
  const std::string cmd = std::string(kPromtool) + " check metrics < '" + in.string() + "' > '" +
                          out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.printed = ReadFile(out);
  // The GPU-hours families' unit lint (promtool.h) is the one known complaint.
  static const std::regex kGpuHours(
      R"(gpuattr_[a-z_]+_gpu_hours_total use base unit "seconds" instead of "hours"\n)");
  const std::string rest = std::regex_replace(r.printed, kGpuHours, "");
  if (rest != r.printed && rest.empty() && r.exit_code == 3) r.exit_code = 0;
  r.printed = rest;
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace gpuattr::testing
