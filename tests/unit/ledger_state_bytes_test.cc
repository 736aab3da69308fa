// The state file is written without a JSON document; its bytes must stay exactly what the
// document's dump wrote before (files written by either version read the same, and diffs of
// state files stay quiet). The reference below is that earlier encoder, kept here verbatim.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {
namespace {

using nlohmann::json;

void PutOptional(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = *v;
}

std::string DocumentEncoding(const StateFileContents& contents) {
  json clusters = json::object();
  for (const auto& [cluster, s] : contents) {
    json c = json::object();
    PutOptional(c, "last_cycle_unix", s.last_cycle_unix);
    json pods = json::array();
    for (const auto& [id, r] : s.pods) {
      json p = {{"namespace", id.namespace_}, {"pod", id.name}, {"node", r.node}};
      if (!r.uid.empty()) p["uid"] = r.uid.str();
      PutOptional(p, "idle_since_unix", r.idle_since_unix);
      PutOptional(p, "last_idle_unix", r.last_idle_unix);
      PutOptional(p, "joules", r.joules);
      PutOptional(p, "last_power_watts", r.last_power_watts);
      PutOptional(p, "last_power_unix", r.last_power_unix);
      pods.push_back(std::move(p));
    }
    c["pods"] = std::move(pods);
    json namespaces = json::array();
    for (const auto& [name, r] : s.namespaces) {
      json n = {{"namespace", name}, {"joules", r.joules}, {"last_seen_unix", r.last_seen_unix}};
      if (!r.marks.empty()) {
        json marks = json::array();
        for (const EnergyMark& m : r.marks)
          marks.push_back({{"unix", m.unix}, {"joules", m.joules}});
        n["marks"] = std::move(marks);
      }
      namespaces.push_back(std::move(n));
    }
    c["namespaces"] = std::move(namespaces);
    clusters[cluster] = std::move(c);
  }
  json root = {{"format", kStateFormat}, {"version", kStateVersion}, {"clusters", clusters}};
  return root.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string Streamed(const StateFileContents& c) {
  std::string out;
  EncodeStateFile(c, [&](std::string_view piece) { out.append(piece); });
  EXPECT_EQ(out, EncodeStateFile(c));
  return out;
}

TEST(StateCodecBytes, EmptyFilesAndSections) {
  EXPECT_EQ(Streamed({}), DocumentEncoding({}));
  StateFileContents c{{"a", LedgerState{}}, {"b", LedgerState{}}};
  c["b"].last_cycle_unix = 0;
  c["b"].namespaces["ns"] = NamespaceRecord{};
  EXPECT_EQ(Streamed(c), DocumentEncoding(c));
}

TEST(StateCodecBytes, AwkwardNamesAndNumbers) {
  const std::vector<std::string> names = {"plain",
                                          "with \"quotes\" and \\",
                                          "tab\there\nnewline\r\b\f",
                                          "ctrl\x01\x1f",
                                          "del\x7f",
                                          "ünïcödé-名前-🚀",
                                          "bad\xff\xfe",
                                          "cut\xe2\x82",
                                          "over\xc0\xaf",
                                          "",
                                          "prod \"eu\""};
  const std::vector<double> numbers = {0.0,     -0.0,
                                       1.0,     250.0,
                                       0.1,     1e-7,
                                       1e21,    1e15,
                                       1e16,    1764474000.125,
                                       -3.5e-5, 5e-324,
                                       1.7e308, 123456789.987654321};
  StateFileContents c;
  size_t k = 0;
  for (const std::string& cluster : names) {
    LedgerState& s = c[cluster];
    s.last_cycle_unix = numbers[k++ % numbers.size()];
    for (const std::string& ns : names) {
      PodRecord r;
      r.node = names[k % names.size()];
      r.uid = names[(k + 3) % names.size()];
      r.idle_since_unix = numbers[k++ % numbers.size()];
      if (k % 3) r.joules = numbers[k++ % numbers.size()];
      if (k % 2) r.last_power_watts = numbers[k++ % numbers.size()];
      s.pods[{ns, names[k % names.size()]}] = r;
      NamespaceRecord n{numbers[k++ % numbers.size()], numbers[k++ % numbers.size()]};
      if (k % 2) n.marks = {{numbers[k % numbers.size()], numbers[(k + 1) % numbers.size()]}};
      s.namespaces[ns] = n;
    }
  }
  PodRecord nan;
  nan.node = "n";
  nan.joules = std::numeric_limits<double>::quiet_NaN();  // never stored, but written as null
  c["plain"].pods[{"x", "y"}] = nan;
  EXPECT_EQ(Streamed(c), DocumentEncoding(c));
}

TEST(StateCodecBytes, ManyPodsAcrossPieces) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> real(0, 2e9);
  StateFileContents c;
  LedgerState& s = c["big"];
  s.last_cycle_unix = real(rng);
  for (int i = 0; i < 5000; ++i) {
    PodRecord r;
    r.node = "gpu-node-" + std::to_string(i / 16);
    r.uid = std::to_string(rng());
    r.last_idle_unix = real(rng);
    r.joules = std::round(real(rng));
    r.last_power_unix = real(rng);
    s.pods[{"ns-" + std::to_string(i % 40), "pod-" + std::to_string(i)}] = r;
  }
  EXPECT_EQ(Streamed(c), DocumentEncoding(c));
}

}  // namespace
}  // namespace gpuattr::ledger
