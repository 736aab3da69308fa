#include "gpuattr/app/options.h"

#include <boost/program_options.hpp>

#include "gpuattr/app/settings.h"
#include "gpuattr/build_info.h"

namespace gpuattr::app {
namespace po = boost::program_options;

namespace {

// The flags of the settings table: switches take no value, lists repeat, the rest take one.
po::options_description Describe() {
  po::options_description desc;
  for (const Setting& s : Settings()) {
    if (s.flag.empty()) continue;
    const std::string name = s.short_flag.empty() ? s.flag : s.flag + "," + s.short_flag;
    if (s.value_name.empty())
      desc.add_options()(name.c_str(), po::bool_switch());
    else if (s.kind == Setting::Kind::kList)
      desc.add_options()(name.c_str(), po::value<std::vector<std::string>>()->composing());
    else
      desc.add_options()(name.c_str(), po::value<std::string>());
  }
  return desc;
}

}  // namespace

Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  po::variables_map vm;
  try {
    // No abbreviations: "--int 5s" must not quietly mean --interval.
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::positional_options_description none;  // gpuattr takes no arguments, only flags
    po::store(po::command_line_parser(args).options(Describe()).positional(none).style(style).run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return MakeError(ErrorCode::kInvalidArgument, e.what());
  }
  CommandLine cl;
  for (const auto& [name, value] : vm) {
    if (value.defaulted()) continue;  // a switch not given
    if (const auto* one = boost::any_cast<std::string>(&value.value()))
      cl.given[name] = {*one};
    else if (const auto* many = boost::any_cast<std::vector<std::string>>(&value.value()))
      cl.given[name] = *many;
    else
      cl.given[name] = {};  // a switch
  }
  if (const auto* file = cl.Values("config.file")) cl.config_file = file->back();
  cl.help = cl.Has("help");
  cl.version = cl.Has("version");
  return cl;
}

std::string VersionText() {
  // The packages' version first (docs/install.md#versions), then what git said when configured.
  std::string text =
      std::string("gpuattr ") + build::kPackageVersion + " (revision " + build::kRevision;
  if (*build::kDescribe != '\0') text += std::string(", git ") + build::kDescribe;
  return text + ")";
}

}  // namespace gpuattr::app
