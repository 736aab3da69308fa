#include "html.h"

#include <algorithm>

#include "gpuattr/report/text_format.h"

namespace gpuattr::report {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace page {

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Cell Util(const std::optional<double>& v, std::string key) {
  if (!v) return {"-", std::nullopt, std::move(key), true};
  char w[16];
  std::snprintf(w, sizeof w, "%.0f", std::clamp(*v, 0.0, 1.0) * 100);
  return {"<span class=\"bar\"><i style=\"width:" + std::string(w) + "%\"></i></span>" +
              HtmlEscape(PercentText(*v)),
          *v, std::move(key), true};
}

Cell Badge(const std::string& state) {
  return Html("<span class=\"b " + HtmlEscape(state) + "\">" + HtmlEscape(state) + "</span>");
}

Cell PodCell(const kube::PodId& id) {
  return Html("<span class=\"ns\">" + HtmlEscape(id.namespace_) + "/</span>" + HtmlEscape(id.name));
}

void Table::Row(const std::vector<Cell>& cells, const std::string& key, const std::string& cls) {
  rows_ += "<tr";
  if (!cls.empty()) rows_ += " class=\"" + cls + "\"";
  if (!key.empty()) rows_ += " data-key=\"" + HtmlEscape(key) + "\"";
  rows_ += ">";
  for (size_t i = 0; i < cells.size() && i < columns_.size(); ++i) {
    const Cell& c = cells[i];
    rows_ += "<td data-label=\"" + HtmlEscape(columns_[i].name) + "\"";
    if (c.numeric)
      rows_ += " class=\"n\"";
    else if (columns_[i].wide)
      rows_ += " class=\"wide\"";
    if (!c.key.empty()) rows_ += " data-k=\"" + c.key + "\"";
    if (c.value) rows_ += " data-v=\"" + Num(*c.value) + "\"";
    rows_ += c.html.empty() ? "></td>" : "><span>" + c.html + "</span></td>";
  }
  rows_ += "</tr>\n";
  ++count_;
}

std::string Table::Html() const {
  std::string h = "<table class=\"c\"";
  if (!id_.empty()) h += " id=\"" + id_ + "\"";
  h += "><thead><tr>";
  for (const Column& c : columns_) {
    std::string cls = std::string(c.numeric ? "n" : "") +
                      (sortable_ && c.sortable ? (c.numeric ? " s" : "s") : "");
    h += "<th" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">" +
         HtmlEscape(c.name) + "</th>";
  }
  return h + "</tr></thead><tbody>\n" + rows_ + "</tbody></table>\n";
}

std::string Section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + HtmlEscape(title) + "</h2>\n" + body + "</section>\n";
}

std::string Muted(const std::string& text) {
  return "<p class=\"muted\">" + HtmlEscape(text) + "</p>\n";
}

std::string Tile(const std::string& value, const std::string& label, const char* cls) {
  return std::string("<div class=\"tile ") + cls + "\"><b>" + HtmlEscape(value) + "</b><span>" +
         HtmlEscape(label) + "</span></div>";
}

std::string NsKey(const StatusView& v, const std::string& cluster, const std::string& rest) {
  return v.multi_cluster ? cluster + "/" + rest : rest;
}

std::vector<Column> WithCluster(const StatusView& v, std::vector<Column> cols) {
  if (v.multi_cluster) cols.insert(cols.begin(), Column{"cluster"});
  return cols;
}

std::vector<Cell> WithCluster(const StatusView& v, const std::string& cluster,
                              std::vector<Cell> cells) {
  if (v.multi_cluster) cells.insert(cells.begin(), Text(cluster));
  return cells;
}

}  // namespace page
}  // namespace gpuattr::report
