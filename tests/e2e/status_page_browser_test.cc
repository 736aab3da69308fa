// The status page in a real browser: headless Chromium against the gpuattr binary serving the
// demo scenario (the fake apiserver, as scripts/demo.sh runs it).
//
// - screenshots of the served page at 1,400 px and 390 px (a phone) are saved in the build
//   folder: tests/status-page-1400.png and tests/status-page-390.png (and the HTML beside them);
// - at 1,400 px nothing overflows horizontally (the page, its sections and tables); at 390 px the
//   page itself does not scroll sideways either;
// - every section is present, in the documented order;
// - every number a table cell carries (data-k, data-v) equals the exposition's series in the
//   same cycle (the binary runs with --interval 1h, so /metrics and / show one cycle).
//
// The layout is measured by loading the served HTML from a file with a small probe script
// appended that reports document and element widths, in a frame of the width under test (the
// only way to get a viewport narrower than Chromium's 500 px minimum window), read back with
// --dump-dom (the page has no external asset, so the file renders as the served page does).
//
// Chromium is Debian's `chromium` package (scripts/install-deps.sh installs it; CI has it). The
// test says so and skips when it is not installed.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "gpuattr/expo/parser.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/subprocess.h"
#include "test_paths.h"

extern char** environ;

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Chromium() {
  if (const char* env = std::getenv("GPUATTR_CHROMIUM"); env && *env) return env;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

// Runs chromium headless on `url`; stdout (the DOM with --dump-dom) is returned.
std::string RunChromium(const std::string& chromium, const fs::path& profile,
                        const std::string& extra, const std::string& url, const fs::path& out) {
  fs::remove_all(profile);
  const std::string cmd =
      "timeout 120 " + chromium +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --hide-scrollbars --user-data-dir=" +
      profile.string() + " " + extra + " '" + url + "' >" + out.string() + " 2>/dev/null";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  return ReadFile(out);
}

std::string Attr(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  size_t p = tag.find(key);
  if (p == std::string_view::npos) return "";
  p += key.size();
  size_t e = tag.find('"', p);
  std::string v(tag.substr(p, e - p));
  for (auto [from, to] : {std::pair<std::string, std::string>{"&quot;", "\""},
                          {"&#39;", "'"},
                          {"&lt;", "<"},
                          {"&gt;", ">"},
                          {"&amp;", "&"}})
    for (size_t q = v.find(from); q != std::string::npos; q = v.find(from, q + to.size()))
      v.replace(q, from.size(), to);
  return v;
}

// The rows of a DOM slice: data-key → (data-k → data-v) for every cell that has both.
std::map<std::string, std::map<std::string, std::string>> Rows(std::string_view dom) {
  std::map<std::string, std::map<std::string, std::string>> rows;
  size_t p = 0;
  while ((p = dom.find("<tr", p)) != std::string_view::npos) {
    size_t tag_end = dom.find('>', p);
    size_t end = dom.find("</tr>", p);
    if (tag_end == std::string_view::npos || end == std::string_view::npos) break;
    std::string key = Attr(dom.substr(p, tag_end - p), "data-key");
    std::string_view row = dom.substr(tag_end, end - tag_end);
    p = end;
    if (key.empty()) continue;
    size_t c = 0;
    while ((c = row.find("<td", c)) != std::string_view::npos) {
      size_t te = row.find('>', c);
      std::string_view td = row.substr(c, te - c);
      c = te;
      std::string k = Attr(td, "data-k"), v = Attr(td, "data-v");
      if (!k.empty()) rows[key][k] = v;  // "" when the page says unknown
    }
  }
  return rows;
}

std::string_view SectionOf(const std::string& dom, const std::string& id) {
  size_t b = dom.find("<section id=\"" + id + "\">");
  if (b == std::string::npos) return {};
  size_t e = dom.find("</section>", b);
  return std::string_view(dom).substr(b, e - b);
}

// The exposition, searchable by family and labels.
class Exposition {
 public:
  explicit Exposition(std::string text) : text_(std::move(text)) { expo::Parse(text_, ex_); }

  // The one series of `family` with these labels (and without those in `absent`).
  std::optional<double> Find(std::string_view family,
                             const std::map<std::string, std::string>& labels,
                             const std::vector<std::string>& absent = {}) const {
    std::optional<double> found;
    int n = 0;
    for (const expo::Sample& s : ex_.samples) {
      if (s.name != family) continue;
      bool ok = true;
      for (const auto& [k, v] : labels) ok &= ex_.LabelValue(s, k) == std::string_view(v);
      for (const auto& k : absent) ok &= !ex_.LabelValue(s, k).has_value();
      if (!ok) continue;
      found = s.value;
      ++n;
    }
    EXPECT_LE(n, 1) << family << ": more than one series";
    return found;
  }
  // Σ over the series of `family` with these labels whose `label` passes `keep`.
  double Sum(std::string_view family, const std::map<std::string, std::string>& labels,
             const std::string& label, bool (*keep)(std::string_view)) const {
    double sum = 0;
    for (const expo::Sample& s : ex_.samples) {
      if (s.name != family) continue;
      bool ok = true;
      for (const auto& [k, v] : labels) ok &= ex_.LabelValue(s, k) == std::string_view(v);
      if (ok && keep(ex_.LabelValue(s, label).value_or(""))) sum += s.value;
    }
    return sum;
  }

 private:
  std::string text_;
  expo::Exposition ex_;
};

struct Process {
  pid_t pid = -1;
  fs::path err;
};

Process Spawn(const std::vector<std::string>& args, const fs::path& dir) {
  Process p;
  p.err = dir / "gpuattr.stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  EXPECT_EQ(posix_spawn(&p.pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return p;
}

void Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 1000; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return;
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
}

