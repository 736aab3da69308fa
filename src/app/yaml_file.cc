#include "yaml_file.h"

namespace gpuattr::app {

Status ReadYamlFile(std::string_view file, std::string_view text,
                    const std::function<Status(const YAML::Node&)>& read) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        std::string(file) + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  try {
    return read(root);
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(file) + ": " + e.what());
  }
}

}  // namespace gpuattr::app
