// RFC-4180 CSV parsing and writing, strict numbers, and atomic file replacement.
#include "data/csv.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <system_error>

#include "carb/error.hpp"
#include "util/special_file.hpp"
#include "util/temp_owner.hpp"
#include "util/utf8.hpp"

namespace carb::csv {
namespace {

// Walks the text once, tracking line and column so that every syntax error can say
// exactly where it is; a record's line is the line of its first character.
class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // spreadsheet BOM
  }

  void run(const std::function<void(Row&&)>& each) {
    while (pos_ < text_.size()) {
      if (at_newline()) {  // blank line: not a record
        skip_newline();
        continue;
      }
      Row row{line_, {}};
      read_record(row.fields);
      each(std::move(row));
    }
  }

 private:
  bool at_newline() const { return text_[pos_] == '\n' || text_[pos_] == '\r'; }

  void skip_newline() {
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(source_ + ":" + std::to_string(line_) + ":" + std::to_string(pos_ - line_start_ + 1) +
                    ": " + what);
  }

  // Reads fields up to and including the record's line end (or the end of the text).
  void read_record(std::vector<std::string>& fields) {
    while (true) {
      fields.push_back(text_[pos_] == '"' ? read_quoted() : read_plain());  // pos_ < size here
      if (pos_ >= text_.size()) return;
      if (text_[pos_] == ',') {
        ++pos_;
        if (pos_ >= text_.size()) {  // trailing comma at end of text: one more empty field
          fields.emplace_back();
          return;
        }
        continue;
      }
      skip_newline();  // read_* stop only at a comma, a line end or the end
      return;
    }
  }