// The layout probe appended to the page: document and element widths, sent to the page that
// frames it (postMessage works from any origin).
constexpr const char* kProbe = R"(<script>
(function(){var d=document.documentElement,over=[];
document.querySelectorAll('section,table,.scroll,main,header').forEach(function(e){
 if(e.scrollWidth>e.clientWidth+1)over.push((e.id||e.tagName)+':'+e.scrollWidth+'>'+e.clientWidth)});
parent.postMessage([d.scrollWidth,d.clientWidth,d.scrollHeight,over.join(' ')].join('|'),'*');})();
</script>)";

// A page framing `src` at exactly `width` px. Chromium's window is never narrower than 500 px, so
// a phone's 390 px viewport exists only inside a frame; the frame's messages (the probe's) are
// written into this page's DOM for --dump-dom.
std::string Frame(const std::string& src, int width, int height) {
  return "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"" + src + "\" width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(height) +
         "\" style=\"border:0;display:block\"></iframe><div id=\"probe\"></div><script>"
         "addEventListener('message',function(e){document.getElementById('probe')"
         ".setAttribute('data-layout',e.data)})</script></body></html>";
}

struct Layout {
  int scroll_width = 0, client_width = 0, height = 0;
  std::string overflow;
};

Layout Measure(const std::string& chromium, const fs::path& dir, const fs::path& probe_html,
               int width) {
  const fs::path frame = dir / ("frame-" + std::to_string(width) + ".html");
  { std::ofstream(frame) << Frame(probe_html.filename().string(), width, 900); }
  const std::string dom =
      RunChromium(chromium, dir / "profile-probe",
                  "--window-size=" + std::to_string(std::max(width, 500)) +
                      ",900 --virtual-time-budget=5000 --dump-dom",
                  "file://" + frame.string(), dir / ("dom-" + std::to_string(width) + ".html"));
  Layout l;
  size_t p = dom.find("<div id=\"probe\"");
  std::string data =
      p == std::string::npos ? "" : Attr(dom.substr(p, dom.find('>', p) - p), "data-layout");
  EXPECT_FALSE(data.empty()) << "the layout probe did not report at " << width << " px";
  std::vector<std::string> parts;
  for (size_t b = 0, e; b <= data.size(); b = e + 1) {
    e = data.find('|', b);
    if (e == std::string::npos) e = data.size();
    parts.push_back(data.substr(b, e - b));
  }
  if (parts.size() != 4) return l;
  l.scroll_width = std::atoi(parts[0].c_str());
  l.client_width = std::atoi(parts[1].c_str());
  l.height = std::atoi(parts[2].c_str());
  l.overflow = parts[3];
  EXPECT_EQ(l.client_width, width) << "the frame is not " << width << " px wide";
  return l;
}

uint32_t PngWidth(const fs::path& png) {
  std::string b = ReadFile(png);
  if (b.size() < 24 || b.compare(1, 3, "PNG") != 0) return 0;
  return (uint32_t(uint8_t(b[16])) << 24) | (uint32_t(uint8_t(b[17])) << 16) |
         (uint32_t(uint8_t(b[18])) << 8) | uint32_t(uint8_t(b[19]));
}

void ExpectSame(const std::string& what, const std::string& page, std::optional<double> expo,
                int& compared) {
  if (!expo) {
    EXPECT_EQ(page, "") << what << ": the page shows a number the exposition does not have";
    return;
  }
  ASSERT_FALSE(page.empty()) << what << ": the exposition has " << *expo
                             << ", the page says unknown";
  const double v = std::stod(page);
  EXPECT_NEAR(v, *expo, 1e-9 * std::max(1.0, std::fabs(*expo))) << what;
  ++compared;
}

class StatusPageBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = Chromium();
    if (chromium_.empty())
      GTEST_SKIP() << "chromium is not installed: `apt-get install chromium` "
                      "(scripts/install-deps.sh installs it; CI runs this test with it)";
    dir_ = fs::temp_directory_path() / ("gpuattr-browser-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto scenario = LoadScenario(FixturePath("scenarios/demo"));
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    server_ = std::make_unique<FakeApiServer>(std::move(*scenario));
    ASSERT_TRUE(server_->Start().ok());
    KubeconfigOptions kc;
    kc.context = "demo";
    ASSERT_TRUE(server_->WriteKubeconfig(dir_ / "kubeconfig", kc).ok());
    gpuattr_ = Spawn({DaemonBinary(), "--kubeconfig", (dir_ / "kubeconfig").string(), "--context",
                      "demo", "--state.file", (dir_ / "state.json").string(),
                      "--web.listen-address", "127.0.0.1:0", "--interval", "1h"},
                     dir_);
    port_ = WaitForServingPort(gpuattr_.err, 30s);
    ASSERT_GT(port_, 0) << ReadFile(gpuattr_.err);
    httplib::Client cli("127.0.0.1", port_);
    int ready = 0;
    for (int i = 0; i < 3000 && ready != 200; ++i) {
      auto r = cli.Get("/readyz");
      ready = r ? r->status : 0;
      if (ready != 200) std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(ready, 200) << ReadFile(gpuattr_.err);
    auto page = cli.Get("/");
    auto metrics = cli.Get("/metrics");
    ASSERT_TRUE(page && metrics);
    ASSERT_EQ(page->status, 200);
    html_ = page->body;
    metrics_ = metrics->body;
  }
  void TearDown() override {
    Stop(gpuattr_.pid);
    if (server_) server_->Stop();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

  std::string chromium_;
  fs::path dir_;
  std::unique_ptr<FakeApiServer> server_;
  Process gpuattr_;
  int port_ = 0;
  std::string html_, metrics_;
};

TEST_F(StatusPageBrowser, DemoReadsAt1400And390WithTheExpositionsNumbers) {
  const fs::path artifacts = fs::path(GPUATTR_BINARY_DIR) / "tests";
  fs::create_directories(artifacts);
  { std::ofstream(artifacts / "status-page.html") << html_; }
  std::string probed = html_;
  probed.insert(probed.rfind("</body>"), kProbe);
  const fs::path probe_html = dir_ / "probed.html";
  { std::ofstream(probe_html) << probed; }

  // Layout at 1,400 px: nothing overflows.
  Layout wide = Measure(chromium_, dir_, probe_html, 1400);
  EXPECT_GT(wide.height, 1000);
  EXPECT_LE(wide.scroll_width, 1400) << "the page scrolls sideways at 1,400 px";
  EXPECT_LE(wide.scroll_width, wide.client_width);
  EXPECT_EQ(wide.overflow, "") << "elements wider than their box at 1,400 px";
  // At 390 px (a phone) the page itself does not scroll sideways; wide detail tables may scroll
  // inside their own box.
  Layout phone = Measure(chromium_, dir_, probe_html, 390);
  EXPECT_LE(phone.scroll_width, 390) << "the page scrolls sideways at 390 px: " << phone.overflow;

  // Screenshots of the served page, whole height: at 1,400 px directly, at 390 px in a frame of
  // that width (the screenshot is cut to the window's 390 px, the frame's width).
  for (auto [width, layout] : {std::pair<int, Layout>{1400, wide}, {390, phone}}) {
    const fs::path png = artifacts / ("status-page-" + std::to_string(width) + ".png");
    fs::remove(png);
    const int height = std::clamp(layout.height, 600, 16000);
    std::string url = Url();
    if (width < 500) {
      const fs::path frame = dir_ / "frame-shot.html";
      std::ofstream(frame) << Frame(Url(), width, height);
      url = "file://" + frame.string();
    }
    RunChromium(chromium_, dir_ / "profile-shot",
                "--window-size=" + std::to_string(width) + "," + std::to_string(height) +
                    " --virtual-time-budget=5000 --screenshot=" + png.string(),
                url, dir_ / "shot.out");
    ASSERT_TRUE(fs::exists(png)) << png;
    EXPECT_EQ(PngWidth(png), static_cast<uint32_t>(width));
    EXPECT_GT(fs::file_size(png), 10'000u);
  }

  // The DOM after the page's own script ran (sorting), from the served page.
  const std::string dom =
      RunChromium(chromium_, dir_ / "profile-dom", "--window-size=1400,900 --dump-dom", Url(),
                  dir_ / "dom.html");
  std::vector<size_t> at;
  for (const char* id : {"clusters", "whose", "costs", "idle", "rightsizing", "top", "devices",
                         "health", "pending", "exporters"}) {
    size_t p = dom.find("<section id=\"" + std::string(id) + "\">");
    EXPECT_NE(p, std::string::npos) << "section " << id << " is missing";
    at.push_back(p);
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << "sections out of order";

  const Exposition ex(metrics_);
  int compared = 0;
  // Whose GPUs: the namespace series.
  auto whose = Rows(SectionOf(dom, "whose"));
  EXPECT_GE(whose.size(), 5u);
  for (const auto& [ns, cells] : whose) {
    const std::map<std::string, std::string> l{{"namespace", ns}};
    for (const auto& [k, family] : std::map<std::string, std::string>{
             {"gpu_equivalents", "gpuattr_namespace_gpu_equivalents"},
             {"devices_in_use", "gpuattr_namespace_devices_in_use"},
             {"utilization_ratio", "gpuattr_namespace_utilization_ratio"},
             {"memory_used_bytes", "gpuattr_namespace_memory_used_bytes"},
             {"memory_idle_bytes", "gpuattr_namespace_memory_idle_bytes"},
             {"power_watts", "gpuattr_namespace_power_watts"},
             {"gpu_pods", "gpuattr_namespace_gpu_pods"},
             {"idle_pods", "gpuattr_namespace_idle_pods"},
             {"pending_pods", "gpuattr_namespace_pending_pods"}}) {
      ASSERT_TRUE(cells.count(k)) << ns << " has no " << k;
      std::optional<double> e = ex.Find(family, l);
      // Counts of a namespace the exposition leaves out are 0 on the page.
      if (!e && (k == "pending_pods" || k == "gpu_pods" || k == "idle_pods" ||
                 k == "devices_in_use" || k == "gpu_equivalents"))
        e = 0;
      ExpectSame(ns + " " + k, cells.at(k), e, compared);
    }
    const double requested = ex.Sum("gpuattr_namespace_requested_devices", l, "resource",
                                    [](std::string_view r) { return !r.ends_with(".shared"); });
    ExpectSame(ns + " requested_devices", cells.at("requested_devices"), requested, compared);
    if (auto energy = ex.Find("gpuattr_namespace_energy_joules_total", l);
        energy && !cells.at("energy_24h_joules").empty()) {
      EXPECT_LE(std::stod(cells.at("energy_24h_joules")), *energy + 1e-6) << ns;
    }
  }
  // Idle holders and top pods: the pod series.
  for (const char* section : {"idle", "top"}) {
    auto rows = Rows(SectionOf(dom, section));
    EXPECT_FALSE(rows.empty()) << section;
    for (const auto& [key, cells] : rows) {
      const size_t slash = key.find('/');
      const std::map<std::string, std::string> l{{"namespace", key.substr(0, slash)},
                                                 {"pod", key.substr(slash + 1)}};
      for (const auto& [k, v] : cells) {
        static const std::map<std::string, std::string> kFamilies = {
            {"power_watts", "gpuattr_pod_power_watts"},
            {"memory_used_bytes", "gpuattr_pod_memory_used_bytes"},
            {"utilization_ratio", "gpuattr_pod_utilization_ratio"},
            {"gpu_equivalents", "gpuattr_pod_gpu_equivalents"},
            {"idle_seconds", "gpuattr_pod_idle_seconds"}};
        ASSERT_TRUE(kFamilies.count(k)) << section << " " << key << ": unexpected " << k;
        ExpectSame(key + " " + k, v, ex.Find(kFamilies.at(k), l), compared);
      }
    }
  }
  // Devices by node: cards' power, slices' power, memory and utilisation.
  auto devices = Rows(SectionOf(dom, "devices"));
  size_t slices = 0;
  for (const auto& [key, cells] : devices) {
    const size_t slash = key.find('/'), colon = key.find(':', slash);
    const std::string node = key.substr(0, slash);
    const std::string gpu =
        key.substr(slash + 1, colon == std::string::npos ? colon : colon - slash - 1);
    if (colon == std::string::npos) {
      ExpectSame(key + " card power", cells.at("card_power_watts"),
                 ex.Find("gpuattr_card_power_watts", {{"node", node}, {"gpu", gpu}}), compared);
      continue;
    }
    ++slices;
    const std::map<std::string, std::string> l{
        {"node", node}, {"gpu", gpu}, {"gpu_instance", key.substr(colon + 1)}};
    ExpectSame(key + " power", cells.at("device_power_watts"),
               ex.Find("gpuattr_device_power_watts", l), compared);
    ExpectSame(key + " memory", cells.at("memory_used_bytes"),
               ex.Find("gpuattr_device_memory_used_bytes", l), compared);
    ExpectSame(key + " utilisation", cells.at("utilization_ratio"),
               ex.Find("gpuattr_device_utilization_ratio", l), compared);
  }
  EXPECT_EQ(slices, 47u);  // the demo box: 47 MIG slices
  EXPECT_GT(compared, 250);
}

}  // namespace
}  // namespace gpuattr::testing
