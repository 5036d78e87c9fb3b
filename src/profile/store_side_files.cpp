// What sits beside a store under the names SQLite keeps its own files at, and whose it is
// (store_side_files.hpp).
#include "store_side_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "carb/error.hpp"
#include "held_file.hpp"

namespace carb {
namespace {

// A rollback journal whose writer was killed before it synced: SQLite writes the header with its
// magic and record count zeroed (12 bytes), then the nonce, the database's initial size in pages,
// the sector size and the page size (big-endian), zeros to the end of the sector, then one record
// per page it is about to change (page number, page, checksum: the nonce plus every 200th byte of
// the page from its end), each in three writes; the magic goes in only after the journal is
// synced. SQLite takes such a journal for an unfinished one and deletes it. Switching a new store to
// WAL writes just the header: a SIGKILL there (kill property test, under load) left one, and the
// store was refused as a user's file. Ninety-eighth hostile pass: a kill between a record's writes
// left a partial last record (page number, or page number and page), refused; and a user's text
// after such a header passed as records. Every whole record's page number and checksum are checked
// now, and a partial last record's page number: anything else is still a user's file.
bool unsynced_journal(int fd, std::uintmax_t size) {
  unsigned char h[28] = {};
  if (fd < 0 || size < 512 || ::pread(fd, h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) return false;
  if (!std::all_of(h, h + 12, [](unsigned char c) { return c == 0; })) return false;
  const auto be32 = [](const unsigned char* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
  };
  const auto power_of_two = [](std::uint32_t v) { return v >= 512 && v <= 65536 && (v & (v - 1)) == 0; };
  const std::uint32_t nonce = be32(h + 12), pages = be32(h + 16), sector = be32(h + 20), page = be32(h + 24);
  if (!power_of_two(sector) || !power_of_two(page) || size < sector) return false;
  std::vector<unsigned char> buf(std::max<std::size_t>(sector - sizeof h, page + 8));
  if (::pread(fd, buf.data(), sector - sizeof h, sizeof h) != static_cast<ssize_t>(sector - sizeof h) ||
      !std::all_of(buf.begin(), buf.begin() + (sector - sizeof h), [](unsigned char c) { return c == 0; }))
    return false;
  const auto page_number_ok = [&](const unsigned char* p) { return be32(p) >= 1 && be32(p) <= pages; };
  const std::uintmax_t record = page + 8;
  std::uintmax_t at = sector;
  for (; size - at >= record; at += record) {
    if (::pread(fd, buf.data(), record, static_cast<off_t>(at)) != static_cast<ssize_t>(record) ||
        !page_number_ok(buf.data()))
      return false;
    std::uint32_t sum = nonce;
    for (std::uint32_t i = page - 200; i > 0 && i < page; i -= 200) sum += buf[4 + i];
    if (sum != be32(buf.data() + 4 + page)) return false;
  }
  const std::uintmax_t left = size - at;  // a record the kill cut short: its page number, or with its page
  if (left == 0) return true;
  return (left == 4 || left == 4 + page) && ::pread(fd, buf.data(), 4, static_cast<off_t>(at)) == 4 &&
         page_number_ok(buf.data());
}

}  // namespace

// SQLite reuses, rewrites and deletes <db>-wal, <db>-shm and <db>-journal; a user's file under
// one of those names (twelfth hostile pass: "my notes" at w.db-wal) was deleted without a word.
// What SQLite leaves there starts with its magic (a WAL or journal header), is empty, or, for the
// shared-memory index, is whole 4 KiB pages or starts with the index header.
// `db` as SQLite will open it (links resolved: it keeps its side files beside the target, and a
// link once bypassed every check here: nineteenth hostile pass). `recorded`: the file the last
// writer's lock file names (StoreLock::recorded_store), when `check_owner`.
// `live`: a connection has the -wal open (wal_in_use): its frames are that connection's, which
// SQLite coordinates, and whose file content may change under the check (a live writer's
// checkpoint), so whose they are is checked only when nobody has them open.
void check_sqlite_side_files(const std::filesystem::path& db, std::optional<StoreFileId> recorded, bool check_owner,
                             bool live) {
  namespace fs = std::filesystem;
  for (const char* suffix : {"-wal", "-journal", "-shm"}) {
    const fs::path f = db.string() + suffix;
    std::error_code ec;
    const auto st = fs::symlink_status(f, ec);
    // Fifty-first hostile pass: a 245-character store name was refused as if a user's file sat at
    // its -journal's name; that name is past what the file system allows, so nothing can be there.
    if (ec == std::errc::filename_too_long)
      throw MeasureError("the store name " + db.filename().string() + " is too long: SQLite keeps its " + suffix +
                         " file beside it, at a name of " + std::to_string(f.filename().string().size()) +
                         " characters, more than the file system allows; choose a shorter name");
    if (st.type() == fs::file_type::not_found) continue;
    bool sqlites = false;
    if (st.type() == fs::file_type::regular) {
      const auto size = fs::file_size(f, ec);
      const bool shm = std::string(suffix) == "-shm";
      // The whole file, read through the held descriptor for the index (SQLite locks it), but
      // only as much as it takes to decide: its first bytes, and whether all of it is zeros.
      const int fd = shm ? detail::held_descriptor(f) : ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
      unsigned char head[8] = {};
      bool zeros = true, unsynced = false;
      if (fd >= 0) {
        unsigned char buf[65536];
        off_t at = 0;
        for (ssize_t n; (n = ::pread(fd, buf, sizeof buf, at)) > 0 && zeros; at += n) {
          if (at == 0) std::copy(buf, buf + std::min<ssize_t>(n, sizeof head), head);
          zeros = std::all_of(buf, buf + n, [](unsigned char c) { return c == 0; });
        }
        // (Only a journal is read a second time, and only when its first 12 bytes are zeros.)
        unsynced = std::string(suffix) == "-journal" && !zeros && unsynced_journal(fd, size);
        if (!shm) ::close(fd);
      }
      const bool wal = head[0] == 0x37 && head[1] == 0x7f && head[2] == 0x06 && (head[3] == 0x82 || head[3] == 0x83);
      // A rollback journal starts with its magic, or is zeros throughout (forty-sixth hostile pass:
      // a user's file that only began with 8 zero bytes passed, and SQLite deleted it beside a new
      // store), or is a journal killed before it was synced (`unsynced_journal`, its exact shape).
      const unsigned char journal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
      const bool is_journal = std::equal(head, head + 8, journal) || zeros || unsynced;
      // The shared-memory index grows a whole 4 KiB page at a time (SQLite writes each page's last
      // byte), so it is 4096·k bytes; its header starts with the WAL-index version 3007000, or,
      // while a kill -9 interrupted its first initialisation, it is still zeros throughout (that
      // resume was refused once). Forty-fifth hostile pass: any file of 4096·k bytes, or one
      // starting with 8 zero bytes, passed as the index, and SQLite reset a user's text there;
      // forty-sixth: one whose first page only was zeros.
      const bool version = head[0] == 0x18 && head[1] == 0xe2 && head[2] == 0x2d && head[3] == 0x00;
      // Before it grows, SQLite truncates the index to a 3-byte lock stub (zeros, or the first
      // bytes of the version of the index it cut short).
      const bool stub = size == 3 && (zeros || (head[0] == 0x18 && head[1] == 0xe2 && head[2] == 0x2d));
      const bool index = stub || (size % 4096 == 0 && (version || zeros));
      sqlites = size == 0 || (std::string(suffix) == "-wal" && wal) ||
                (std::string(suffix) == "-journal" && is_journal) || (shm && index);
    }
    if (!sqlites)
      throw MeasureError(f.string() + " is not SQLite's own file, and SQLite would overwrite or delete it; move it "
                         "away before using the store " + db.string());
    // Seventeenth hostile pass: a store moved away after a kill (mv s.db round1.db) left its
    // committed rows in s.db-wal; a new store at s.db made SQLite discard that WAL, and the rows
    // with it. A WAL with frames belongs to a database file that is not here (or is empty).
    if (std::string(suffix) == "-wal" && st.type() == fs::file_type::regular && fs::file_size(f, ec) > 32) {
      const auto db_st = fs::status(db, ec);
      if (db_st.type() == fs::file_type::not_found || (db_st.type() == fs::file_type::regular && fs::file_size(db, ec) == 0))
        throw MeasureError(f.string() + " holds measurements of a store whose database file is not beside it (moved "
                           "or deleted?); put that file back as " + db.string() + ", or move " + f.string() +
                           " away, before using " + db.string());
      // Eighteenth hostile pass: another store moved or restored to <db> after a kill got the killed
      // writer's frames applied to it (its own rows vanished, the other store's appeared). The
      // killed writer's lock file names the database file its WAL belongs to; without that record
      // (the lock file removed by hand) nothing says whose the frames are.
      if (check_owner && !recorded)
        throw MeasureError(f.string() + " holds changes of a writer that left no record of which database file they "
                           "belong to (its " + db.filename().string() + ".lock is gone). If " + db.string() +
                           " is the store that writer had open (most likely), apply them first with `sqlite3 " +
                           db.string() + " 'PRAGMA wal_checkpoint(TRUNCATE)'`: moving " + f.string() +
                           " away would drop the rows in it. Only if " + db.string() + " is another file, move " +
                           f.string() + " and " + db.string() + "-shm away before using it");
      const auto now = StoreFileId::of(db);
      if (!live && recorded && now && !recorded->same_file(*now, db))
        throw MeasureError(f.string() + " holds rows of a database file other than the one now at " + db.string() +
                           " (replaced or restored since), and SQLite would apply them to it. Keep " + f.string() +
                           " and " + db.string() + "-shm: they may be those rows' only copy. Put the database file "
                           "they belong to back at " + db.string() + ", or move all three aside together before using " +
                           db.string() + " (if carb rescued that file's rows into a copy of its own, " +
                           db.filename().string() + ".rescued*.db or carb-rescued-*.db as its message named, every "
                           "row is in it, and these are not needed)");
    }
  }
}

// Twenty-ninth hostile pass: a store whose killed writer left committed rows in its -wal, reached by
// another name (a hard link, or the file renamed without its side files), was exported and resumed
// without those rows, with exit 0: SQLite looks for the -wal beside the name it is given. The lock
// files beside it say which file each writer had open; one that names this file, beside a -wal
// with frames under another name, means those rows are this file's.
void check_no_wal_under_another_name(const std::filesystem::path& db) {
  namespace fs = std::filesystem;
  const auto now = StoreFileId::of(db);
  if (!now) return;
  std::error_code ec;
  const fs::path dir = db.has_parent_path() ? db.parent_path() : fs::path(".");
  const auto refuse = [&](const fs::path& other, const fs::path& wal) {
    throw MeasureError(db.string() + " is the store a writer had open as " + other.string() + ", and its last rows "
                       "are still in " + wal.string() + ", which SQLite reads only under that name. Use it as " +
                       other.string() + " (rename it back, or open it there) so they are applied; a copy or link "
                       "under another name would lack them");
  };
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Thirty-first hostile pass: with the lock file removed, a second name (a hard link) of a killed
    // writer's store was exported without the rows in the -wal beside the first name. The other
    // name, still there beside its -wal with frames, is this very file.
    if (name.size() > 4 && name.compare(name.size() - 4, 4, "-wal") == 0) {
      const fs::path other = dir / name.substr(0, name.size() - 4);
      std::error_code e2;
      if (other.filename() == db.filename() || fs::file_size(it->path(), e2) <= 32 || e2) continue;
      const auto id = StoreFileId::of(other);
      if (id && id->dev == now->dev && id->ino == now->ino) refuse(other, it->path());
      continue;
    }
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".lock") != 0) continue;
    const fs::path other = dir / name.substr(0, name.size() - 5);
    if (other.filename() == db.filename()) continue;
    const fs::path wal = other.string() + "-wal";
    std::error_code e2;
    if (!fs::is_regular_file(wal, e2) || fs::file_size(wal, e2) <= 32) continue;
    const auto rec = StoreLock::recorded_at(it->path());
    if (!rec || rec->dev != now->dev || rec->ino != now->ino) continue;
    refuse(other, wal);
  }
}

// True when a live SQLite connection has the store open: every connection in WAL mode holds a read
// lock on the shared-memory index's DMS byte (offset 128 in SQLite's unix VFS) while it is open.
// Frames in a -wal that nobody has open are a dead writer's.
bool wal_in_use(const std::filesystem::path& db) {
  // The held descriptor, never closed: closing one would release this process's own connections'
  // locks on the index (held_file.hpp).
  const std::filesystem::path shm = db.string() + "-shm";
  if (std::error_code ec; std::filesystem::symlink_status(shm, ec).type() != std::filesystem::file_type::regular)
    return false;
  const int fd = detail::held_descriptor(shm);
  if (fd < 0) return false;
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 128;
  probe.l_len = 1;
  // An open-file-description probe: it sees the connections of this process too (a plain F_GETLK
  // ignores the caller's own locks).
  return ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
}

}  // namespace carb
