// Reading a YAML configuration file's text: shared by the config file and --web.config.file, so
// both name the file (and the line) the same way when the text is not YAML.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

// Parses `text` and hands its root to `read`. Not YAML: "FILE:LINE: invalid YAML: ...". A
// yaml-cpp exception escaping `read` (every access there is checked first) becomes "FILE: ...".
Status ReadYamlFile(std::string_view file, std::string_view text,
                    const std::function<Status(const YAML::Node&)>& read);

}  // namespace gpuattr::app