  std::string read_plain() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && !at_newline()) {
      if (text_[pos_] == '"')
        fail("quote inside an unquoted field (quote the whole field and double the quote)");
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string read_quoted() {
    const std::size_t open_line = line_, open_col = pos_ - line_start_ + 1;
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          out += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;  // closing quote
        if (pos_ < text_.size() && text_[pos_] != ',' && !at_newline())
          fail("unexpected text after a closing quote");
        return out;
      }
      if (c == '\n' || (c == '\r' && !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n'))) {
        out += '\n';
        ++pos_;
        ++line_;
        line_start_ = pos_;
        continue;
      }
      if (c != '\r') out += c;  // CRLF inside a quoted field reads as "\n"
      ++pos_;
    }
    throw DataError(source_ + ":" + std::to_string(open_line) + ":" + std::to_string(open_col) +
                    ": quoted field is never closed");
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0, line_ = 1, line_start_ = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<Row> parse(std::string_view text, const std::string& source) {
  std::vector<Row> rows;
  parse_each(text, source, [&](Row&& row) { rows.push_back(std::move(row)); });
  return rows;
}

void parse_each(std::string_view text, const std::string& source, const std::function<void(Row&&)>& each) {
  Parser(text, source).run(each);
}

namespace {
constexpr decltype(statfs::f_type) kPipeFsMagic = 0x50495045;  // linux/magic.h PIPEFS_MAGIC

// The descriptor of this process that `file` names (/dev/stdin, /dev/fd/N, /proc/self/fd/N), when
// it is a pipe: its writer came before carb started (the shell's open waited for it), so it is read
// through the descriptor. Reopened by its name, a named pipe's open waits for a writer again, for
// good once the writer has written and gone (the seventieth pass's "Left": `--configs /dev/stdin <
// f.fifo` was refused).
std::optional<int> own_pipe_descriptor(const std::filesystem::path& file) {
  const std::string s = file.string();
  std::string digits;
  if (s == "/dev/stdin") digits = "0";
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (s.rfind(prefix, 0) == 0) digits = s.substr(std::strlen(prefix));
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  const int fd = std::stoi(digits);
  struct stat by_fd {}, by_name {};
  if (::fstat(fd, &by_fd) != 0 || !S_ISFIFO(by_fd.st_mode) || ::stat(file.c_str(), &by_name) != 0 ||
      by_fd.st_dev != by_name.st_dev || by_fd.st_ino != by_name.st_ino)
    return std::nullopt;
  return fd;
}

// Everything an open descriptor holds, up to the cap; the descriptor is closed. Chunked up to a cap:
// a device or pipe (/dev/zero) would otherwise grow without bound.
std::string read_all(int fd, const std::filesystem::path& file) {
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw DataError(file.string() + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes) {
      ::close(fd);
      throw DataError(file.string() + ": larger than " + std::to_string(kMaxFileBytes >> 20) +
                      " MiB; not a file carb reads");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

void refuse_waiting_source(const std::filesystem::path& file) {
  std::error_code ec;
  const auto type = std::filesystem::status(file, ec).type();
  if (type == std::filesystem::file_type::socket)
    throw DataError(file.string() + ": is a socket, not a file");
  if (type != std::filesystem::file_type::fifo) return;
  // A pipe lives on pipefs; a named one on the file system that holds its name. Sixty-eighth and
  // seventieth hostile passes: train, combine, report --curves/--screen and profile --plan at a
  // FIFO blocked in its open for good, deaf to the SIGTERM they record to stop between steps.
  struct statfs fs {};
  if (::statfs(file.c_str(), &fs) == 0 && fs.f_type == kPipeFsMagic) return;
  if (own_pipe_descriptor(file)) return;  // open already, and read through its descriptor
  throw DataError(file.string() +
                  ": is a named pipe (FIFO), whose open waits for a writer; give a file, or a pipe your shell opens "
                  "(<(...))");
}

std::string read_text(const std::filesystem::path& file, const char* kind) {
  refuse_waiting_source(file);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw DataError(file.string() + ": is a directory, not a " + kind);
  // A pipe of this process's own is read through a duplicate of its descriptor (the caller's stays
  // open); anything else is opened by its name.
  const auto own = own_pipe_descriptor(file);
  const int fd = own ? ::fcntl(*own, F_DUPFD_CLOEXEC, 0) : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError(file.string() + ": cannot open for reading: " + std::strerror(errno));
  return read_all(fd, file);
}

bool starts_as_sqlite(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  std::ifstream in(file, std::ios::binary);
  char head[16] = {};
  return in.read(head, sizeof head) && std::string_view(head, sizeof head) == std::string_view("SQLite format 3\0", 16);
}

namespace {

std::string read_csv_text(const std::filesystem::path& file) {
  std::string text = read_text(file, "CSV file");
  // A measurement store given where a dataset goes was said to hold "byte 0xf8", which is no help.
  if (text.compare(0, 16, std::string_view("SQLite format 3\0", 16)) == 0)
    throw DataError(file.string() + ": is an SQLite database (a measurement store?), not a CSV file: export a store as "
                    "a dataset with `carb data export --db " + file.string() + " --out FILE.csv`; `carb data info " +
                    file.string() + "` summarises it");
  return text;
}

// Text only: a byte that is not UTF-8 (a platform of "cpu-\xff2t") passed every check and then
// broke the JSON written from it ("internal error"), after the work. One problem per line that
// holds such a byte, naming its first; `first_only` stops at the first line.
std::vector<std::string> utf8_problems(const std::string& text, const std::string& name, bool first_only) {
  std::vector<std::string> out;
  std::size_t line = 1;
  bool said = false;  // this line's first bad byte is said; the rest of the line is not
  for (std::size_t i = 0; i < text.size();) {
    // Lines end as the parser ends them: CRLF, LF or a lone CR (a review: a CR-only file was one
    // line here, its later bad lines never listed).
    if (text[i] == '\n' || text[i] == '\r') {
      i += text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      ++line;
      said = false;
      continue;
    }
    const std::size_t n = detail::utf8_sequence_length(text, i);
    if (n != 0) {
      i += n;
      continue;
    }
    if (!said) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[i]));
      out.push_back(name + ":" + std::to_string(line) + ": byte " + byte + " is not UTF-8 text; save the file as UTF-8");
      if (first_only) break;
      said = true;
    }
    ++i;
  }
  return out;
}

}  // namespace

std::vector<Row> read_file(const std::filesystem::path& file) {
  const std::string text = read_csv_text(file);
  if (const auto bad = utf8_problems(text, file.string(), true); !bad.empty()) throw DataError(bad.front());
  return parse(text, file.string());
}

std::vector<Row> read_file(const std::filesystem::path& file, std::vector<std::string>& text_problems) {
  std::vector<Row> rows;
  read_file_each(file, text_problems, [&](Row&& row) { rows.push_back(std::move(row)); });
  return rows;
}

void read_file_each(const std::filesystem::path& file, std::vector<std::string>& text_problems,
                    const std::function<void(Row&&)>& each) {
  const std::string text = read_csv_text(file);
  const auto bad = utf8_problems(text, file.string(), false);
  if (bad.empty()) return parse_each(text, file.string(), each);
  text_problems.insert(text_problems.end(), bad.begin(), bad.end());
  parse_each(detail::replace_invalid_utf8(text), file.string(), each);
}

std::string quote(std::string_view field) {
  // A leading UTF-8 BOM is quoted too: unquoted at the start of a file, the reader strips it as the
  // file's BOM and the field would lose it (found by fuzz_dataset_csv).
  const bool needs = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!field.empty() && (field.front() == ' ' || field.back() == ' ')) ||
                     field.substr(0, 3) == "\xEF\xBB\xBF";
  if (!needs) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void write_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out << ',';
    out << quote(fields[i]);
  }
  out << '\n';
}

