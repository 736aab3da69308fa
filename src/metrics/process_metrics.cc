#include "gpuattr/metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "gpuattr/metrics/text_writer.h"

namespace gpuattr::metrics {
namespace {

// The names and help texts of the Prometheus client libraries (client_golang's process
// collector), so that dashboards made for any exporter work.
constexpr FamilySpec kFamilies[] = {
    {"process_cpu_seconds_total", MetricType::kCounter,
     "Total user and system CPU time spent in seconds."},
    {"process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes."},
    {"process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes."},
    {"process_open_fds", MetricType::kGauge, "Number of open file descriptors."},
    {"process_max_fds", MetricType::kGauge, "Maximum number of open file descriptors."},
    {"process_start_time_seconds", MetricType::kGauge,
     "Start time of the process since unix epoch in seconds."},
};

std::string ReadSmallFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<double> Number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// /proc/stat's btime: the boot time in Unix seconds.
std::optional<double> BootTime() {
  std::istringstream in(ReadSmallFile("/proc/stat"));
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("btime ")) return Number(std::string_view(line).substr(6));
  return std::nullopt;
}

std::optional<double> OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return std::nullopt;
  double n = 0;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n - 1;  // not the descriptor this count has open
}

}  // namespace

std::span<const FamilySpec> ProcessFamilies() { return kFamilies; }

ProcessStats ReadProcessStats() {
  ProcessStats s;
  // /proc/self/stat: "pid (comm) state ...": comm may hold spaces and parentheses, so the fields
  // are counted from the last ')'. Field 3 is the state; utime 14, stime 15, starttime 22,
  // vsize 23, rss 24 (proc(5)).
  const std::string stat = ReadSmallFile("/proc/self/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos) {
    std::vector<std::string_view> fields;
    std::string_view rest = std::string_view(stat).substr(paren + 1);
    while (!rest.empty() && fields.size() < 24) {
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      size_t sp = rest.find_first_of(" \n");
      if (!rest.empty()) fields.push_back(rest.substr(0, sp));
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp);
    }
    auto field = [&](size_t n) -> std::optional<double> {  // n as proc(5) numbers them
      return n >= 3 && n - 3 < fields.size() ? Number(fields[n - 3]) : std::nullopt;
    };
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    auto utime = field(14), stime = field(15), start = field(22);
    if (utime && stime && ticks > 0) s.cpu_seconds = (*utime + *stime) / ticks;
    static const std::optional<double> boot = BootTime();  // fixed: read once, not per scrape
    if (boot && start && ticks > 0) s.start_time_unix_seconds = *boot + *start / ticks;
    s.virtual_bytes = field(23);
    if (auto rss = field(24); rss && page > 0) s.resident_bytes = *rss * page;
  }
  s.open_fds = OpenFds();
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    s.max_fds = static_cast<double>(lim.rlim_cur);
  return s;
}

std::string RenderProcessMetrics(const ProcessStats& stats) {
  const std::optional<double> values[] = {stats.cpu_seconds,   stats.resident_bytes,
                                          stats.virtual_bytes, stats.open_fds,
                                          stats.max_fds,       stats.start_time_unix_seconds};
  static_assert(std::size(values) == std::size(kFamilies));
  std::string out;
  for (size_t i = 0; i < std::size(kFamilies); ++i) {
    if (!values[i]) continue;
    const FamilySpec& f = kFamilies[i];
    out.append("# HELP ").append(f.name).append(" ").append(EscapeHelp(f.help));
    out.append("\n# TYPE ").append(f.name);
    out.append(f.type == MetricType::kCounter ? " counter\n" : " gauge\n");
    out.append(f.name).append(" ").append(FormatValue(*values[i])).append("\n");
  }
  return out;
}

}  // namespace gpuattr::metrics
