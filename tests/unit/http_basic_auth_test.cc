// bcrypt basic auth through the system's libcrypt (http/basic_auth.h).
#include "gpuattr/http/basic_auth.h"

#include <crypt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace gpuattr::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A hash made by libcrypt directly (not by the code under test), with a salt of `prefix`.
std::string CryptHash(const char* password, const char* prefix, unsigned long cost = 4) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn(prefix, cost, nullptr, 0, salt, sizeof salt)) return "";
  crypt_data data{};
  const char* hash = crypt_r(password, salt, &data);
  return hash ? hash : "";
}

std::string BasicHeader(std::string_view user_colon_password) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out = "Basic ";
  size_t i = 0;
  for (; i + 2 < user_colon_password.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(user_colon_password[i]) << 16) |
                 (static_cast<unsigned char>(user_colon_password[i + 1]) << 8) |
                 static_cast<unsigned char>(user_colon_password[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kAlphabet[(n >> k) & 63];
  }
  if (size_t rest = user_colon_password.size() - i; rest > 0) {
    unsigned n = static_cast<unsigned char>(user_colon_password[i]) << 16;
    if (rest == 2) n |= static_cast<unsigned char>(user_colon_password[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

TEST(Bcrypt, DebiansLibcryptMakesAndVerifies2bAnd2y) {
  for (const char* prefix : {"$2b$", "$2y$", "$2a$"}) {
    std::string hash = CryptHash("pw", prefix);
    ASSERT_EQ(hash.size(), 60u) << prefix;
    EXPECT_TRUE(CheckBcryptHash(hash).ok()) << prefix;
  }
  auto made = BcryptHash("pw", 4);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_TRUE(made->starts_with("$2b$04$"));
  EXPECT_TRUE(CheckBcryptHash(*made).ok());
}

TEST(Bcrypt, OtherHashesAreRefusedWithoutShowingThem) {
  const std::string good = CryptHash("pw", "$2y$");
  for (const std::string& bad :
       {std::string("plain"), std::string("$1$salt$hash"), std::string("$6$salt$abc"),
        std::string("$2x$04$abcdefghijklmnopqrstuu"), good.substr(0, 59), good + "x",
        "$2y$99" + good.substr(6), "$2y$ab" + good.substr(6)}) {
    Status s = CheckBcryptHash(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.message(), Not(HasSubstr(bad))) << bad;
  }
}

TEST(BasicAuth, RightWrongAndUnknownUsers) {
  auto auth = BasicAuth::Make(
      {{"prometheus", CryptHash("s3cret", "$2y$")}, {"grafana", CryptHash("other:pass", "$2b$")}});
  ASSERT_TRUE(auth.ok()) << auth.error().message;
  BasicAuth& a = **auth;
  EXPECT_TRUE(a.Check(BasicHeader("prometheus:s3cret")));
  EXPECT_TRUE(a.Check(BasicHeader("prometheus:s3cret")));   // remembered: the same answer
  EXPECT_TRUE(a.Check(BasicHeader("grafana:other:pass")));  // ':' in a password is kept
  EXPECT_FALSE(a.Check(BasicHeader("prometheus:s3cretx")));
  EXPECT_FALSE(a.Check(BasicHeader("prometheus:")));
  EXPECT_FALSE(a.Check(BasicHeader("grafana:s3cret")));  // another user's password
  EXPECT_FALSE(a.Check(BasicHeader("nobody:s3cret")));   // unknown user
  EXPECT_FALSE(a.Check(BasicHeader("prometheus")));      // no ':'
  EXPECT_FALSE(a.Check(BasicHeader(std::string("prometheus:s3cret\0x", 19))));  // NUL
  EXPECT_FALSE(a.Check("Basic !!!!"));
  EXPECT_FALSE(a.Check("Bearer abc"));
  EXPECT_FALSE(a.Check(""));
  // A remembered password does not let another one in.
  EXPECT_FALSE(a.Check(BasicHeader("prometheus:wrong")));
  EXPECT_TRUE(a.Check(BasicHeader("prometheus:s3cret")));
}

TEST(BasicAuth, AnUnusableHashNamesItsUser) {
  auto auth = BasicAuth::Make({{"prometheus", "s3cret"}});  // a password where a hash belongs
  ASSERT_FALSE(auth.ok());
  EXPECT_THAT(auth.error().message, HasSubstr("\"prometheus\""));
  EXPECT_THAT(auth.error().message, HasSubstr("not a bcrypt hash"));
  EXPECT_THAT(auth.error().message, Not(HasSubstr("s3cret")));
}

TEST(BasicAuth, RememberedPasswordsAreAnsweredWithoutBcrypt) {
  auto made = BasicAuth::Make({{"prometheus", CryptHash("s3cret", "$2y$")}});
  ASSERT_TRUE(made.ok()) << made.error().message;
  BasicAuth& a = **made;
  // Nothing is remembered before a bcrypt check succeeded.
  EXPECT_EQ(a.CheckRemembered(BasicHeader("prometheus:s3cret")), AuthVerdict::kNeedsBcrypt);
  EXPECT_FALSE(a.Check(BasicHeader("prometheus:wrong")));
  EXPECT_EQ(a.CheckRemembered(BasicHeader("prometheus:s3cret")), AuthVerdict::kNeedsBcrypt);
  EXPECT_TRUE(a.Check(BasicHeader("prometheus:s3cret")));
  EXPECT_EQ(a.CheckRemembered(BasicHeader("prometheus:s3cret")), AuthVerdict::kAccepted);
  // Anything else that names a user and a password needs bcrypt: another password (it may be
  // right), an unknown user (as slow as a known one).
  EXPECT_EQ(a.CheckRemembered(BasicHeader("prometheus:s3cretx")), AuthVerdict::kNeedsBcrypt);
  EXPECT_EQ(a.CheckRemembered(BasicHeader("nobody:s3cret")), AuthVerdict::kNeedsBcrypt);
  // What names no user and password is refused at once.
  EXPECT_EQ(a.CheckRemembered("Bearer abc"), AuthVerdict::kRejected);
  EXPECT_EQ(a.CheckRemembered("Basic !!!"), AuthVerdict::kRejected);
  EXPECT_EQ(a.CheckRemembered(BasicHeader("no colon")), AuthVerdict::kRejected);
  EXPECT_EQ(a.CheckRemembered(BasicHeader(std::string("prometheus:s3\0cret", 18))),
            AuthVerdict::kRejected);
}

// Issue 25: bcrypt's time is 2^cost rounds, so a user whose hash is cheaper than another's (or
// than the dummy of unknown names) would be told apart by how long a wrong password takes. Every
// check that needs bcrypt does the rounds of the highest configured cost.
TEST(BasicAuth, EveryBcryptCheckDoesTheWorkOfTheHighestCost) {
  auto made = BasicAuth::Make({{"cheap", CryptHash("s3cret", "$2y$", 4)},
                               {"middle", CryptHash("s3cret", "$2b$", 5)},
                               {"dear", CryptHash("s3cret", "$2b$", 7)}});
  ASSERT_TRUE(made.ok()) << made.error().message;
  BasicAuth& a = **made;
  auto work_of = [&](const std::string& credentials, bool expected) {
    const uint64_t before = a.bcrypt_work();
    EXPECT_EQ(a.Check(BasicHeader(credentials)), expected) << credentials;
    return a.bcrypt_work() - before;
  };
  constexpr uint64_t kHighest = 1u << 7;
  EXPECT_EQ(work_of("cheap:wrong", false), kHighest);
  EXPECT_EQ(work_of("middle:wrong", false), kHighest);
  EXPECT_EQ(work_of("dear:wrong", false), kHighest);
  EXPECT_EQ(work_of("nobody:wrong", false), kHighest);
  EXPECT_EQ(work_of("cheap:s3cret", true), kHighest);  // a right password the same
  EXPECT_EQ(work_of("cheap:s3cret", true), 0u);        // remembered: no bcrypt at all
  EXPECT_EQ(work_of("cheap:wrong", false), kHighest);
  EXPECT_EQ(work_of("middle:s3cret", true), kHighest);
}

TEST(BasicAuth, UsersOfOneCostPayOneHash) {
  auto made = BasicAuth::Make({{"prometheus", CryptHash("s3cret", "$2y$", 5)}});
  ASSERT_TRUE(made.ok()) << made.error().message;
  BasicAuth& a = **made;
  EXPECT_FALSE(a.Check(BasicHeader("prometheus:wrong")));
  EXPECT_FALSE(a.Check(BasicHeader("nobody:wrong")));
  EXPECT_EQ(a.bcrypt_work(), 2u << 5);
}

}  // namespace
}  // namespace gpuattr::http
