// Reading YAML documents (gpuattr's config file, --web.config.file, kubeconfigs) with errors that
// name the document and the key path: "config.yaml: scrape.limits.body_bytes: invalid size ...",
// "kubeconfig /home/me/.kube/config: clusters[\"c\"].cluster.server: expected a string".
// yaml-cpp exceptions are caught here; callers see Status and Result<T> only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::yaml {

// "scrape" + "limits" -> "scrape.limits"; "" + "interval" -> "interval".
std::string Join(std::string_view path, std::string_view key);
// "targets" + 2 -> "targets[2]".
std::string Index(std::string_view path, size_t i);

// A key a mapping must not hold, with the reason ("moved to ...", "not supported by gpuattr").
struct RefusedKey {
  std::string_view key;
  std::string_view reason;
};

class Reader {
 public:
  // `source` opens every message: "config.yaml", "web.yml", "kubeconfig /path/config".
  explicit Reader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  // "SOURCE: PATH: problem"; an empty path is "(top level)". Code kInvalidArgument.
  Error Fail(std::string_view path, std::string_view problem) const;

  // Parses `text` and hands its root to `read`. Not YAML: "SOURCE: invalid YAML (line L, column
  // C): why" (the text itself is never quoted: a kubeconfig holds secrets). A yaml-cpp exception
  // escaping `read` becomes an error naming the source too.
  Status Read(std::string_view text, const std::function<Status(const YAML::Node&)>& read) const;

  // A mapping whose keys are all in `known` (or in `refused`, which is an error with its reason).
  // Undefined or null is an empty mapping. Unknown: "PATH.KEY: unknown key (known keys here: a,
  // b)".
  Status Keys(const YAML::Node& node, std::string_view path,
              const std::vector<std::string_view>& known,
              const std::vector<RefusedKey>& refused = {}) const;

  // The value under `key` of a mapping; undefined when `map` is no mapping, lacks the key or holds
  // null there (callers keep their default then).
  static YAML::Node Child(const YAML::Node& map, std::string_view key);

  // The text of a scalar node; anything else is "PATH: expected <expected>".
  Result<std::string> Scalar(const YAML::Node& node, std::string_view path,
                             std::string_view expected = "a single value") const;

  // A scalar parsed by `parse` (std::string_view -> Result<T>); its error is given the path.
  template <typename Fn>
  auto Parse(const YAML::Node& node, std::string_view path, Fn parse) const
      -> decltype(parse(std::string_view())) {
    auto text = Scalar(node, path);
    if (!text.ok()) return text.error();
    auto v = parse(std::string_view(*text));
    if (!v.ok()) return Fail(path, v.error().message);
    return v;
  }

  // The items of a sequence node; anything else is "PATH: expected <expected>".
  Result<std::vector<YAML::Node>> Sequence(const YAML::Node& node, std::string_view path,
                                           std::string_view expected = "a list") const;

  // Fields of a mapping at `path`. An absent or null key leaves `out` as it is.
  Status String(const YAML::Node& map, std::string_view path, std::string_view key,
                std::string& out) const;
  Status Bool(const YAML::Node& map, std::string_view path, std::string_view key, bool& out) const;
  Status StringList(const YAML::Node& map, std::string_view path, std::string_view key,
                    std::vector<std::string>& out) const;

 private:
  std::string source_;
};

}  // namespace gpuattr::yaml
