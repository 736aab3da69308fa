// End to end at scale (docs/design.md#targets): the real gpuattr binary in server mode against the
// fake apiserver serving a generated GPU cluster (support/generated_cluster.h) on 127.0.0.1, at
// several sizes. For each size it reports the first cycle and the steady cycles (each with its 1
// proxy GET per exporter), where a cycle's time goes (the daemon's debug line "cycle parts"), LISTs
// after the first cycle (gpuattr_apiserver_requests_total at the end minus the LISTs the fake saw
// in the first cycle, and the fake's own request log), the client connections the steady cycles'
// proxy GETs came on and how many of them were new (keep-alive reuse: none), the daemon's peak RSS
// (VmHWM from /proc) after the cycles (no /metrics request before that) and after the scrape load,
// the /metrics latency (p50/p99) with concurrent scrapers sending Accept-Encoding: gzip, and the
// size of the exposition after the cycles: series (sample lines, not # lines) and uncompressed
// bytes, with --families N the N families with the most series (the series budget,
// docs/performance.md#series-budget).
//
//   build-release/tests/scale_e2e_bench --gpuattr build-release/gpuattr --nodes 250,500,1000
//
// scripts/bench-scale.sh builds the Release binaries and runs this with the README's settings.
// Not a Google Benchmark: it drives processes and prints one table.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/direct_exporters.h"
#include "support/fake_apiserver.h"
#include "support/generated_cluster.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using gpuattr::testing::FakeApiServer;
using gpuattr::testing::FakeApiServerOptions;

constexpr const char* kUsage = R"(Usage: scale_e2e_bench --gpuattr PATH [options]

Runs the gpuattr binary in server mode against a generated fake cluster at each size and prints
cycle times, LISTs after the first cycle, the connections of the steady cycles' proxy GETs
(keep-alive reuse), peak RSS and /metrics latency. The daemon runs with --log.level debug: its
log (--keep) has the CPU seconds of each cycle's stages and of each rendering.

Options:
  --gpuattr PATH        the gpuattr binary (a Release build)
  --nodes LIST          cluster sizes in nodes, comma-separated (default 250,500,1000)
  --cycles N            cycles to run per size, the first included (default 6)
  --interval SECONDS    the daemon's interval (default 10)
  --concurrency N       the daemon's scrape.concurrency (default 16)
  --latency-ms MS       added to every pod-proxy GET by the fake (default 0)
  --inference-pods N    vLLM servers declaring a port (default 4)
  --notebook-pods N     GPU pods declaring a port that serves nothing (default 20)
  --scrapers N          concurrent /metrics scrapers (default 10)
  --scrape-seconds S    how long the scrapers run (default 10)
  --scraper CLIENT      the scrapers' HTTP client: "lean" (a socket and a receive buffer kept
                        across scrapes, as Prometheus' scrape loop keeps its buffers) or
                        "httplib" (cpp-httplib, a fresh body string per scrape); default lean
  --scrape-path PATH    proxy (exporters through the fake's pod proxy; default) or direct (each
                        pod on a loopback address of its own with its exporter listening there,
                        the daemon with scrape.path: direct; docs/deploy.md#direct-scraping)
  --families N          also print the N families with the most series per size (default 0)
  --keep DIR            keep the daemon's config and log, and the /metrics text after the cycles
                        (metrics-NODES.prom), under DIR (default: a temp dir, removed)
)";

