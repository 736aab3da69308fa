#include "gpuattr/rightsizing/profiles.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace gpuattr::rightsizing {
namespace {

MigModel Model(std::string family, int slices,
               std::initializer_list<std::pair<int, double>> profiles) {
  MigModel m{std::move(family), slices, {}};
  for (const auto& [g, gb] : profiles) {
    char name[32];
    std::snprintf(name, sizeof name, "%dg.%.0fgb", g, gb);
    m.profiles.push_back({name, g, gb});
  }
  return m;
}

// docs/design.md#rightsizing, the MIG profile table.
const MigModel kA100_40 = Model("A100 40GB", 7, {{1, 5}, {2, 10}, {3, 20}, {4, 20}, {7, 40}});
const MigModel kA100_80 =
    Model("A100 80GB", 7, {{1, 10}, {1, 20}, {2, 20}, {3, 40}, {4, 40}, {7, 80}});
const MigModel kH100_80 =
    Model("H100 80GB", 7, {{1, 10}, {1, 20}, {2, 20}, {3, 40}, {4, 40}, {7, 80}});
const MigModel kH100Nvl =
    Model("H100 NVL 94GB", 7, {{1, 12}, {1, 24}, {2, 24}, {3, 47}, {4, 47}, {7, 94}});
const MigModel kH200 =
    Model("H200 141GB", 7, {{1, 18}, {1, 35}, {2, 35}, {3, 71}, {4, 71}, {7, 141}});
const MigModel kB200 = Model("B200", 7, {{1, 23}, {1, 45}, {2, 45}, {3, 90}, {4, 90}, {7, 180}});
const MigModel kA30 = Model("A30 24GB", 4, {{1, 6}, {2, 12}, {4, 24}});

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// `part` in `s` not followed by a digit ("A30" but not "A300").
bool ContainsWord(std::string_view s, std::string_view part) {
  for (size_t at = s.find(part); at != std::string_view::npos; at = s.find(part, at + 1)) {
    const size_t end = at + part.size();
    if (end == s.size() || !std::isdigit(static_cast<unsigned char>(s[end]))) return true;
  }
  return false;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<MigProfile> ParseProfile(std::string_view name) {
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name = name.substr(slash + 1);
  if (name.starts_with("mig-")) name.remove_prefix(4);
  int g = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), g);
  if (ec != std::errc() || g <= 0) return std::nullopt;
  std::string_view rest = name.substr(static_cast<size_t>(p - name.data()));
  if (!rest.starts_with("g.")) return std::nullopt;
  rest.remove_prefix(2);
  double gb = 0;
  auto [q, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), gb);
  if (ec2 != std::errc() || !(gb > 0)) return std::nullopt;
  if (std::string_view(q, static_cast<size_t>(rest.data() + rest.size() - q)) != "gb")
    return std::nullopt;
  return MigProfile{std::string(name), g, gb};
}

namespace {

const MigModel* LookUp(std::string_view card_model, std::optional<double> memory_bytes) {
  const std::string m = Upper(card_model);
  // Grace Hopper and Grace Blackwell superchips have other MIG tables: not in ours.
  if (Contains(m, "GH200") || Contains(m, "GB200")) return nullptr;
  if (Contains(m, "A100")) {
    if (Contains(m, "80GB") || (!Contains(m, "40GB") && memory_bytes && *memory_bytes > 45e9))
      return &kA100_80;
    return &kA100_40;
  }
  if (Contains(m, "H100")) return Contains(m, "NVL") ? &kH100Nvl : &kH100_80;
  if (Contains(m, "H200")) return &kH200;
  if (Contains(m, "B200")) return &kB200;
  if (ContainsWord(m, "A30")) return &kA30;
  return nullptr;
}

}  // namespace

const MigModel* MigModelOf(std::string_view card_model, std::optional<double> memory_bytes) {
  // A cycle asks about the same few models for every pod: remember the last answer.
  thread_local std::string last_model;
  thread_local int last_memory = -1;
  thread_local const MigModel* last = nullptr;
  const int memory = !memory_bytes ? 0 : (*memory_bytes > 45e9 ? 2 : 1);
  if (last_memory >= 0 && memory == last_memory && card_model == last_model) return last;
  last = LookUp(card_model, memory_bytes);
  last_model.assign(card_model);
  last_memory = memory;
  return last;
}

std::optional<MigProfile> CanonicalProfile(const MigModel* model, std::string_view name) {
  std::optional<MigProfile> parsed = ParseProfile(name);
  if (!parsed || model == nullptr) return parsed;
  for (const MigProfile& p : model->profiles)
    if (p.name == parsed->name) return p;
  for (const MigProfile& p : model->profiles)
    if (p.g == parsed->g && std::abs(p.memory_gb - parsed->memory_gb) <= 0.1 * p.memory_gb)
      return p;
  return parsed;
}

}  // namespace gpuattr::rightsizing
