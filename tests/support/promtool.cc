#include "support/promtool.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace gpuattr::testing
