// What a row of the settings table does (app/settings.h), and the builders that make rows of each
// kind from a description, the Config member the setting sets and the parser of its text.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/settings.h"
#include "gpuattr/util/status.h"
#include "gpuattr/util/yaml_reader.h"

namespace gpuattr::app {

struct SettingOps {
  // The config file's value at `path` (defined, not null) into `cfg`; errors name the path.
  std::function<Status(const yaml::Reader&, const YAML::Node&, const std::string& path, Config&)>
      read;
  // The flag's values (one; several for a repeatable flag; none for a switch) into `cfg`. Errors
  // say what is wrong with a value; the caller puts "--flag: " in front.
  std::function<Status(const std::vector<std::string>&, Config&)> apply;
  // Sets the setting's default (Setting::default_text) in `cfg`.
  std::function<Status(Config&)> reset;
};

// A key of the config file that is no longer read, and where its setting went.
struct RetiredKey {
  std::string_view key;  // full path, "scrape.max_body_bytes"
  std::string_view reason;
};
const std::vector<RetiredKey>& RetiredKeys();

// Sets every setting of the table to its default. Fails only on a bad default in the table (the
// settings test loads every default).
Status ApplyDefaults(Config& cfg);

// The accessor of a Config member, for the table: MEMBER(scrape.limits.body_bytes).
#define GPUATTR_MEMBER(path) \
  [](Config & c) -> auto& { return c.path; }

// One value: a YAML scalar and/or `--flag VALUE`, read by `parse` (string_view -> Result<T>) into
// the member `get` returns. `flag_parse` reads the flag's text where it must be stricter (an empty
// --cluster.name is an error; an empty cluster_name in the file is the default).
template <typename Get, typename Parse, typename FlagParse>
Setting Value(Setting s, Get get, Parse parse, FlagParse flag_parse) {
  auto ops = std::make_shared<SettingOps>();
  ops->read = [get, parse](const yaml::Reader& r, const YAML::Node& node, const std::string& path,
                           Config& cfg) -> Status {
    GPUATTR_ASSIGN_OR_RETURN(get(cfg), r.Parse(node, path, parse));
    return Status::Ok();
  };
  ops->apply = [get, flag_parse](const std::vector<std::string>& values, Config& cfg) -> Status {
    GPUATTR_ASSIGN_OR_RETURN(get(cfg), flag_parse(std::string_view(values.back())));
    return Status::Ok();
  };
  ops->reset = [get, parse, text = s.default_text](Config& cfg) -> Status {
    GPUATTR_ASSIGN_OR_RETURN(get(cfg), parse(std::string_view(text)));
    return Status::Ok();
  };
  s.kind = Setting::Kind::kValue;
  s.ops = std::move(ops);
  return s;
}

template <typename Get, typename Parse>
Setting Value(Setting s, Get get, Parse parse) {
  return Value(std::move(s), get, parse, parse);
}

// A list: a YAML sequence whose items `item` reads ((reader, node, path) -> Result<T>), and/or a
// repeatable flag whose values `apply` turns into the list (replacing the file's). The default is
// a YAML sequence too ("[]").
template <typename Get, typename Item>
Setting List(Setting s, Get get, Item item,
             std::function<Status(const std::vector<std::string>&, Config&)> apply = nullptr) {
  auto ops = std::make_shared<SettingOps>();
  ops->read = [get, item](const yaml::Reader& r, const YAML::Node& node, const std::string& path,
                          Config& cfg) -> Status {
    GPUATTR_ASSIGN_OR_RETURN(auto nodes, r.Sequence(node, path));
    std::remove_reference_t<decltype(get(cfg))> items;
    for (size_t i = 0; i < nodes.size(); ++i) {
      GPUATTR_ASSIGN_OR_RETURN(auto one, item(r, nodes[i], yaml::Index(path, i)));
      items.push_back(std::move(one));
    }
    get(cfg) = std::move(items);
    return Status::Ok();
  };
  ops->apply = std::move(apply);
  ops->reset = [read = ops->read, text = s.default_text, key = s.key](Config& cfg) -> Status {
    yaml::Reader defaults("the default of " + key);
    return defaults.Read(text,
                         [&](const YAML::Node& node) { return read(defaults, node, key, cfg); });
  };
  s.kind = Setting::Kind::kList;
  s.ops = std::move(ops);
  return s;
}

// The values of a repeatable flag, each read by `parse`, replace the list `get` returns.
template <typename Get, typename Parse>
std::function<Status(const std::vector<std::string>&, Config&)> ReplaceWith(Get get, Parse parse) {
  return [get, parse](const std::vector<std::string>& values, Config& cfg) -> Status {
    std::remove_reference_t<decltype(get(cfg))> items;
    for (const std::string& v : values) {
      GPUATTR_ASSIGN_OR_RETURN(auto one, parse(std::string_view(v)));
      items.push_back(std::move(one));
    }
    get(cfg) = std::move(items);
    return Status::Ok();
  };
}

// `--flag` alone: sets the bool member to true (default false).
template <typename Get>
Setting Switch(Setting s, Get get) {
  auto ops = std::make_shared<SettingOps>();
  ops->apply = [get](const std::vector<std::string>&, Config& cfg) -> Status {
    get(cfg) = true;
    return Status::Ok();
  };
  ops->reset = [get](Config& cfg) -> Status {
    get(cfg) = false;
    return Status::Ok();
  };
  s.kind = Setting::Kind::kSwitch;
  s.ops = std::move(ops);
  return s;
}

// A flag about the command line itself (--config.file, --help, --version): no Config member.
inline Setting Meta(Setting s) {
  s.kind = Setting::Kind::kMeta;
  return s;
}

}  // namespace gpuattr::app
