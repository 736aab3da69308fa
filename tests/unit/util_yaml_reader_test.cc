// The one YAML field reader of the config file, the web config file and kubeconfigs.
#include "gpuattr/util/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuattr::yaml {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Reads `text` with `fn` and returns the error message ("" when it worked).
std::string ErrorOf(const std::string& text,
                    const std::function<Status(const Reader&, const YAML::Node&)>& fn) {
  const Reader r("f.yaml");
  Status s = r.Read(text, [&](const YAML::Node& root) { return fn(r, root); });
  return s.ok() ? "" : s.message();
}

TEST(YamlReader, PathsAndFailures) {
  EXPECT_EQ(Join("", "a"), "a");
  EXPECT_EQ(Join("a.b", "c"), "a.b.c");
  EXPECT_EQ(Index("targets", 2), "targets[2]");
  const Reader r("config.yaml");
  EXPECT_EQ(r.Fail("scrape.timeout", "bad").message, "config.yaml: scrape.timeout: bad");
  EXPECT_EQ(r.Fail("", "bad").message, "config.yaml: (top level): bad");
  EXPECT_EQ(r.Fail("x", "bad").code, ErrorCode::kInvalidArgument);
}

TEST(YamlReader, NotYamlNamesTheLineAndNotTheText) {
  const std::string message = ErrorOf("a: 1\nb: [secret-token\n",
                                      [](const Reader&, const YAML::Node&) { return Status(); });
  EXPECT_THAT(message, StartsWith("f.yaml: invalid YAML (line "));
  EXPECT_THAT(message, Not(HasSubstr("secret-token")));
  // An exception escaping the reading function is caught too.
  EXPECT_THAT(ErrorOf("a: x\n",
                      [](const Reader&, const YAML::Node& root) {
                        (void)root["a"].as<int>();
                        return Status();
                      }),
              StartsWith("f.yaml: "));
}

TEST(YamlReader, KeysKnownRefusedAndUnknown) {
  auto keys = [](const std::string& text) {
    return ErrorOf(text, [](const Reader& r, const YAML::Node& root) {
      return r.Keys(Reader::Child(root, "s"), "s", {"a", "b"}, {{"old", "moved to s.a"}});
    });
  };
  EXPECT_EQ(keys("s: {a: 1, b: 2}\n"), "");
  EXPECT_EQ(keys("s:\n"), "");    // null: an empty mapping
  EXPECT_EQ(keys("t: 1\n"), "");  // absent
  EXPECT_EQ(keys("s: {c: 1}\n"), "f.yaml: s.c: unknown key (known keys here: a, b)");
  EXPECT_EQ(keys("s: {old: 1}\n"), "f.yaml: s.old: moved to s.a");
  EXPECT_EQ(keys("s: [a]\n"), "f.yaml: s: expected a mapping");
  EXPECT_EQ(keys("s: {[a]: 1}\n"), "f.yaml: s: non-scalar key");
}

TEST(YamlReader, ScalarsParsedWithThePath) {
  auto parse = [](const std::string& text) {
    return ErrorOf(text, [](const Reader& r, const YAML::Node& root) -> Status {
      auto v = r.Parse(Reader::Child(root, "n"), "x.n", [](std::string_view t) -> Result<int> {
        if (t != "1")
          return MakeError(ErrorCode::kInvalidArgument, "not one: \"" + std::string(t) + "\"");
        return 1;
      });
      return v.status();
    });
  };
  EXPECT_EQ(parse("n: 1\n"), "");
  EXPECT_EQ(parse("n: 2\n"), "f.yaml: x.n: not one: \"2\"");
  EXPECT_EQ(parse("n: [1]\n"), "f.yaml: x.n: expected a single value");
}

TEST(YamlReader, FieldsOfAMapping) {
  const Reader r("kubeconfig /k");
  const YAML::Node doc =
      YAML::Load("s: abc\nb: yes\nbad_b: maybe\nl: [x, y]\nbad_l: [[x]]\nm: {k: v}\nnull_s: ~\n");
  std::string s = "kept";
  EXPECT_TRUE(r.String(doc, "", "absent", s).ok());
  EXPECT_TRUE(r.String(doc, "", "null_s", s).ok());
  EXPECT_EQ(s, "kept");
  EXPECT_TRUE(r.String(doc, "", "s", s).ok());
  EXPECT_EQ(s, "abc");
  EXPECT_EQ(r.String(doc, "top", "m", s).message(), "kubeconfig /k: top.m: expected a string");
  bool b = false;
  EXPECT_TRUE(r.Bool(doc, "", "b", b).ok());
  EXPECT_TRUE(b);
  EXPECT_EQ(r.Bool(doc, "", "bad_b", b).message(), "kubeconfig /k: bad_b: expected true or false");
  std::vector<std::string> l;
  EXPECT_TRUE(r.StringList(doc, "", "l", l).ok());
  EXPECT_EQ(l, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r.StringList(doc, "", "bad_l", l).message(),
            "kubeconfig /k: bad_l: expected a list of strings");
  EXPECT_EQ(r.StringList(doc, "", "s", l).message(),
            "kubeconfig /k: s: expected a list of strings");
  auto items = r.Sequence(doc["l"], "l");
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), 2u);
  EXPECT_EQ(r.Sequence(doc["m"], "m").error().message, "kubeconfig /k: m: expected a list");
  // Child never inserts into the document, and treats null as absent.
  EXPECT_FALSE(Reader::Child(doc, "nope").IsDefined());
  EXPECT_FALSE(Reader::Child(doc, "null_s").IsDefined());
  EXPECT_FALSE(Reader::Child(doc["s"], "x").IsDefined());
  EXPECT_FALSE(doc["nope"].IsDefined());
}

}  // namespace
}  // namespace gpuattr::yaml
