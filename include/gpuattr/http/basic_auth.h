// HTTP basic auth against bcrypt hashes, as the Prometheus exporter-toolkit's web config file
// (`basic_auth_users: {user: <bcrypt hash>}`) has them. Hashes are verified by the system's
// libcrypt (libxcrypt: $2a$, $2b$ and $2y$).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::http {

struct BcryptUser {
  std::string username;
  std::string hash;  // "$2y$10$..." (60 characters); never logged or shown
  bool operator==(const BcryptUser&) const = default;
};

// Whether `hash` is a bcrypt hash libcrypt can verify. Errors say what is wrong with it
// (without the hash itself).
Status CheckBcryptHash(std::string_view hash);

// A bcrypt hash of `password` with a fresh random salt ($2b$, `cost` 4..31).
Result<std::string> BcryptHash(std::string_view password, int cost);

enum class AuthVerdict { kAccepted, kRejected, kNeedsBcrypt };

// Verifies "Authorization: Basic ..." headers. bcrypt costs about 0.1-0.2 s per check at the
// usual cost of 10-12, so each user's last verified password is remembered as an HMAC-SHA-256
// under a key drawn at start (never the password itself): a scraper sending the same
// credentials every 15 s pays bcrypt once. Thread-safe.
class BasicAuth {
 public:
  // Every hash is checked with CheckBcryptHash; errors name the user.
  static Result<std::unique_ptr<BasicAuth>> Make(std::vector<BcryptUser> users);

  // True when `header` ("Basic base64(user:password)", scheme case-insensitive) names a user
  // whose hash matches the password. Every check that runs bcrypt runs 2^(highest configured
  // cost) rounds, whatever the user's own cost and for unknown users too (no user enumeration by
  // timing); remembered passwords are compared in constant time.
  bool Check(std::string_view header);

  // The bcrypt rounds (2^cost per hash computed) Check has run so far: what makes its time.
  uint64_t bcrypt_work() const { return work_.load(); }

  // Check without bcrypt, in microseconds: kAccepted for a user's remembered password, kRejected
  // for a header that names no user and password, else kNeedsBcrypt (unknown users too, so that
  // they wait as long as known ones). The server answers remembered credentials at once and
  // queues the rest for its one bcrypt thread (docs/security.md#serving).
  AuthVerdict CheckRemembered(std::string_view header);

 private:
  using Digest = std::array<unsigned char, 32>;
  struct User {
    std::string hash;
    bool remembered = false;
    Digest password_mac{};
  };
  BasicAuth() = default;
  struct Wipe;
  Digest Mac(std::string_view password) const;
  bool Remembered(const User& user, const Digest& mac);  // in constant time
  static bool Parse(std::string_view header, std::string& name, std::string& password);

  std::map<std::string, User, std::less<>> users_;
  std::string dummy_hash_;  // checked for unknown users, at the highest configured cost
  int max_cost_ = 4;
  std::atomic<uint64_t> work_{0};
  std::array<unsigned char, 32> key_{};
  std::mutex mu_;  // guards User::remembered and password_mac
};

}  // namespace gpuattr::http