struct Options {
  std::string gpuattr;
  std::vector<int> nodes = {250, 500, 1000};
  int cycles = 6;
  int interval = 10;
  int concurrency = 16;
  int latency_ms = 0;
  int inference_pods = 4;
  int notebook_pods = 20;
  int scrapers = 10;
  int scrape_seconds = 10;
  int families = 0;
  std::string scraper = "lean";
  std::string keep;
  // "proxy": exporters through the fake's pod proxy; "direct": each pod on a loopback address of
  // its own, its exporter listening there, the daemon with scrape.path: direct.
  std::string scrape_path = "proxy";
};

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  auto num = [](const char* flag, const std::string& v, int min) -> std::optional<int> {
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < min || n > 1000000) {
      std::cerr << "scale_e2e_bench: " << flag << ": expected an integer >= " << min << ", got \""
                << v << "\"\n";
      return std::nullopt;
    }
    return static_cast<int>(n);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::cerr << "scale_e2e_bench: " << a << " needs a value (see --help)\n";
      return std::nullopt;
    }
    std::string v = argv[++i];
    std::optional<int> n;
    if (a == "--gpuattr") {
      o.gpuattr = v;
      continue;
    }
    if (a == "--keep") {
      o.keep = v;
      continue;
    }
    if (a == "--scrape-path") {
      o.scrape_path = v;
      if (v != "proxy" && v != "direct") {
        std::cerr << "scale_e2e_bench: --scrape-path: expected proxy or direct, got \"" << v
                  << "\"\n";
        return std::nullopt;
      }
      continue;
    }
    if (a == "--scraper") {
      if (v != "lean" && v != "httplib") {
        std::cerr << "scale_e2e_bench: --scraper: expected lean or httplib, got \"" << v << "\"\n";
        return std::nullopt;
      }
      o.scraper = v;
      continue;
    }
    if (a == "--nodes") {
      o.nodes.clear();
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ',');) {
        auto p = num("--nodes", part, 1);
        if (!p) return std::nullopt;
        o.nodes.push_back(*p);
      }
      continue;
    }
    int* target = a == "--cycles"           ? &o.cycles
                  : a == "--interval"       ? &o.interval
                  : a == "--concurrency"    ? &o.concurrency
                  : a == "--latency-ms"     ? &o.latency_ms
                  : a == "--inference-pods" ? &o.inference_pods
                  : a == "--notebook-pods"  ? &o.notebook_pods
                  : a == "--scrapers"       ? &o.scrapers
                  : a == "--scrape-seconds" ? &o.scrape_seconds
                  : a == "--families"       ? &o.families
                                            : nullptr;
    if (!target) {
      std::cerr << "scale_e2e_bench: unknown option " << a << " (see --help)\n";
      return std::nullopt;
    }
    const int min = a == "--cycles"                                               ? 2
                    : a == "--latency-ms" || a.find("-pods") != std::string::npos ? 0
                                                                                  : 1;
    if (!(n = num(a.c_str(), v, min))) return std::nullopt;
    *target = *n;
  }
  if (o.gpuattr.empty()) {
    std::cerr << "scale_e2e_bench: --gpuattr PATH is required (see --help)\n";
    return std::nullopt;
  }
  return o;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

// A kB figure from /proc/PID/status ("VmHWM:   123456 kB").
double StatusMiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0)
      return std::strtod(line.c_str() + field.size() + 1, nullptr) / 1024.0;
  return 0;
}

