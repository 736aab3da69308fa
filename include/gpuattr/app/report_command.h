// `gpuattr report` (docs/accounting.md#the-report): GPU-hours and cost per namespace or team
// over a range of UTC days, from the state file alone: no cluster, no network, no config file.
//
//   gpuattr report --from YYYY-MM-DD --to YYYY-MM-DD [--group-by namespace|team]
//                  [--output markdown|csv|json] [--state.file PATH] [--cluster NAME]
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/report/cost_report.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

inline constexpr std::string_view kReportCommand = "report";

enum class ReportOutput { kMarkdown, kCsv, kJson };

struct ReportRequest {
  int64_t from_day = 0, to_day = 0;
  report::CostGroupBy group_by = report::CostGroupBy::kNamespace;
  ReportOutput output = ReportOutput::kMarkdown;
  std::string state_file;  // as given ("" → the default location, ledger/state_path.h)
  std::string cluster;     // "" → the state file's only cluster
  bool help = false;
};

// The flags after "report" ("--flag value" or "--flag=value"). Errors name the flag.
Result<ReportRequest> ParseReportArgs(const std::vector<std::string>& args);

// The report rendered from the state file's text (`path` names it in errors).
Result<std::string> RenderReport(const ReportRequest& request, const std::string& path,
                                 std::string_view state_text);

// The whole command: prints the report to `out`; errors to `err` naming the file or flag, and
// exit 2 (kExitUsage).
int RunReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The `report` part of --help and the man page.
std::string_view ReportHelpText();

}  // namespace gpuattr::app
