#include "gpuattr/http/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpuattr::http {
namespace {

std::string Base64Decode(std::string_view in, bool& ok) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  ok = true;
  for (char c : in) {
    int v = value(c);
    if (v < 0) {
      ok = false;
      return {};
    }
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

int Cost(std::string_view hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

// libcrypt's verdict on `password` under `hash` (the hash's own salt and cost); adds the 2^cost
// rounds it computes to `work`. crypt_data is 32 KiB: on the heap, not on a worker's stack.
bool CryptMatches(const std::string& password, const std::string& hash,
                  std::atomic<uint64_t>& work) {
  work += uint64_t{1} << Cost(hash);
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  if (!out) return false;
  const size_t n = std::strlen(out);
  // Both are 60 bytes for a valid bcrypt hash; the comparison does not stop at a difference.
  return n == hash.size() && CRYPTO_memcmp(out, hash.data(), n) == 0;
}

}  // namespace

Status CheckBcryptHash(std::string_view hash) {
  auto bad = [](std::string why) { return MakeError(ErrorCode::kInvalidArgument, std::move(why)); };
  if (!(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$")))
    return bad("not a bcrypt hash (it must start with $2a$, $2b$ or $2y$, as htpasswd -B writes)");
  if (hash.size() != 60 || hash[6] != '$' || !std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5])))
    return bad("malformed bcrypt hash (expected 60 characters: $2y$COST$ and 53 more)");
  if (Cost(hash) < 4 || Cost(hash) > 31) return bad("bcrypt cost outside 4..31");
  auto data = std::make_unique<crypt_data>();
  // A hash libcrypt cannot use returns null (crypt_rn); this also tries its salt.
  std::string h(hash);
  if (!crypt_rn("", h.c_str(), data.get(), sizeof(crypt_data)))
    return bad("bcrypt hash rejected by libcrypt");
  return Status::Ok();
}

Result<std::string> BcryptHash(std::string_view password, int cost) {
  if (password.find('\0') != std::string_view::npos)
    return MakeError(ErrorCode::kInvalidArgument, "password holds a NUL byte");
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt))
    return MakeError(ErrorCode::kInternal, "libcrypt cannot make a bcrypt salt");
  auto data = std::make_unique<crypt_data>();
  std::string pw(password);
  const char* out = crypt_rn(pw.c_str(), salt, data.get(), sizeof(crypt_data));
  OPENSSL_cleanse(pw.data(), pw.size());
  if (!out) return MakeError(ErrorCode::kInternal, "libcrypt cannot make a bcrypt hash");
  return std::string(out);
}

Result<std::unique_ptr<BasicAuth>> BasicAuth::Make(std::vector<BcryptUser> users) {
  std::unique_ptr<BasicAuth> auth(new BasicAuth());
  if (RAND_bytes(auth->key_.data(), static_cast<int>(auth->key_.size())) != 1)
    return MakeError(ErrorCode::kInternal, "no random bytes for the password cache key");
  int cost = 4;
  for (BcryptUser& u : users) {
    if (Status s = CheckBcryptHash(u.hash); !s)
      return MakeError(ErrorCode::kInvalidArgument,
                       "basic_auth_users: user \"" + u.username + "\": " + s.message());
    cost = std::max(cost, Cost(u.hash));
    auth->users_[u.username].hash = std::move(u.hash);
  }
  auto dummy = BcryptHash("gpuattr: no such user", cost);
  if (!dummy.ok()) return dummy.error();
  auth->dummy_hash_ = std::move(*dummy);
  auth->max_cost_ = cost;
  return auth;
}

BasicAuth::Digest BasicAuth::Mac(std::string_view password) const {
  Digest d{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(password.data()), password.size(), d.data(), &len);
  return d;
}

// The user name and password of "Basic base64(user:password)" (scheme case-insensitive), or
// false. The caller wipes the password.
bool BasicAuth::Parse(std::string_view header, std::string& name, std::string& password) {
  constexpr std::string_view kPrefix = "Basic ";
  if (header.size() <= kPrefix.size()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kPrefix[i])))
      return false;
  bool ok = false;
  std::string given = Base64Decode(header.substr(kPrefix.size()), ok);
  size_t colon = given.find(':');
  if (ok && colon != std::string::npos) {
    name = given.substr(0, colon);
    password = given.substr(colon + 1);
  }
  OPENSSL_cleanse(given.data(), given.size());
  // crypt reads C strings: a NUL would cut the password short.
  return ok && colon != std::string::npos && password.find('\0') == std::string::npos;
}

bool BasicAuth::Remembered(const User& user, const Digest& mac) {
  std::lock_guard<std::mutex> lock(mu_);
  return user.remembered && CRYPTO_memcmp(mac.data(), user.password_mac.data(), mac.size()) == 0;
}

struct BasicAuth::Wipe {
  std::string& s;
  ~Wipe() { OPENSSL_cleanse(s.data(), s.size()); }
};

AuthVerdict BasicAuth::CheckRemembered(std::string_view header) {
  std::string name, password;
  Wipe wipe{password};
  if (!Parse(header, name, password)) return AuthVerdict::kRejected;
  auto it = users_.find(name);
  if (it == users_.end()) return AuthVerdict::kNeedsBcrypt;  // as slow as a known user's check
  return Remembered(it->second, Mac(password)) ? AuthVerdict::kAccepted : AuthVerdict::kNeedsBcrypt;
}

bool BasicAuth::Check(std::string_view header) {
  std::string name, password;
  Wipe wipe{password};
  if (!Parse(header, name, password)) return false;
  auto it = users_.find(name);
  if (it == users_.end()) {
    CryptMatches(password, dummy_hash_, work_);  // the work a known user's check takes
    return false;
  }
  User& user = it->second;
  const Digest mac = Mac(password);
  if (Remembered(user, mac)) return true;
  const bool right = CryptMatches(password, user.hash, work_);
  // A user whose hash is cheaper than the highest cost is topped up with the dummy hash at costs
  // c, c+1, ..., max-1: 2^c + (2^max - 2^c) = 2^max rounds, as for every user and unknown name,
  // so that no user's answer tells its cost (or that it exists) by its time.
  std::string dummy = dummy_hash_;
  for (int cost = Cost(user.hash); cost < max_cost_; ++cost) {
    dummy[4] = static_cast<char>('0' + cost / 10);
    dummy[5] = static_cast<char>('0' + cost % 10);
    CryptMatches(password, dummy, work_);
  }
  if (!right) return false;
  std::lock_guard<std::mutex> lock(mu_);
  user.remembered = true;
  user.password_mac = mac;
  return true;
}

}  // namespace gpuattr::http
