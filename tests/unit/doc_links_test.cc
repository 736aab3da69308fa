// Links into the docs resolve. Code comments cite the rules they follow as docs/design.md#tiers,
// so a renamed heading or a moved page must fail here, naming file:line: every `docs/<name>.md`
// and `docs/<name>.md#anchor` mention in the source tree, and every relative Markdown link in
// README.md and docs/, must name a file that exists and, with an anchor, a heading of it (slugged
// as GitHub slugs headings). References by number to the external design contract, which is not
// in the repository, must be gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/paths.h"

namespace fs = std::filesystem;

namespace {

// GitHub's slug of a heading: lower case; letters, digits, '-' and '_' kept; spaces become '-';
// everything else (punctuation, symbols, dashes, arrows) dropped. A link's text stands for it.
std::string GithubSlug(std::string_view heading) {
  std::string text;
  for (size_t i = 0; i < heading.size(); ++i) {  // [text](url) → text
    if (heading[i] == ']' && i + 1 < heading.size() && heading[i + 1] == '(') {
      size_t close = heading.find(')', i);
      if (close != std::string_view::npos) {
        i = close;
        continue;
      }
    }
    if (heading[i] != '[') text += heading[i];
  }
  std::string slug;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (std::isalnum(c) || c == '-' || c == '_')
        slug += static_cast<char>(std::tolower(c));
      else if (c == ' ')
        slug += '-';
      ++i;
      continue;
    }
    // A multi-byte character: kept when it is a letter of the common scripts (Latin, Greek,
    // Cyrillic, CJK), dropped when it is punctuation or a symbol (—, →, ≤, ×, §, ·).
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len && i + k < text.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    const bool letter = (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) ||
                        (cp >= 0x370 && cp <= 0x52F) || (cp >= 0x3040 && cp <= 0x9FFF);
    if (letter) {
      if (cp >= 0xC0 && cp <= 0xDE) {  // Latin-1 upper case → lower case, still 2 bytes
        cp += 0x20;
        slug += static_cast<char>(0xC0 | (cp >> 6));
        slug += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        slug.append(text, i, len);
      }
    }
    i += len;
  }
  return slug;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool FenceLine(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  return i != std::string_view::npos && i <= 3 &&
         (line.substr(i, 3) == "```" || line.substr(i, 3) == "~~~");
}