std::string Where::str() const {
  std::string s = file + ":" + std::to_string(line);
  if (!column.empty()) s += ": column '" + column + "' (field " + std::to_string(field + 1) + ")";
  return s;
}

std::string show(std::string_view field) {
  constexpr std::size_t kMax = 40;
  std::string out;
  for (char c : field.substr(0, kMax)) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  if (field.size() > kMax) out += "...";
  return "\"" + out + "\"";
}

std::optional<double> parse_optional_number(std::string_view field, const Where& at) {
  const std::string_view s = trim(field);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    throw DataError(at.str() + ": expected a number, got " + show(field));
  return v;
}

double parse_number(std::string_view field, const Where& at) {
  const auto v = parse_optional_number(field, at);
  if (!v) throw DataError(at.str() + ": expected a number, got an empty field");
  return *v;
}

int parse_int(std::string_view field, const Where& at) {
  const std::string_view s = trim(field);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    throw DataError(at.str() + ": expected an integer, got " + show(field));
  return v;
}

std::string format_number(std::optional<double> v) {
  if (!v) return "";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *v);  // shortest exact round-trip
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

std::optional<FileId> file_id(const std::filesystem::path& f) {
  struct stat st {};
  if (::lstat(f.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev,          st.st_ino,          st.st_size,         st.st_ctim.tv_sec,
                st.st_ctim.tv_nsec, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

// Thirty-third hostile pass: a user's file moved onto a dataset or plan --out while carb computed
// it was replaced, as was a file another run wrote there meanwhile. A name that was free takes the
// new file only while it is still free (renameat2 RENAME_NOREPLACE, or link(2), which never
// replaces, on file systems without it).
void commit_temp(const std::filesystem::path& tmp, const std::filesystem::path& file,
                 const std::optional<FileId>& before) {
  std::error_code ec;
  const auto refuse = [&](const std::string& what) {
    std::filesystem::remove(tmp, ec);
    throw OutputChanged(file.string() + ": " + what + " while carb was working; it was left as it is, and " +
                        "carb's output was not put there. Run the command again to check it afresh");
  };
  const std::optional<FileId> now = file_id(file);
  if (now && (!before || now->dev != before->dev || now->ino != before->ino))
    refuse(before ? "another file was put in its place" : "a file appeared at this name");
  if (now && !(*now == *before)) refuse("it was changed");
  if (now) {
    if (::rename(tmp.c_str(), file.c_str()) != 0) {
      const int err = errno;
      std::filesystem::remove(tmp, ec);
      throw DataError(file.string() + ": cannot replace it: " + std::strerror(err));
    }
    return;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, file.c_str(), RENAME_NOREPLACE) == 0) return;
  int err = errno;
  if (err == EINVAL || err == ENOSYS) {
    if (::link(tmp.c_str(), file.c_str()) == 0) {
      std::filesystem::remove(tmp, ec);
      return;
    }
    err = errno;
    // Nor hard links (some FUSE and FAT file systems): the name was free a moment ago.
    if (err == EPERM || err == EOPNOTSUPP || err == ENOSYS) {
      if (file_id(file)) {
        err = EEXIST;
      } else {
        if (::rename(tmp.c_str(), file.c_str()) == 0) return;
        err = errno;
      }
    }
  }
  if (err == EEXIST) refuse("a file appeared at this name");
  std::filesystem::remove(tmp, ec);
  throw DataError(file.string() + ": cannot write it: " + std::strerror(err));
}

void write_text_atomic(const std::filesystem::path& file, std::string_view content) {
  // What is at `file` now, when the caller has just checked that it may be replaced: the commit
  // replaces that and nothing else (see commit_temp).
  (void)write_text_atomic(file, content, file_id(file));
}

FileId write_text_atomic(const std::filesystem::path& file, std::string_view content,
                         const std::optional<FileId>& before) {
  StagedText staged(file, content);
  return staged.commit(before);
}

StagedText::~StagedText() {
  std::error_code ec;
  if (!tmp_.empty()) std::filesystem::remove(tmp_, ec);
}

StagedText::StagedText(const std::filesystem::path& file, std::string_view content) : file_(file) {
  std::error_code ec;
  detail::refuse_special_file(file);
  if (std::filesystem::is_directory(file, ec))
    throw DataError(file.string() + ": is a directory; give a file name to write");
  // A name of our own (mkstemp) beside the target: a fixed "file.tmp" would truncate, and on
  // failure delete, a file of that name that the user made. The name carries our pid, so the next
  // write here removes what a killed carb left (util/temp_owner.hpp).
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  // A killed writer of this file left a regular file that is empty or starts as this content does
  // (every output carb writes to a given path has one format: a CSV header, "{", "<!DOCTYPE").
  const std::string_view head = content.substr(0, std::min<std::size_t>(content.size(), 16));
  detail::remove_stale_temps(file, ".carb-", [&](const std::filesystem::path& p) {
    std::error_code e;
    if (std::filesystem::symlink_status(p, e).type() != std::filesystem::file_type::regular) return false;
    std::ifstream in(p, std::ios::binary);
    std::string start(head.size(), '\0');
    in.read(start.data(), static_cast<std::streamsize>(start.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    return got == 0 || start.compare(0, got, head, 0, got) == 0;
  });
  std::string tmpl = detail::owned_temp_template(file, ".carb-");
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw DataError(file.string() + ": cannot create a file in " + dir.string() + ": " + std::strerror(errno));
  const std::filesystem::path tmp = tmpl;
  (void)::flock(fd, LOCK_EX | LOCK_NB);  // ours while fd is open (util/temp_owner.hpp, hold_temp)
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    std::filesystem::remove(tmp, ec);
    throw DataError(file.string() + ": " + what + ": " + std::strerror(err));
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      fail("write failed");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a dataset is meant to be read by others, as a plain open would allow. A
  // file being replaced keeps its mode and, where we may set it, its owner (seventeenth hostile
  // pass: a 0600 file of another user became root's and world-readable).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  mode_t mode = 0666 & ~mask;
  struct stat old {};
  if (::stat(file.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    mode = old.st_mode & 07777;
    if (::geteuid() == 0) (void)::fchown(fd, old.st_uid, old.st_gid);
  }
  // fsync before rename: otherwise a power cut can leave the new name on empty contents.
  struct stat written {};
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0 || ::fstat(fd, &written) != 0) {
    ::close(fd);
    fail("fsync failed");
  }
  if (::close(fd) != 0) fail("close failed");
  tmp_ = tmp;
  dev_ = written.st_dev;
  ino_ = written.st_ino;
}

FileId StagedText::commit(const std::optional<FileId>& before) {
  const std::filesystem::path file = file_, tmp = tmp_;
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  tmp_.clear();  // commit_temp removes it on failure, and it is `file` on success
  commit_temp(tmp, file, before);
  // And the directory after it, so that the rename itself survives a power cut (twenty-sixth hostile
  // pass). The file is complete under its name by now: a directory that cannot be synced (some
  // file systems refuse) is no reason to report a failure.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  // As it is under its name now (a rename or link changes the change time): what a later write of
  // this output may replace. Another file there already is nothing a later write may replace.
  if (const auto now = file_id(file); now && now->ino == ino_ && now->dev == dev_) return *now;
  return FileId{dev_, ino_, -1, 0, 0, 0, 0};
}

}  // namespace carb::csv