// CPU seconds (user + system) of process `pid` so far, from /proc/PID/stat (fields 14 and 15,
// counted after the last ')').
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::stringstream ss(stat.substr(paren + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int n = 3; ss >> field && n <= 15; ++n) {
    if (n == 14) utime = std::strtod(field.c_str(), nullptr);
    if (n == 15) stime = std::strtod(field.c_str(), nullptr);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU seconds of this process (the scrapers and the fake apiserver), user + system.
double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// key=value pairs of a logfmt line (values unquoted; quoted values are not needed here).
std::map<std::string, std::string> Logfmt(const std::string& line) {
  std::map<std::string, std::string> out;
  std::stringstream ss(line);
  for (std::string tok; ss >> tok;) {
    size_t eq = tok.find('=');
    if (eq != std::string::npos) out[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return out;
}

double Num(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : std::strtod(it->second.c_str(), nullptr);
}

// Sum of the samples of `family` whose label text contains `filter`, in an exposition body.
double SumSeries(const std::string& body, const std::string& family, const std::string& filter) {
  double sum = 0;
  std::stringstream ss(body);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind(family + "{", 0) != 0 || line.find(filter) == std::string::npos) continue;
    sum += std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
  }
  return sum;
}

// The size of an exposition: series (sample lines; # lines are not series) and bytes, in all and
// per family (the name of the # TYPE line before the samples: a histogram's _bucket, _sum and
// _count lines count as its family's).
struct FamilySize {
  size_t series = 0, bytes = 0;
};
struct ExpositionSize {
  size_t series = 0, bytes = 0;
  std::map<std::string, FamilySize> families;
};

ExpositionSize MeasureExposition(const std::string& body) {
  ExpositionSize out;
  out.bytes = body.size();
  std::string family = "(no # TYPE)";
  std::stringstream ss(body);
  for (std::string line; std::getline(ss, line);) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# TYPE ", 0) == 0) {
        std::string rest = line.substr(7);
        family = rest.substr(0, rest.find(' '));
      }
      out.families[family].bytes += line.size() + 1;
      continue;
    }
    ++out.series;
    FamilySize& f = out.families[family];
    ++f.series;
    f.bytes += line.size() + 1;
  }
  return out;
}

// A /metrics scraper on one keep-alive connection that reads each response into a buffer it
// keeps: what a scrape then costs is the server's and the loopback's work, not this client's
// allocations and page faults (Prometheus' scrape loop also reuses its buffers).
class LeanScraper {
 public:
  explicit LeanScraper(int port) : port_(port) {}
  ~LeanScraper() { Close(); }
  LeanScraper(const LeanScraper&) = delete;
  LeanScraper& operator=(const LeanScraper&) = delete;

  // The body's length of a 200 answer with Content-Encoding: gzip, or -1.
  long Scrape() {
    if (fd_ < 0 && !Connect()) return -1;
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) +
                            "\r\nAccept-Encoding: gzip\r\n\r\n";
    if (::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
      return Fail();
    size_t have = 0, head_end = std::string::npos;
    while (head_end == std::string::npos) {
      if (have == buf_.size()) buf_.resize(std::max<size_t>(64 << 10, buf_.size() * 2));
      ssize_t n = ::recv(fd_, buf_.data() + have, buf_.size() - have, 0);
      if (n <= 0) return Fail();
      have += static_cast<size_t>(n);
      head_end = std::string_view(buf_.data(), have).find("\r\n\r\n");
    }
    std::string head(buf_.data(), head_end);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t cl = head.find("\r\ncontent-length:");
    if (head.rfind("http/1.1 200", 0) != 0 || cl == std::string::npos ||
        head.find("\r\ncontent-encoding: gzip") == std::string::npos)
      return Fail();
    const size_t body = std::strtoul(head.c_str() + cl + 17, nullptr, 10);
    const size_t total = head_end + 4 + body;
    if (buf_.size() < total) buf_.resize(total);
    while (have < total) {
      ssize_t n = ::recv(fd_, buf_.data() + have, total - have, 0);
      if (n <= 0) return Fail();
      have += static_cast<size_t>(n);
    }
    if (have > total) return Fail();  // nothing was pipelined: nothing may follow
    if (head.find("\r\nconnection: close") != std::string::npos) Close();
    return static_cast<long>(body);
  }

