// A small RFC-4180 CSV reader and writer, strict number parsing with messages that
// name file, line and column, and an atomic text-file writer shared by every file
// carb writes (datasets, configuration lists, provenance sidecars).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "carb/error.hpp"

namespace carb::csv {

/// One record and the (1-based) line it starts on; a quoted field may span lines,
/// and errors should point where the record begins.
struct Row {
  std::size_t line = 0;
  std::vector<std::string> fields;
};

/// Parses CSV text. `source` names the text in error messages (usually the file path).
/// Quoted fields may hold commas, doubled quotes and newlines; CRLF and a UTF-8 BOM are
/// tolerated; blank lines are skipped. Throws DataError "source:line:col: ..." on an
/// unterminated quote or text after a closing quote.
std::vector<Row> parse(std::string_view text, const std::string& source);
/// The same, a record at a time: each is handed to `each` (moved) as it is read, so that a reader
/// that turns records into something smaller never holds every record's fields at once (a 300,000-row
/// dataset's fields alone took a gigabyte). A syntax error throws after the records before it were
/// handed on: a caller that must not act on part of a file undoes what it kept.
void parse_each(std::string_view text, const std::string& source, const std::function<void(Row&&)>& each);

/// The largest file read_file accepts: far above any dataset (a 4,320-row CSV is ~1 MiB).
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

/// DataError when `file` is something whose open could wait for good: a named pipe (FIFO) on a
/// file system, which blocks until a writer comes (and, under carb's stop-signal handler, past a
/// SIGTERM), or a socket. A pipe the shell opens (`<(...)`, /dev/stdin) already has its writer
/// and passes, as does a named pipe this process has open (`/dev/stdin < f.fifo`, read through its
/// descriptor by read_text), and regular files, directories and devices (their readers say what
/// is wrong).
void refuse_waiting_source(const std::filesystem::path& file);

/// The whole text of a file, up to kMaxFileBytes; throws DataError when it cannot be read, is a
/// directory, a named pipe or a socket (refuse_waiting_source), or is larger. A pipe named by one of
/// this process's descriptors (/dev/stdin, /dev/fd/N, /proc/self/fd/N) is read through it, named
/// pipes too: its writer came before carb started.
/// `kind` names what a directory in its place is not ("file", "CSV file").
std::string read_text(const std::filesystem::path& file, const char* kind = "file");

/// True when `file` is a regular file that starts as an SQLite database does (a measurement store);
/// false for anything else, a pipe too (never opened).
bool starts_as_sqlite(const std::filesystem::path& file);

/// Reads and parses a file; throws DataError when it cannot be read, is a directory, a named pipe
/// or a socket (refuse_waiting_source), is an SQLite database (naming the export command), or is
/// larger than kMaxFileBytes.
std::vector<Row> read_file(const std::filesystem::path& file);
/// The same, for a check that lists every problem (`carb data validate`): a line holding a byte
/// that is not UTF-8 is one problem in `text_problems` ("FILE:LINE: byte 0x.. is not UTF-8
/// text"), and such bytes are read as U+FFFD so the rest of the file is still parsed and checked.
std::vector<Row> read_file(const std::filesystem::path& file, std::vector<std::string>& text_problems);
/// read_file with problems, a record at a time (parse_each).
void read_file_each(const std::filesystem::path& file, std::vector<std::string>& text_problems,
                    const std::function<void(Row&&)>& each);

/// A field quoted only when it needs to be (comma, quote, CR/LF, surrounding spaces).
std::string quote(std::string_view field);
/// Writes fields separated by commas and terminated by "\n".
void write_row(std::ostream& out, const std::vector<std::string>& fields);

/// Where a field sits, for error messages: "file:line: column 'name' (field k)".
struct Where {
  std::string file;
  std::size_t line = 0;
  std::size_t field = 0;  // 0-based index into the row; printed 1-based
  std::string column;

  std::string str() const;
};

/// A field for a one-line message: control characters replaced, long text clipped.
std::string show(std::string_view field);

/// The whole field (surrounding blanks ignored) must be a finite decimal number.
/// Empty gives nullopt; anything else that is not a number throws DataError naming `at`.
std::optional<double> parse_optional_number(std::string_view field, const Where& at);
/// As parse_optional_number, but an empty field is an error too.
double parse_number(std::string_view field, const Where& at);
/// The whole field must be an integer (no fraction, no exponent).
int parse_int(std::string_view field, const Where& at);

/// Shortest text that reads back as exactly the same double ("" for nullopt).
std::string format_number(std::optional<double> v);

/// Replaces `file` with `content` atomically: writes a uniquely named temp file beside it, flushes it to disk and
/// renames it over `file`, so readers see the old or the new file, never a torn one.
/// Throws DataError naming the file on any I/O failure (the temp file is removed).
/// The rename replaces only the file that was at `file` when the call began (or, where there was
/// none, nothing): a file put there meanwhile is left as it is, with a DataError.
void write_text_atomic(const std::filesystem::path& file, std::string_view content);

/// Which file a path names (not following a final symlink), and its state: an edit in place
/// changes the size or the change time (thirty-fourth hostile pass: an edit made after the check was
/// replaced, since the file was still the same inode).
struct FileId {
  dev_t dev;
  ino_t ino;
  off_t size;
  long ctime_s, ctime_ns, mtime_s, mtime_ns;
  bool operator==(const FileId&) const = default;
};
/// A file at the output's name that is not the one the command checked: left as it is.
struct OutputChanged : DataError {
  using DataError::DataError;
};
/// nullopt when nothing is at `f`.
std::optional<FileId> file_id(const std::filesystem::path& f);
/// Moves the finished temp file `tmp` to `file`, replacing only `before` (nullopt: only a free name).
/// Anything else found at `file` is left as it is: `tmp` is removed and OutputChanged thrown.
void commit_temp(const std::filesystem::path& tmp, const std::filesystem::path& file,
                 const std::optional<FileId>& before);
/// write_text_atomic replacing only `before`, the file the caller found at `file` when it checked
/// that it may be replaced (nullopt: nothing was there), however long ago that was. Returns the
/// file it wrote, which a later write of the same output may replace.
FileId write_text_atomic(const std::filesystem::path& file, std::string_view content,
                       const std::optional<FileId>& before);

/// write_text_atomic in two steps, for outputs written as a pair: `stage_text` writes and flushes
/// the content to a temp file of our own beside `file` (a full disk fails here, with nothing at
/// `file` touched); `commit` renames it over `file` as write_text_atomic does. A staged file that
/// is never committed is removed when it goes out of scope.
class StagedText {
 public:
  StagedText(const std::filesystem::path& file, std::string_view content);
  ~StagedText();
  StagedText(const StagedText&) = delete;
  StagedText& operator=(const StagedText&) = delete;
  FileId commit(const std::optional<FileId>& before);

 private:
  std::filesystem::path file_, tmp_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace carb::csv