// The anchors of a Markdown file: its headings' slugs (outside code fences; repeated headings get
// -1, -2, ... as on GitHub) and explicit <a id="..."> / <a name="...">.
std::set<std::string> Anchors(const std::string& markdown) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool fenced = false;
  for (const std::string& line : Lines(markdown)) {
    if (FenceLine(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    size_t i = line.find_first_not_of(' ');
    if (i != std::string::npos && i <= 3 && line[i] == '#') {
      size_t level = line.find_first_not_of('#', i) - i;
      if (level <= 6 && i + level < line.size() && line[i + level] == ' ') {
        std::string text = line.substr(i + level + 1);
        while (!text.empty() && (text.back() == ' ' || text.back() == '#')) text.pop_back();
        std::string slug = GithubSlug(text);
        int n = seen[slug]++;
        anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
      }
    }
    for (std::string_view key : {"<a id=\"", "<a name=\""}) {
      for (size_t at = line.find(key); at != std::string::npos; at = line.find(key, at + 1)) {
        size_t begin = at + key.size(), end = line.find('"', begin);
        if (end != std::string::npos) anchors.insert(line.substr(begin, end - begin));
      }
    }
  }
  return anchors;
}

bool SlugChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

class LinkChecker {
 public:
  explicit LinkChecker(fs::path root) : root_(std::move(root)) {}

  // Problems in one file, as "file:line: what".
  std::vector<std::string> Check(const std::string& rel, const std::string& text) {
    std::vector<std::string> problems;
    CheckDocsMentions(rel, text, problems);
    CheckContractReferences(rel, text, problems);
    if (rel.ends_with(".md")) CheckMarkdownLinks(rel, text, problems);
    return problems;
  }

 private:
  static size_t LineOf(const std::string& text, size_t pos) {
    return 1 + std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n');
  }

  // Resolves `target` (a file and an optional anchor); "" when it does.
  std::string Resolve(const fs::path& file, const std::string& anchor) {
    std::error_code ec;
    if (!fs::exists(file, ec)) return "no such file";
    if (anchor.empty() || file.extension() != ".md") return "";
    const std::string key = file.lexically_normal().string();
    auto it = anchors_.find(key);
    if (it == anchors_.end())
      it = anchors_.emplace(key, Anchors(gpuattr::testing::ReadFile(file))).first;
    return it->second.contains(anchor) ? "" : "no heading with anchor #" + anchor;
  }

  // `docs/<name>.md` and `docs/<name>.md#anchor` anywhere (comments, YAML, prose), relative to the
  // repository root. Not when part of a longer path or URL (`.../master/docs/x.md`).
  void CheckDocsMentions(const std::string& rel, const std::string& text,
                         std::vector<std::string>& problems) {
    for (size_t at = text.find("docs/"); at != std::string::npos; at = text.find("docs/", at + 1)) {
      if (at > 0) {
        char before = text[at - 1];
        if (std::isalnum(static_cast<unsigned char>(before)) || before == '/' || before == '.' ||
            before == '-' || before == '_')
          continue;
      }
      size_t end = at + 5;
      while (end < text.size() && (SlugChar(text[end]) || text[end] == '.')) ++end;
      std::string name = text.substr(at + 5, end - at - 5);
      while (!name.empty() && name.back() == '.') name.pop_back();  // a sentence's full stop
      if (!name.ends_with(".md")) continue;
      end = at + 5 + name.size();
      std::string anchor;
      if (end < text.size() && text[end] == '#') {
        size_t a = end + 1;
        while (a < text.size() && SlugChar(text[a])) ++a;
        anchor = text.substr(end + 1, a - end - 1);
      }
      std::string why = Resolve(root_ / "docs" / name, anchor);
      if (!why.empty())
        problems.push_back(rel + ":" + std::to_string(LineOf(text, at)) + ": docs/" + name +
                           (anchor.empty() ? "" : "#" + anchor) + ": " + why);
    }
  }

  // The contract's name followed by "section", "sections", the section sign or a number (also
  // wrapped over a comment line), and the contract's file name alone: the contract is not in the
  // repository, so cite docs/design.md#<anchor>. Spelled in pieces here, so that neither this check
  // nor the script that rewrote the references matches this file.
  void CheckContractReferences(const std::string& rel, const std::string& text,
                               std::vector<std::string>& problems) {
    static const std::string kWord = std::string("DESI") + "GN";
    for (size_t at = text.find(kWord); at != std::string::npos; at = text.find(kWord, at + 1)) {
      if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) continue;
      size_t i = at + kWord.size();
      bool bare_md = text.compare(i, 3, ".md") == 0;
      if (bare_md) i += 3;
      while (i < text.size() && std::string_view(" \t\n/#*").find(text[i]) != std::string::npos)
        ++i;
      const bool numbered = text.compare(i, 7, "section") == 0 ||
                            text.compare(i, 2, "\xC2\xA7") == 0 ||
                            (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])));
      if (!numbered && !bare_md) continue;
      std::string quoted = text.substr(at, std::min<size_t>(i - at + 10, 40));
      std::replace(quoted.begin(), quoted.end(), '\n', ' ');
      problems.push_back(rel + ":" + std::to_string(LineOf(text, at)) + ": '" + quoted +
                         "...' cites the external design contract: link docs/design.md#<anchor>");
    }
  }

  // [text](target) in Markdown, outside code fences: a relative target must exist, relative to
  // the file; an anchor (also #anchor alone, in the same file) must be one of its headings.
  void CheckMarkdownLinks(const std::string& rel, const std::string& text,
                          std::vector<std::string>& problems) {
    const fs::path dir = (root_ / rel).parent_path();
    bool fenced = false;
    size_t line_no = 0;
    for (const std::string& line : Lines(text)) {
      ++line_no;
      if (FenceLine(line)) {
        fenced = !fenced;
        continue;
      }
      if (fenced) continue;
      for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 1)) {
        size_t close = line.find(')', at);
        if (close == std::string::npos) break;
        std::string target = line.substr(at + 2, close - at - 2);
        if (target.empty() || target.find(' ') != std::string::npos ||
            target.find("://") != std::string::npos || target.starts_with("mailto:"))
          continue;
        size_t hash = target.find('#');
        std::string path = target.substr(0, hash);
        std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
        std::string why;
        if (path.empty())  // #anchor: a heading of this file
          why = Anchors(text).contains(anchor) ? "" : "no heading with anchor #" + anchor;
        else
          why = Resolve(dir / path, anchor);
        if (!why.empty())
          problems.push_back(rel + ":" + std::to_string(line_no) + ": link (" + target +
                             "): " + why);
      }
    }
  }

  fs::path root_;
  std::map<std::string, std::set<std::string>> anchors_;
};

