#include "gpuattr/util/yaml_reader.h"

#include <algorithm>

namespace gpuattr::yaml {
namespace {

// " (line 3, column 7)", or "" when yaml-cpp knows no position.
std::string Where(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
         ")";
}

}  // namespace

std::string Join(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return std::string(path) + "." + std::string(key);
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

Error Reader::Fail(std::string_view path, std::string_view problem) const {
  return MakeError(ErrorCode::kInvalidArgument,
                   source_ + ": " + std::string(path.empty() ? "(top level)" : path) + ": " +
                       std::string(problem));
}

Status Reader::Read(std::string_view text,
                    const std::function<Status(const YAML::Node&)>& read) const {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     source_ + ": invalid YAML" + Where(e.mark) + ": " + e.msg);
  }
  try {
    return read(root);
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     source_ + ": unexpected YAML" + Where(e.mark) + ": " + e.msg);
  }
}

Status Reader::Keys(const YAML::Node& node, std::string_view path,
                    const std::vector<std::string_view>& known,
                    const std::vector<RefusedKey>& refused) const {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return Fail(path, "expected a mapping");
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return Fail(path, "non-scalar key");
    const std::string key = kv.first.Scalar();
    auto why = std::find_if(refused.begin(), refused.end(),
                            [&](const RefusedKey& r) { return r.key == key; });
    if (why != refused.end()) return Fail(Join(path, key), why->reason);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return Fail(Join(path, key), "unknown key (known keys here: " + list + ")");
    }
  }
  return Status::Ok();
}

YAML::Node Reader::Child(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  // (Const lookup: a non-const operator[] would add the key to the document.)
  const YAML::Node value = map[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  return value;
}

Result<std::string> Reader::Scalar(const YAML::Node& node, std::string_view path,
                                   std::string_view expected) const {
  if (!node.IsScalar()) return Fail(path, "expected " + std::string(expected));
  return node.Scalar();
}

Result<std::vector<YAML::Node>> Reader::Sequence(const YAML::Node& node, std::string_view path,
                                                 std::string_view expected) const {
  if (!node.IsSequence()) return Fail(path, "expected " + std::string(expected));
  std::vector<YAML::Node> items;
  for (const auto& item : node) items.push_back(item);
  return items;
}

Status Reader::String(const YAML::Node& map, std::string_view path, std::string_view key,
                      std::string& out) const {
  const YAML::Node n = Child(map, key);
  if (!n.IsDefined()) return Status::Ok();
  GPUATTR_ASSIGN_OR_RETURN(out, Scalar(n, Join(path, key), "a string"));
  return Status::Ok();
}

Status Reader::Bool(const YAML::Node& map, std::string_view path, std::string_view key,
                    bool& out) const {
  const YAML::Node n = Child(map, key);
  if (!n.IsDefined()) return Status::Ok();
  bool value = false;
  if (n.IsScalar() && YAML::convert<bool>::decode(n, value)) {
    out = value;
    return Status::Ok();
  }
  return Fail(Join(path, key), "expected true or false");
}

Status Reader::StringList(const YAML::Node& map, std::string_view path, std::string_view key,
                          std::vector<std::string>& out) const {
  const YAML::Node n = Child(map, key);
  if (!n.IsDefined()) return Status::Ok();
  const std::string where = Join(path, key);
  GPUATTR_ASSIGN_OR_RETURN(auto items, Sequence(n, where, "a list of strings"));
  for (const auto& item : items) {
    if (!item.IsScalar()) return Fail(where, "expected a list of strings");
    out.push_back(item.Scalar());
  }
  return Status::Ok();
}

}  // namespace gpuattr::yaml