 private:
  bool Connect() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port_));
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      Close();
      return false;
    }
    return true;
  }
  long Fail() {
    Close();
    return -1;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int port_;
  int fd_ = -1;
  std::vector<char> buf_;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

struct Row {
  int nodes = 0;
  size_t devices = 0, pods = 0, exporters = 0;
  double body_mib = 0;
  double first_cycle = 0, steady_cycle = 0, steady_max = 0;
  double wait = 0, discovery = 0, stages = 0, save = 0;  // medians of the steady cycles
  double lists_after_first_daemon = 0;
  size_t lists_after_first_fake = 0;
  size_t proxy_gets_steady = 0;  // per steady cycle (median)
  // Every apiserver request but the watches, per steady cycle (median): 0 when reading directly.
  size_t apiserver_steady = 0;
  size_t direct_gets = 0;           // GETs the exporters' own listeners served (direct)
  double daemon_cpu_per_cycle = 0;  // CPU seconds of the daemon per steady cycle (mean)
  // Client connections (ports) the steady cycles' proxy GETs came on, and how many of those the
  // first cycle had not opened: keep-alive reuse means few, and none new.
  size_t steady_connections = 0, steady_new_connections = 0;
  double rss_after_cycles = 0, rss_peak = 0, rss_end = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  size_t scrapes = 0, scrape_errors = 0;
  double scrape_kib = 0;
  ExpositionSize exposition;  // of the uncompressed /metrics after the cycles
  // CPU milliseconds per scrape during the scrape load: the daemon's (serving, plus a cycle if
  // one ran then) and this process's (the scrapers' clients and the fake apiserver).
  double daemon_cpu_ms_per_scrape = 0, client_cpu_ms_per_scrape = 0;
  std::string error;
};

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Row RunSize(const Options& opt, int nodes, const fs::path& dir) {
  Row row;
  row.nodes = nodes;
  gpuattr::testing::GeneratedClusterSpec spec;
  spec.nodes = nodes;
  spec.inference_pods = opt.inference_pods;
  spec.notebook_pods = opt.notebook_pods;
  gpuattr::testing::GeneratedClusterInfo info;
  FakeApiServerOptions fo;
  fo.proxy_latency = std::chrono::milliseconds(opt.latency_ms);
  fo.threads = std::max(64, opt.concurrency + 16);
  // A real apiserver keeps idle connections far longer than one interval: so does the fake here,
  // so that steady cycles reuse their keep-alive connections (no TLS handshake per cycle).
  fo.keep_alive_timeout_seconds = 4 * opt.interval + 10;
  gpuattr::testing::Scenario scenario = gpuattr::testing::GenerateCluster(spec, &info);
  std::optional<gpuattr::testing::DirectExporters> direct;
  // One worker per listener, with their 2 s keep-alive (each steady GET then reconnects): kept
  // alive over the interval, a thousand listeners' idle connections cost this process more CPU
  // than the daemon's cycle (cpp-httplib waits on them in short polls; measured in the notes).
  if (opt.scrape_path == "direct")
    direct.emplace(scenario, gpuattr::testing::DirectExportersOptions{1});
  FakeApiServer server(std::move(scenario), fo);
  row.devices = info.devices;
  row.pods = info.gpu_pods;
  row.exporters = info.exporters;
  row.body_mib = static_cast<double>(info.body_bytes) / (1024.0 * 1024.0);
  if (auto st = server.Start(); !st.ok()) {
    row.error = st.message();
    return row;
  }
  if (direct)
    if (auto st = direct->Start(server); !st.ok()) {
      row.error = st.message();
      return row;
    }
  const fs::path kubeconfig = dir / "kubeconfig";
  (void)server.WriteKubeconfig(kubeconfig);
  const int port = FreePort();
  const fs::path config = dir / "gpuattr.yaml";
  {
    std::ofstream c(config);
    c << "interval: " << opt.interval << "s\n"
      << "state_file: " << (dir / "state.json").string() << "\n"
      << "web:\n  listen_address: 127.0.0.1:" << port << "\n"
      << "scrape:\n  concurrency: " << opt.concurrency << "\n  path: " << opt.scrape_path << "\n";
  }
  const fs::path log = dir / ("gpuattr-" + std::to_string(nodes) + ".log");
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    execl(opt.gpuattr.c_str(), opt.gpuattr.c_str(), "--config.file", config.c_str(), "--kubeconfig",
          kubeconfig.c_str(), "--log.level", "debug", static_cast<char*>(nullptr));
    std::perror("exec gpuattr");
    _exit(127);
  }

  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(120, 0);
  http.set_decompress(false);
  auto metrics = [&]() -> std::string {
    auto r = http.Get("/metrics", {{"Accept-Encoding", "identity"}});
    return r && r->status == 200 ? r->body : std::string();
  };

  // Cycles, from the daemon's log.
  std::vector<double> durations, waits, discoveries, stages, saves;
  std::vector<size_t> proxy_per_cycle, api_per_cycle;
  size_t lists_fake_first = 0, proxy_before = 0, api_before = 0;
  double cpu_first = 0, cpu_last = 0;
  auto non_watch = [&server] {
    size_t n = 0;
    for (const char* verb : {"list", "get", "proxy", "other"}) n += server.CountRequests(verb);
    return n;
  };
  std::chrono::system_clock::time_point first_cycle_end{};
  const auto deadline = Clock::now() + std::chrono::seconds(120 + 6 * opt.cycles * opt.interval);
  size_t lines_read = 0;
  while (static_cast<int>(durations.size()) < opt.cycles && Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      row.error = "gpuattr exited early (see " + log.string() + ")";
      return row;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (; lines_read < lines.size(); ++lines_read) {
      const std::string& l = lines[lines_read];
      auto kv = Logfmt(l);
      if (l.find("msg=\"cycle parts\"") != std::string::npos) {
        waits.push_back(Num(kv, "wait_seconds"));
        discoveries.push_back(Num(kv, "discovery_seconds"));
        stages.push_back(Num(kv, "stages_seconds"));
        saves.push_back(Num(kv, "save_seconds"));
      }
      if (l.find("msg=\"cycle finished\"") == std::string::npos) continue;
      durations.push_back(Num(kv, "duration_seconds"));
      const size_t proxy_now = server.CountRequests("proxy");
      proxy_per_cycle.push_back(proxy_now - proxy_before);
      proxy_before = proxy_now;
      const size_t api_now = non_watch();
      api_per_cycle.push_back(api_now - api_before);
      api_before = api_now;
      (durations.size() == 1 ? cpu_first : cpu_last) = ProcessCpuSeconds(pid);
      // The daemon is the fake's only client: the LISTs it made up to here are the fake's count.
      // (No /metrics request before the cycles are done: it would add a render to the peak RSS.)
      if (durations.size() == 1) {
        lists_fake_first = server.CountRequests("list");
        first_cycle_end = std::chrono::system_clock::now();
      }
    }
  }
  if (static_cast<int>(durations.size()) < opt.cycles) {
    row.error = "only " + std::to_string(durations.size()) + " cycles finished in time";
  }
  row.rss_after_cycles = StatusMiB(pid, "VmHWM");
  {
    std::set<int> first, steady;
    for (const auto& r : server.Requests()) {
      if (r.verb != "proxy") continue;
      (r.time < first_cycle_end ? first : steady).insert(r.remote_port);
    }
    row.steady_connections = steady.size();
    for (int port : steady) row.steady_new_connections += first.count(port) ? 0 : 1;
  }
  const std::string final_metrics = metrics();
  row.exposition = MeasureExposition(final_metrics);
  // Kept for a closer look (series per family and label set) when the run keeps its files.
  if (!opt.keep.empty())
    std::ofstream(dir / ("metrics-" + std::to_string(nodes) + ".prom")) << final_metrics;
  row.lists_after_first_daemon =
      SumSeries(final_metrics, "gpuattr_apiserver_requests_total", "verb=\"list\"") -
      static_cast<double>(lists_fake_first);
  row.lists_after_first_fake = server.CountRequests("list") - lists_fake_first;
  if (!durations.empty()) {
    row.first_cycle = durations.front();
    std::vector<double> steady(durations.begin() + 1, durations.end());
    row.steady_cycle = Median(steady);
    row.steady_max = steady.empty() ? 0 : *std::max_element(steady.begin(), steady.end());
    auto steady_median = [](const std::vector<double>& v) {
      return v.size() > 1 ? Median(std::vector<double>(v.begin() + 1, v.end())) : 0;
    };
    row.wait = steady_median(waits);
    row.discovery = steady_median(discoveries);
    row.stages = steady_median(stages);
    row.save = steady_median(saves);
    std::vector<size_t> sorted(proxy_per_cycle.begin() + 1, proxy_per_cycle.end());
    std::sort(sorted.begin(), sorted.end());
    row.proxy_gets_steady = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    std::vector<size_t> api(api_per_cycle.begin() + 1, api_per_cycle.end());
    std::sort(api.begin(), api.end());
    row.apiserver_steady = api.empty() ? 0 : api[api.size() / 2];
    if (durations.size() > 1)
      row.daemon_cpu_per_cycle = (cpu_last - cpu_first) / static_cast<double>(durations.size() - 1);
  }
  if (direct) row.direct_gets = direct->served();

  // Scrape load: N clients, each on its own keep-alive connection, back to back.
  std::mutex mu;
  std::vector<double> latencies;
  std::atomic<size_t> errors{0}, bytes{0};
  const double daemon_cpu0 = ProcessCpuSeconds(pid), self_cpu0 = SelfCpuSeconds();
  const auto stop_at = Clock::now() + std::chrono::seconds(opt.scrape_seconds);
  std::vector<std::thread> clients;
  for (int i = 0; i < opt.scrapers; ++i) {
    clients.emplace_back([&] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_decompress(false);
      c.set_read_timeout(60, 0);
      LeanScraper lean(port);
      std::vector<double> mine;
      while (Clock::now() < stop_at) {
        auto t0 = Clock::now();
        long size = -1;
        if (opt.scraper == "lean") {
          size = lean.Scrape();
        } else if (auto r = c.Get("/metrics", {{"Accept-Encoding", "gzip"}});
                   r && r->status == 200) {
          size = static_cast<long>(r->body.size());
        }
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (size < 0) {
          errors.fetch_add(1);
          continue;
        }
        bytes.fetch_add(static_cast<size_t>(size));
        mine.push_back(ms);
      }
      std::lock_guard lk(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : clients) t.join();
  row.scrapes = latencies.size();
  if (row.scrapes > 0) {
    const double n = static_cast<double>(row.scrapes);
    row.daemon_cpu_ms_per_scrape = (ProcessCpuSeconds(pid) - daemon_cpu0) * 1e3 / n;
    row.client_cpu_ms_per_scrape = (SelfCpuSeconds() - self_cpu0) * 1e3 / n;
  }
  row.scrape_errors = errors.load();
  row.scrape_kib =
      latencies.empty() ? 0 : static_cast<double>(bytes.load()) / latencies.size() / 1024.0;
  row.p50_ms = Percentile(latencies, 0.5);
  row.p99_ms = Percentile(latencies, 0.99);
  row.max_ms = latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());
  row.rss_peak = StatusMiB(pid, "VmHWM");
  row.rss_end = StatusMiB(pid, "VmRSS");

  kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if (direct) direct->Stop();
  server.Stop();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  auto opt = ParseArgs(argc, argv);
  if (!opt) return 2;
  if (access(opt->gpuattr.c_str(), X_OK) != 0) {
    std::cerr << "scale_e2e_bench: --gpuattr " << opt->gpuattr << ": not an executable\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  fs::path dir = opt->keep.empty()
                     ? fs::temp_directory_path() / ("gpuattr-scale-" + std::to_string(getpid()))
                     : fs::path(opt->keep);
  fs::create_directories(dir);
  std::vector<Row> rows;
  for (int n : opt->nodes) {
    std::cerr << "scale_e2e_bench: " << n << " nodes ..." << std::endl;
    rows.push_back(RunSize(*opt, n, dir));
    const Row& r = rows.back();
    if (!r.error.empty()) std::cerr << "scale_e2e_bench: " << n << " nodes: " << r.error << "\n";
  }
  std::cout << "settings: " << opt->cycles << " cycles, interval " << opt->interval
            << " s, scrape.path " << opt->scrape_path << ", scrape.concurrency " << opt->concurrency
            << ", proxy latency " << opt->latency_ms << " ms, " << opt->scrapers << " scrapers for "
            << opt->scrape_seconds << " s (Accept-Encoding: gzip, " << opt->scraper
            << " client)\n\n";
  std::cout
      << "| nodes | devices | GPU pods | exporter bodies | first cycle | steady cycle (median / "
         "max) "
         "| steady: wait / discovery+GETs / stages / state file | proxy GETs per steady cycle "
         "| apiserver requests per steady cycle (no watches) | direct GETs (all cycles) "
         "| daemon CPU per steady cycle "
         "| connections of steady GETs (new) "
         "| LISTs after 1st (daemon / fake) | peak RSS after cycles | peak RSS after scrapes "
         "| /metrics p50 / p99 / max | scrapes (errors) | body "
         "| CPU per scrape: daemon / scrapers+fake | series | exposition (uncompressed) |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::cout << "| " << r.nodes << " | " << r.devices << " | " << r.pods << " | "
              << Fixed(r.body_mib, 1) << " MiB | " << Fixed(r.first_cycle, 2) << " s | "
              << Fixed(r.steady_cycle, 2) << " / " << Fixed(r.steady_max, 2) << " s | "
              << Fixed(r.wait, 3) << " / " << Fixed(r.discovery, 3) << " / " << Fixed(r.stages, 3)
              << " / " << Fixed(r.save, 3) << " s | " << r.proxy_gets_steady << " | "
              << r.apiserver_steady << " | " << r.direct_gets << " | "
              << Fixed(r.daemon_cpu_per_cycle, 3) << " s | " << r.steady_connections << " ("
              << r.steady_new_connections << ") | " << Fixed(r.lists_after_first_daemon, 0) << " / "
              << r.lists_after_first_fake << " | " << Fixed(r.rss_after_cycles, 0) << " MiB | "
              << Fixed(r.rss_peak, 0) << " MiB | " << Fixed(r.p50_ms, 1) << " / "
              << Fixed(r.p99_ms, 1) << " / " << Fixed(r.max_ms, 1) << " ms | " << r.scrapes << " ("
              << r.scrape_errors << ") | " << Fixed(r.scrape_kib, 0) << " KiB | "
              << Fixed(r.daemon_cpu_ms_per_scrape, 2) << " / "
              << Fixed(r.client_cpu_ms_per_scrape, 2) << " ms | " << r.exposition.series << " | "
              << Fixed(static_cast<double>(r.exposition.bytes) / 1e6, 2) << " MB |"
              << (r.error.empty() ? "" : " " + r.error) << "\n";
  }
  for (const Row& r : rows) {
    if (opt->families <= 0) break;
    std::vector<std::pair<std::string, FamilySize>> fams(r.exposition.families.begin(),
                                                         r.exposition.families.end());
    std::sort(fams.begin(), fams.end(), [](const auto& a, const auto& b) {
      return a.second.series != b.second.series ? a.second.series > b.second.series
                                                : a.first < b.first;
    });
    if (fams.size() > static_cast<size_t>(opt->families)) fams.resize(opt->families);
    std::cout << "\n"
              << r.nodes << " nodes: the " << fams.size() << " families with the most "
              << "series (of " << r.exposition.families.size() << ")\n\n"
              << "| family | series | per node | bytes |\n|---|---|---|---|\n";
    for (const auto& [name, f] : fams)
      std::cout << "| " << name << " | " << f.series << " | "
                << Fixed(static_cast<double>(f.series) / r.nodes, 1) << " | " << f.bytes << " |\n";
  }
  if (opt->keep.empty()) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  } else {
    std::cout << "\nlogs and config kept in " << dir.string() << "\n";
  }
  bool ok = std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.error.empty(); });
  return ok ? 0 : 1;
}
