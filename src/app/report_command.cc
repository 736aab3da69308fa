// `gpuattr report`: flags, the state file, and the report (docs/accounting.md#the-report).
#include "gpuattr/app/report_command.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gpuattr/app/options.h"
#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/ledger/state_file.h"
#include "gpuattr/ledger/state_path.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::app {
namespace {

Error Usage(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

Result<int64_t> Day(const std::string& flag, const std::string& text) {
  auto day = ParseUtcDay(text);
  if (!day) return Usage(flag + ": \"" + text + "\" is not a date (YYYY-MM-DD, UTC)");
  return *day;
}

// Applies one flag's value to `r`.
Status Apply(ReportRequest& r, const std::string& flag, const std::string& value) {
  if (flag == "--from" || flag == "--to") {
    GPUATTR_ASSIGN_OR_RETURN(const int64_t day, Day(flag, value));
    (flag == "--from" ? r.from_day : r.to_day) = day;
  } else if (flag == "--group-by") {
    auto g = report::ParseCostGroupBy(value);
    if (!g) return Usage("--group-by: unknown \"" + value + "\" (use namespace or team)");
    r.group_by = *g;
  } else if (flag == "--output") {
    if (value == "markdown")
      r.output = ReportOutput::kMarkdown;
    else if (value == "csv")
      r.output = ReportOutput::kCsv;
    else if (value == "json")
      r.output = ReportOutput::kJson;
    else
      return Usage("--output: unknown \"" + value + "\" (use markdown, csv or json)");
  } else if (flag == "--state.file") {
    if (value.empty()) return Usage("--state.file: empty file name");
    r.state_file = value;
  } else {  // --cluster
    r.cluster = value;
  }
  return Status::Ok();
}

// The state file's text, or an error naming it (missing, unreadable, empty or too large).
Result<std::string> ReadStateFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Usage("state file " + path + ": cannot be read (" + std::strerror(errno) + ")");
  std::string text;
  char buf[64 * 1024];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > ledger::kMaxStateFileBytes)
      return Usage("state file " + path + ": larger than " +
                   std::to_string(ledger::kMaxStateFileBytes >> 20) + " MiB");
  }
  if (text.empty()) return Usage("state file " + path + ": empty");
  return text;
}

}  // namespace

Result<ReportRequest> ParseReportArgs(const std::vector<std::string>& args) {
  static const std::vector<std::string> kFlags = {"--from",   "--to",         "--group-by",
                                                  "--output", "--state.file", "--cluster"};
  ReportRequest r;
  bool from = false, to = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      r.help = true;
      continue;
    }
    std::string flag = args[i], value;
    const size_t eq = flag.find('=');
    const bool inline_value = flag.starts_with("--") && eq != std::string::npos;
    if (inline_value) value = flag.substr(eq + 1), flag = flag.substr(0, eq);
    if (std::find(kFlags.begin(), kFlags.end(), flag) == kFlags.end())
      return Usage("report: unknown argument \"" + args[i] + "\"");
    if (!inline_value) {
      if (i + 1 >= args.size()) return Usage(flag + ": missing value");
      value = args[++i];
    }
    GPUATTR_RETURN_IF_ERROR(Apply(r, flag, value));
    from = from || flag == "--from";
    to = to || flag == "--to";
  }
  if (r.help) return r;
  if (!from) return Usage("--from: missing (the first UTC day, YYYY-MM-DD)");
  if (!to) return Usage("--to: missing (the last UTC day, YYYY-MM-DD)");
  if (r.from_day > r.to_day)
    return Usage("--from " + UtcDayText(r.from_day) + " is after --to " + UtcDayText(r.to_day));
  return r;
}

Result<std::string> RenderReport(const ReportRequest& r, const std::string& path,
                                 std::string_view state_text) {
  auto contents = ledger::DecodeStateFile(state_text);
  if (!contents.ok()) return Usage("state file " + path + ": " + contents.error().message);
  std::string cluster = r.cluster;
  if (cluster.empty()) {
    if (contents->size() != 1) {
      std::string names;
      for (const auto& [name, state] : *contents) names += (names.empty() ? "" : ", ") + name;
      return Usage(contents->empty() ? "state file " + path + ": holds no cluster"
                                     : "state file " + path + " holds several clusters (" + names +
                                           "): name one with --cluster");
    }
    cluster = contents->begin()->first;
  }
  auto it = contents->find(cluster);
  if (it == contents->end())
    return Usage("--cluster: state file " + path + " holds no cluster \"" + cluster + "\"");
  const report::CostReport rep =
      report::BuildCostReport(it->second.accounting, cluster, r.from_day, r.to_day, r.group_by);
  switch (r.output) {
    case ReportOutput::kCsv:
      return report::RenderCostCsv(rep);
    case ReportOutput::kJson:
      return report::RenderCostJson(rep);
    case ReportOutput::kMarkdown:
      break;
  }
  return report::RenderCostMarkdown(rep);
}

int RunReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto request = ParseReportArgs(args);
  if (!request.ok()) {
    err << "gpuattr report: " << request.error().message << " (see gpuattr report --help)\n";
    return kExitUsage;
  }
  if (request->help) {
    out << ReportHelpText();
    return kExitOk;
  }
  auto path = ledger::ResolveStateFilePath(request->state_file);
  Result<std::string> text = path.ok() ? ReadStateFile(*path) : Result<std::string>(path.error());
  Result<std::string> report =
      text.ok() ? RenderReport(*request, *path, *text) : Result<std::string>(text.error());
  if (!report.ok()) {
    err << "gpuattr report: " << report.error().message << "\n";
    return kExitUsage;
  }
  out << *report;
  return kExitOk;
}

std::string_view ReportHelpText() {
  return R"help(gpuattr report - GPU-hours and cost per namespace or team, from the state file alone

Usage:
  gpuattr report --from YYYY-MM-DD --to YYYY-MM-DD [--group-by namespace|team]
                 [--output markdown|csv|json] [--state.file PATH] [--cluster NAME]

Reads the daily totals the daemon keeps in its state file (accounting.retention_days days; no
cluster access, no network) and prints, for the UTC days from --from to --to (inclusive), per
namespace or team: GPU-hours on the allocation, memory and usage bases, waste (allocation -
usage), cost (priced cards only), idle, the total, and a check that the groups and idle add up to
the cards' hours.

Flags:
  --from, --to DATE           the first and last UTC day (ISO 8601, YYYY-MM-DD); required
  --group-by namespace|team   team: the namespace's value of the first label of
                              accounting.namespace_labels, as recorded each day ("(no team)"
                              without it); default namespace
  --output markdown|csv|json  default markdown; CSV is RFC 4180 with CRLF line ends
  --state.file PATH           default $XDG_STATE_HOME/gpuattr/state.json, else
                              ~/.local/state/gpuattr/state.json
  --cluster NAME              which cluster, when the state file holds several

Exit codes: 0 the report was printed; 2 a bad flag or date, or a missing, empty or corrupt state
file (the message names it).
)help";
}

}  // namespace gpuattr::app
