// A fresh directory per test under gtest's temporary directory, removed with everything in it.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace gpuattr::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "gpuattr") {
    std::string tmpl =
        (std::filesystem::path(::testing::TempDir()) / (prefix + "-XXXXXX")).string();
    if (const char* made = ::mkdtemp(tmpl.data())) path_ = made;  // else empty: callers check
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuattr::testing
