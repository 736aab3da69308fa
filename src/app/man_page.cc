// gpuattr(1), written from the settings table and the prose of --help (help_text.h): the same
// text as --help in man(7) markup, never a second copy kept by hand (docs/install.md#versions for
// the version in its header). `gpuattr --help-man` prints it; the build installs it.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "gpuattr/app/options.h"
#include "gpuattr/app/report_command.h"
#include "gpuattr/app/settings.h"
#include "gpuattr/build_info.h"
#include "help_text.h"

namespace gpuattr::app {
namespace {

// Text for roff: backslashes escaped, hyphens as \- (options render and search as typed), a
// line starting with '.' or '\'' protected by \& so it is not read as a request, and UTF-8
// characters as \[uXXXX] (groff reads its input as Latin-1 without preconv).
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0xC0) {
      const size_t len = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
      uint32_t cp = byte & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      for (size_t k = 1; k < len && i + 1 < text.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", static_cast<unsigned>(cp));
      out += buf;
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// The blocks of `text` separated by blank lines, each with its lines joined by spaces.
std::vector<std::string> Paragraphs(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (!current.empty()) out.push_back(current);
      current.clear();
      continue;
    }
    current += (current.empty() ? "" : "\n") + line;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

void Options(std::ostringstream& out) {
  const std::vector<Setting>& all = Settings();
  for (size_t i = 0; i < all.size(); ++i) {
    const Setting& s = all[i];
    if (i == 0 || s.group != all[i - 1].group) out << ".SS " << Roff(GroupTitle(s.group)) << "\n";
    out << ".TP\n.B " << Roff(SettingHead(s)) << "\n" << Roff(s.help) << "\n";
    if (!s.flag.empty() && !s.key.empty()) out << "Config file: " << Roff(s.key) << ".\n";
    std::string shown = s.ShownDefault();
    if (!shown.empty() && shown.back() != '.') shown += ".";
    if (!shown.empty()) out << "Default: " << Roff(shown) << "\n";
    if (!s.example.empty()) out << "Example: " << Roff(s.example) << "\n";
  }
}

// `gpuattr report`: its own help text, as one section (docs/accounting.md#the-report).
void Report(std::ostringstream& out) {
  out << ".SH \"THE REPORT COMMAND\"\n";
  const std::vector<std::string> blocks = Paragraphs(ReportHelpText());
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0) out << ".PP\n";
    out << ".nf\n" << Roff(blocks[i]) << "\n.fi\n";
  }
}

// The outro: "Endpoints: ..." and "Exit codes:" with one "  N  meaning" line per code.
void Outro(std::ostringstream& out) {
  for (const std::string& block : Paragraphs(kOutro)) {
    const size_t colon = block.find(':');
    if (colon == std::string::npos) continue;
    std::string title = block.substr(0, colon);
    for (char& c : title) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (title == "EXIT CODES") {
      out << ".SH \"EXIT STATUS\"\n";
      std::istringstream lines(block.substr(colon + 1));
      std::string line;
      while (std::getline(lines, line)) {
        const size_t code = line.find_first_not_of(' ');
        if (code == std::string::npos) continue;
        const size_t text = line.find_first_not_of(' ', line.find(' ', code));
        out << ".TP\n.B " << line.substr(code, line.find(' ', code) - code) << "\n"
            << Roff(line.substr(text)) << "\n";
      }
    } else {
      out << ".SH \"" << title << "\"\n"
          << Roff(block.substr(block.find_first_not_of(' ', colon + 1))) << "\n";
    }
  }
}

}  // namespace

std::string ManPage() {
  std::ostringstream out;
  const std::vector<std::string> intro = Paragraphs(kIntro);
  // The first paragraph is "gpuattr - what it is", the rest prose, "Usage:" and the settings'
  // preamble.
  out << ".TH GPUATTR 1 \"\" \"gpuattr " << Roff(build::kPackageVersion)
      << "\" \"User Commands\"\n.SH NAME\n"
      << Roff(intro.empty() ? "gpuattr" : intro[0]) << "\n.SH SYNOPSIS\n.B gpuattr\n"
      << "[\\fIflags\\fR]\n.br\n.B kubectl gpuattr\n[\\fB\\-o\\fR \\fIFORMAT\\fR] "
      << "[\\fB\\-n\\fR \\fINAMESPACE\\fR] [\\fIflags\\fR]\n.br\n.B gpuattr report\n"
      << "\\fB\\-\\-from\\fR \\fIDATE\\fR \\fB\\-\\-to\\fR \\fIDATE\\fR [\\fIflags\\fR]\n.SH "
         "DESCRIPTION\n";
  for (size_t i = 1; i < intro.size(); ++i) {
    if (intro[i].rfind("Usage:", 0) == 0) continue;
    if (i > 1) out << ".PP\n";
    out << Roff(intro[i]) << "\n";
  }
  out << ".SH OPTIONS\n";
  Options(out);
  Report(out);
  Outro(out);
  out << ".SH \"SEE ALSO\"\n.BR kubectl (1),\n.BR prometheus (1)\n"
      << ".PP\nThe documentation installed in /usr/share/doc/gpuattr/ (or under the prefix "
         "gpuattr was installed to).\n";
  return out.str();
}

}  // namespace gpuattr::app
