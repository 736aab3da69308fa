// The streaming exposition writer: every series is formatted straight into its family's buffer
// (no per-series objects, no stringstream); Finish() joins the families, in table order, into one
// Prometheus text (0.0.4) buffer. prometheus-cpp's TextSerializer over FamilyCollector is the
// reference it is tested against (tests/golden/render_equivalence_test.cc).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

// A growable byte buffer in its own anonymous memory mapping, whose memory goes back to the
// system when it is freed. Exposition text is tens of MB made fresh every publication; malloc
// would copy on growth and keep freed blocks. Small buffers grow in place or by remapping; from
// kHugeFrom on a buffer lives in 2 MiB-aligned transparent huge pages: on a VM a page fault costs
// microseconds, and 40 MB of 4 KiB pages took longer to fault in than to fill (perf, README).
class TextBuffer {
 public:
  TextBuffer() = default;
  ~TextBuffer();
  TextBuffer(TextBuffer&& o) noexcept;
  TextBuffer& operator=(TextBuffer&& o) noexcept;
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;

  static constexpr size_t kHugeFrom = size_t{2} << 20;

  // Room for `n` more bytes at the end; write them, then Commit the new end. Throws
  // std::bad_alloc when the system refuses memory.
  char* Reserve(size_t n);
  void Commit(char* end) { size_ = static_cast<size_t>(end - data_); }
  void Append(std::string_view s);
  void Clear() { size_ = 0; }  // keeps the memory, for the next text

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // the mapping's length
};

// The exposition text as TextWriter made it: one chunk per family (its HELP, TYPE and series), in
// table order (a family whose series were not added in one run has one chunk per run). The chunks
// are never joined: the server sends them one after the other.
class ExpositionText {
 public:
  ExpositionText() = default;
  std::span<const std::string_view> pieces() const { return pieces_; }
  size_t size() const { return size_; }
  std::string Join() const;
  // One chunk holding a copy of `text` (tests, and texts not made by TextWriter).
  static ExpositionText Of(std::string_view text);

 private:
  friend class TextWriter;
  void Add(TextBuffer chunk);
  std::vector<TextBuffer> owned_;  // TextWriter: one buffer that every piece points into
  std::vector<std::string_view> pieces_;
  size_t size_ = 0;
};

class TextWriter final : public FamilyWriter {
 public:
  TextWriter() = default;
  // Declares the families of `groups` in table order first. `size_hint`: the text's expected
  // length (the previous rendering's), reserved at once so that the buffer need not grow.
  // `filter` (kept by pointer; null: every family) drops the families it excludes.
  explicit TextWriter(std::span<const FamilyGroup* const> groups, size_t size_hint = 0,
                      const FamilyFilter* filter = nullptr);
  // The same, writing into `buffer` (cleared first): its memory, already touched, is reused.
  TextWriter(std::span<const FamilyGroup* const> groups, TextBuffer buffer,
             const FamilyFilter* filter = nullptr);
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  void Add(const FamilySpec& spec, const Labels& labels, double value) override;
  // HELP, TYPE and the series of every family that has series, in declaration order.
  ExpositionText FinishChunks() &&;
  std::string Finish() &&;  // the same, joined
  // The same chunks, handed to `sink` in order, and then the buffer back (for another writer).
  TextBuffer FinishInto(const std::function<void(std::string_view)>& sink) &&;
  // Whether a family outside the declared groups got series (it comes after all of theirs).
  bool has_undeclared() const { return families_.size() > declared_; }

  // Streaming: from now on, when a family gets its first series and every family with text so
  // far comes before it in table order, those families are handed to `sink` (kept by pointer)
  // and the buffer is reused, so a group's text never exists whole; a family alone in the buffer
  // is handed over whenever it passes kStreamPiece, so neither does the largest family's
  // (docs/performance.md). FinishInto hands over the rest.
  void StreamTo(const std::function<void(std::string_view)>* sink) { stream_ = sink; }
  static constexpr size_t kStreamPiece = size_t{1} << 20;
  // Whether a family got series after it was handed over (its group does not write family by
  // family in table order): what was streamed is not a valid exposition.
  bool split() const { return split_; }
  // The most text the buffer held at once.
  size_t peak_size() const { return peak_; }

 private:
  // Every family writes into one buffer (one mapping, few page faults): a family's text is the
  // runs of it in the buffer, the first starting with its HELP and TYPE lines, written before its
  // first series. Groups add a family's series in a row, so a family is one run.
  struct Run {
    size_t begin, end;
  };
  struct Family {
    FamilySpec spec;
    std::string header;     // HELP and TYPE lines
    std::vector<Run> runs;  // in the buffer, not yet handed over
    bool started = false;   // its header is written
    bool dropped = false;   // excluded by the filter: its series are not written
  };
  Family& Find(const FamilySpec& spec);
  TextBuffer text_;
  std::vector<Family> families_;
  std::unordered_map<std::string_view, size_t> index_;
  // Hands families [emitted_, end) to the stream and empties the buffer.
  void Emit(size_t end);
  size_t last_ = static_cast<size_t>(-1);
  size_t declared_ = 0;
  const FamilyFilter* filter_ = nullptr;
  const std::function<void(std::string_view)>* stream_ = nullptr;
  size_t emitted_ = 0;       // families before it were handed over
  size_t last_written_ = 0;  // 1 + the highest family index with text in the buffer
  bool split_ = false;
  size_t peak_ = 0;
};

// Every group of the table through TextWriter, unjoined: what SnapshotStore keeps and /metrics
// serves (RenderText in families.h is the same text, joined). `size_hint` as for TextWriter.
// Defined in families.cc.
ExpositionText RenderChunks(const model::Snapshot& snapshot, size_t size_hint = 0,
                            const FamilyFilter* filter = nullptr);

// The same text, rendered one group at a time into one reused buffer and handed to `sink` piece
// by piece as each family is done (TextWriter::StreamTo): the whole text never exists at once,
// nor a whole group's (at 1,000 nodes 70 MB of text; its largest family 7 MB).
// `largest_group`: in, the buffer to reserve (the previous rendering's most text at once); out,
// this rendering's. Returns false, after handing over some pieces, when a group added a family it
// does not declare or wrote a family after the next one in table order had begun: the caller then
// renders with RenderChunks. Defined in families.cc.
// `by_family` false: each group whole (for snapshots whose groups do not write family by family
// in table order, e.g. several clusters: each cluster's series of a family come in a run of their
// own).
bool RenderGroupByGroup(const model::Snapshot& snapshot,
                        const std::function<void(std::string_view)>& sink, size_t& largest_group,
                        const FamilyFilter* filter = nullptr, bool by_family = true);

// The building blocks, tested on their own.
//
// A sample value as Prometheus reads it: NaN, +Inf, -Inf, or the fewest digits that read back as
// the same double (so no precision is lost), written in the notation of printf's %.16g, which is
// what prometheus-cpp writes (fixed for exponents -4..15, else d.ddde±XX). Returns the length;
// `out` must have room for kMaxValueChars.
inline constexpr size_t kMaxValueChars = 32;
size_t FormatValue(double value, char* out);
std::string FormatValue(double value);
// A label value inside its quotes: \ → \\, " → \", newline → \n; bytes that are not valid UTF-8
// become U+FFFD (Prometheus rejects a scrape with an invalid UTF-8 label value).
std::string EscapeLabelValue(std::string_view value);
// HELP text: \ → \\, newline → \n.
std::string EscapeHelp(std::string_view help);

}  // namespace gpuattr::metrics
