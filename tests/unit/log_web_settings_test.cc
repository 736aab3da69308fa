// --log.format and --web.telemetry-path as settings (docs/app.md#logs, docs/app.md#endpoints):
// defaults, flag and file, and errors that name the flag or key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"

namespace gpuattr {
namespace {

using ::testing::HasSubstr;

Result<app::Config> Load(std::vector<std::string> args, std::string_view file = "") {
  auto cl = app::ParseCommandLine(args);
  EXPECT_TRUE(cl.ok()) << cl.error().message;
  return app::LoadConfig(cl.ok() ? *cl : app::CommandLine{}, "gpuattr.yaml", file);
}

TEST(LogAndWebSettings, LogFormatAndTelemetryPath) {
  auto d = Load({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->log_format, log::LineFormat::kLogfmt);
  EXPECT_EQ(d->web.telemetry_path, "/metrics");
  auto c = Load({"--log.format", "json", "--web.telemetry-path", "/gpuattr/metrics"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->log_format, log::LineFormat::kJson);
  EXPECT_EQ(c->web.telemetry_path, "/gpuattr/metrics");
  auto f = Load({}, "log: {format: json}\nweb: {telemetry_path: /m}\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->log_format, log::LineFormat::kJson);
  EXPECT_EQ(f->web.telemetry_path, "/m");

  auto bad_format = Load({"--log.format", "text"});
  ASSERT_FALSE(bad_format.ok());
  EXPECT_THAT(bad_format.error().message, HasSubstr("--log.format"));
  EXPECT_THAT(bad_format.error().message, HasSubstr("logfmt or json"));
  for (const char* path : {"metrics", "/healthz", "/", "/a b", "/m?x"}) {
    auto bad = Load({"--web.telemetry-path", path});
    ASSERT_FALSE(bad.ok()) << path;
    EXPECT_THAT(bad.error().message, HasSubstr("--web.telemetry-path")) << path;
  }
  auto bad_file = Load({}, "web: {telemetry_path: /readyz}\n");
  ASSERT_FALSE(bad_file.ok());
  EXPECT_THAT(bad_file.error().message, HasSubstr("web.telemetry_path"));
}

}  // namespace
}  // namespace gpuattr
