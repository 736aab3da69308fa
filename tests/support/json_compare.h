// Compares a gpuattr JsonValue with nlohmann's DOM of the same text: the oracle of the JSON
// parser's unit test and fuzz target. Header-only, so that the fuzz target (linked against the
// core library alone) can use it.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuattr/util/json_document.h"

namespace gpuattr::testing {

// "" when equal; otherwise the path of the first difference and what differs. Integers nlohmann
// keeps as unsigned beyond int64 are floats on our side; objects compare by their distinct keys
// with the last duplicate winning on both sides.
inline std::string JsonDiff(JsonValue ours, const nlohmann::json& theirs,
                            const std::string& path = "$") {
  auto differ = [&](const std::string& what) { return path + ": " + what; };
  using T = nlohmann::json::value_t;
  switch (theirs.type()) {
    case T::null:
      return ours.is_null() ? "" : differ(std::string("null vs ") + ours.type_name());
    case T::boolean:
      return ours.is_boolean() && ours.boolean() == theirs.get<bool>() ? "" : differ("boolean");
    case T::number_integer:
      return ours.is_integer() && ours.integer() == theirs.get<int64_t>() ? "" : differ("integer");
    case T::number_unsigned: {
      auto u = theirs.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX))
        return ours.is_integer() && ours.integer() == static_cast<int64_t>(u) ? ""
                                                                              : differ("unsigned");
      return ours.is_number() && !ours.is_integer() && ours.number() == static_cast<double>(u)
                 ? ""
                 : differ("large unsigned");
    }
    case T::number_float: {
      double d = theirs.get<double>();
      return ours.is_number() && !ours.is_integer() && ours.number() == d ? "" : differ("float");
    }
    case T::string:
      return ours.is_string() && ours.str() == theirs.get_ref<const std::string&>()
                 ? ""
                 : differ("string");
    case T::array: {
      if (!ours.is_array() || ours.size() != theirs.size()) return differ("array size");
      size_t i = 0;
      for (JsonValue e : ours.Elements()) {
        std::string d = JsonDiff(e, theirs[i], path + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
        ++i;
      }
      return "";
    }
    case T::object: {
      if (!ours.is_object()) return differ("object");
      std::set<std::string> keys;
      for (auto m : ours.Members()) keys.emplace(m.key);
      if (keys.size() != theirs.size()) return differ("member count");
      for (auto it = theirs.begin(); it != theirs.end(); ++it) {
        if (keys.count(it.key()) == 0) return differ("missing member " + it.key());
        std::string d = JsonDiff(ours.Find(it.key()), *it, path + "." + it.key());
        if (!d.empty()) return d;
      }
      return "";
    }
    default:
      return differ("unexpected nlohmann type");
  }
}

}  // namespace gpuattr::testing