// The files that cite docs: sources, tests, docs, config, dashboards, scripts, and the fixtures'
// READMEs (exporter bodies and golden outputs are data, not prose).
std::vector<std::string> ScannedFiles(const fs::path& root) {
  static const std::set<std::string> kExtensions = {
      ".cc", ".h", ".in", ".py", ".sh", ".md", ".yml", ".yaml", ".json", ".service", ".cmake"};
  std::vector<std::string> files = {"README.md"};
  for (const char* top :
       {"src", "include", "tests", "docs", "config", "grafana", "scripts", "fixtures"}) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (entry.is_symlink() || !entry.is_regular_file()) continue;  // a link: its target counts
      const std::string rel = entry.path().lexically_relative(root).generic_string();
      const std::string ext = entry.path().extension().string();
      const bool cmake = entry.path().filename() == "CMakeLists.txt";
      if (!cmake && !kExtensions.contains(ext)) continue;
      if (rel.starts_with("fixtures/") && ext != ".md") continue;
      if (rel.starts_with("tests/golden/") && ext == ".json") continue;
      files.push_back(rel);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(DocLinks, GithubSlugs) {
  EXPECT_EQ(GithubSlug("Trust, limits and failure"), "trust-limits-and-failure");
  EXPECT_EQ(GithubSlug("Allocation: the scheduler's view, and why GPU pods wait"),
            "allocation-the-schedulers-view-and-why-gpu-pods-wait");
  EXPECT_EQ(GithubSlug("JSON snapshot (`schema_version` 1)"), "json-snapshot-schema_version-1");
  EXPECT_EQ(GithubSlug("RBAC: one ClusterRole for all three"),
            "rbac-one-clusterrole-for-all-three");
  EXPECT_EQ(GithubSlug("Kubernetes access — the API client → cache"),
            "kubernetes-access--the-api-client--cache");
  EXPECT_EQ(GithubSlug("See [the page](page.md) Über"), "see-the-page-über");
}

TEST(DocLinks, RepeatedHeadingsAndExplicitAnchors) {
  const auto anchors = Anchors(
      "# Title\n## Limits\n```sh\n# not a heading\n```\n### Limits\n<a id=\"custom\"></a>\n");
  EXPECT_EQ(anchors, (std::set<std::string>{"title", "limits", "limits-1", "custom"}));
}

TEST(DocLinks, TheCheckerFindsWhatIsBroken) {
  LinkChecker checker(gpuattr::testing::SourceDir());
  // Built in pieces: this file must hold no reference of its own.
  const std::string docs = std::string("do") + "cs/";
  const std::string word = std::string("DESI") + "GN";
  const std::string text = "// ok " + docs + "design.md#tiers and " + docs + "app.md.\n" +
                           "// bad " + docs + "design.md#no-such-heading\n" +  //
                           "// bad " + docs + "no-such-page.md\n" +            //
                           "// old (" + word + " section 5) and (" + word +
                           "\n// sections 3 and 4) and " + word + " \xC2\xA7" + "10\n" +
                           "// fine: the " + word + "ER, toolkit/blob/master/" + docs + "web.md\n";
  const auto problems = checker.Check("src/x.cc", text);
  ASSERT_EQ(problems.size(), 5u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0], "src/x.cc:2: " + docs +
                             "design.md#no-such-heading: no heading with anchor "
                             "#no-such-heading");
  EXPECT_EQ(problems[1], "src/x.cc:3: " + docs + "no-such-page.md: no such file");
  EXPECT_TRUE(problems[2].starts_with("src/x.cc:4: '" + word + " section 5")) << problems[2];
  EXPECT_TRUE(problems[3].starts_with("src/x.cc:4: '" + word + " // sections")) << problems[3];
  EXPECT_TRUE(problems[4].starts_with("src/x.cc:5: '" + word + " \xC2\xA7")) << problems[4];

  const std::string md_file = docs + "x.md";
  const auto md = checker.Check(md_file,
                                "[a](design.md#tiers) [b](#nowhere) [c](nope.md)\n"
                                "```\n[d](inside-a-fence.md)\n```\n");
  ASSERT_EQ(md.size(), 2u) << ::testing::PrintToString(md);
  EXPECT_EQ(md[0], md_file + ":1: link (#nowhere): no heading with anchor #nowhere");
  EXPECT_EQ(md[1], md_file + ":1: link (nope.md): no such file");
}

// The real tree: every docs reference resolves, and no reference to the contract by number is
// left.
TEST(DocLinks, EveryReferenceInTheTreeResolves) {
  const fs::path root = gpuattr::testing::SourceDir();
  LinkChecker checker(root);
  const auto files = ScannedFiles(root);
  ASSERT_GT(files.size(), 100u) << "the source tree was not found at " << root;
  std::vector<std::string> problems;
  for (const std::string& rel : files) {
    for (std::string& p : checker.Check(rel, gpuattr::testing::ReadFile(root / rel)))
      problems.push_back(std::move(p));
  }
  std::string all;
  for (const std::string& p : problems) all += "\n  " + p;
  EXPECT_TRUE(problems.empty()) << problems.size() << " unresolved reference(s):" << all;
}

}  // namespace
