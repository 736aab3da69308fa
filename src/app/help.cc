// --help, written from the settings table: prose around one entry per flag and config file key.
#include <sstream>

#include "gpuattr/app/options.h"
#include "gpuattr/app/settings.h"
#include "help_text.h"

namespace gpuattr::app {
namespace {

constexpr size_t kWidth = 100;  // the repository's line length
constexpr size_t kIndent = 29;  // where an entry's text starts

// `text` wrapped at spaces into lines of at most kWidth, each indented by kIndent.
void Wrap(std::ostringstream& out, std::string_view text) {
  std::string line;
  auto flush = [&] {
    if (!line.empty()) out << std::string(kIndent, ' ') << line << "\n";
    line.clear();
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && kIndent + line.size() + 1 + word.size() > kWidth) flush();
    if (!word.empty()) line += (line.empty() ? "" : " ") + std::string(word);
    pos = end + 1;
  }
  flush();
}

void Entry(std::ostringstream& out, const Setting& s) {
  std::ostringstream body;
  Wrap(body, s.help);
  if (!s.flag.empty() && !s.key.empty()) Wrap(body, "Config file: " + s.key + ".");
  std::string shown = s.ShownDefault();
  if (!shown.empty() && shown.back() != '.') shown += ".";
  const std::string def = shown.empty() ? "" : "Default: " + shown;
  const std::string example = s.example.empty() ? "" : "Example: " + s.example;
  if (!def.empty() && !example.empty() && kIndent + def.size() + 3 + example.size() <= kWidth) {
    body << std::string(kIndent, ' ') << def << "   " << example << "\n";  // fits: no Wrap
  } else {
    if (!def.empty()) Wrap(body, def);
    if (!example.empty()) Wrap(body, example);
  }
  const std::string head = "  " + SettingHead(s);
  std::string text = body.str();
  if (head.size() + 2 <= kIndent) {
    text.replace(0, head.size(), head);  // on the first line, over its indentation
    out << text;
  } else {
    out << head << "\n" << text;
  }
}

}  // namespace

std::string SettingHead(const Setting& s) {
  std::string head = s.flag.empty() ? s.key : "--" + s.flag;
  if (!s.short_flag.empty()) head = "-" + s.short_flag + ", " + head;
  if (!s.value_name.empty()) head += " " + s.value_name;
  return head;
}

std::string HelpText() {
  std::ostringstream out;
  out << kIntro;
  const std::vector<Setting>& all = Settings();  // grouped: each group's rows are together
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || all[i].group != all[i - 1].group)
      out << "\n" << GroupTitle(all[i].group) << ":\n";
    Entry(out, all[i]);
  }
  out << kOutro;
  return out.str();
}

}  // namespace gpuattr::app
