// Keeping what --force replaces (see keep_earlier.hpp).
#include "data/keep_earlier.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "data/provenance.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace fs = std::filesystem;

namespace detail {
namespace {

// A copy, written in full under a name of its own and then linked to a free name (never over
// another file); false when `to` is taken. Not a hard link to the file itself: that changes its
// change time, and the write that follows would take it for a file changed while carb worked.
// A symbolic link is copied as a link to the same target (sixty-second hostile pass: --force
// replaced a link at --out with no copy and no word).
bool keep_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(from, ec))) {
    const fs::path target = fs::read_symlink(from, ec);
    if (ec) throw InputError("cannot read the symbolic link " + from.string() + ": " + ec.message());
    if (::symlink(target.c_str(), to.c_str()) == 0) return true;
    if (errno == EEXIST) return false;
    throw InputError("cannot keep the symbolic link " + from.string() + " as " + to.string() + ": " + std::strerror(errno));
  }
  const fs::path dir = to.has_parent_path() ? to.parent_path() : fs::path(".");
  std::ifstream in(from, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) throw InputError(from.string() + ": cannot read it to keep it; nothing was replaced");
  // A name with our pid: what a killed run left is removed by the next (util/temp_owner.hpp).
  remove_stale_temps(to, ".carb-", [](const fs::path& p) {
    return p.filename().string().find("-keep-") != std::string::npos && fs::is_regular_file(p);
  });
  std::string tmpl = owned_temp_template(to, ".carb-", "keep-");
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError("cannot keep " + from.string() + " in " + dir.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::stat(from.c_str(), &st) == 0) (void)::fchmod(fd, st.st_mode & 07777);  // as the original was
  bool ok = true;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0, done += n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  const int linked = ok ? ::link(tmpl.c_str(), to.c_str()) : -1;
  const int err = errno;
  ::unlink(tmpl.c_str());
  if (!ok) throw InputError("cannot keep " + from.string() + " in " + dir.string() + ": " + std::strerror(err));
  if (linked == 0) return true;
  if (err == EEXIST) return false;
  throw InputError("cannot keep " + from.string() + " as " + to.string() + ": " + std::strerror(err));
}

}  // namespace

fs::path earlier_name(const fs::path& file, const std::string& ext, int n) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  return dir / (file.stem().string() + ".earlier" + (n ? "-" + std::to_string(n) : std::string()) + ext);
}

std::pair<fs::path, fs::path> keep_earlier_copies(const fs::path& file, const fs::path& side, const EarlierNames& names) {
  std::error_code ec;
  for (int n = 0; n < 1000; ++n) {
    const auto [kept, kept_side] = names(n);
    // Both names free first: a user's file at either is never written over.
    if (fs::exists(fs::symlink_status(kept, ec)) || fs::exists(fs::symlink_status(kept_side, ec))) continue;
    if (!file.empty() && !keep_copy(file, kept)) continue;
    bool side_kept = true;
    try {
      side_kept = side.empty() || keep_copy(side, kept_side);
    } catch (const InputError&) {
      // Half a pair is no copy (hundred-and-twenty-first hostile pass: a full disk failed the sidecar's
      // copy and left the CSV's behind, unsaid, and the next run kept under "-1"); the original is intact.
      if (!file.empty()) fs::remove(kept, ec);
      throw;
    }
    if (!side_kept) {
      if (!file.empty()) fs::remove(kept, ec);
      continue;
    }
    return {kept, kept_side};
  }
  throw InputError((file.empty() ? side : file).string() + " holds what --force would replace, and no name beside "
                   "it was free to keep it under; move it away first");
}

void keep_file_force_replaces(const fs::path& out, const std::string& why, const fs::path& side,
                              const std::function<fs::path(const fs::path&)>& side_name) {
  std::error_code ec;
  const bool link = fs::is_symlink(fs::symlink_status(out, ec));
  if (!link && !fs::is_regular_file(fs::symlink_status(out, ec))) return;
  const bool has_side = !side.empty() && side_name && fs::is_regular_file(fs::symlink_status(side, ec));
  const auto [kept, kept_side] = keep_earlier_copies(out, has_side ? side : fs::path(), [&](int n) {
    const fs::path k = earlier_name(out, out.extension().string(), n);
    return std::make_pair(k, has_side ? side_name(k) : fs::path());
  });
  const std::string with = has_side ? " with " + kept_side.filename().string() : std::string();
  if (link)
    return warn(out.string() + " was a symbolic link (to " + fs::read_symlink(kept, ec).string() +
                ") that --force replaces with a file (without it: " + why + "); the link is kept as " + kept.string() +
                with + ", and what it points to is untouched");
  warn(out.string() + " held a file that --force replaces (without it: " + why + "); it is kept as " + kept.string() +
       with);
}

}  // namespace detail

void keep_what_force_replaces(const fs::path& csv, bool force, const std::function<void(bool)>& checks) {
  checks(force);  // what --force does not change
  if (!force) return;
  std::string why;
  try {
    checks(false);
    return;
  } catch (const InputError& e) {
    why = e.what();
    why = why.substr(0, why.find("; choose another --out"));
  }
  std::error_code ec;
  const fs::path side = provenance_path(csv);
  const bool has_side = fs::is_regular_file(side, ec) && is_carb_provenance(side);
  if (fs::is_symlink(fs::symlink_status(csv, ec)))
    return detail::keep_file_force_replaces(csv, why, has_side ? side : fs::path(),
                                            [](const fs::path& k) { return provenance_path(k); });
  // Whatever file the refusal was about, dataset or not (fifty-seventh hostile pass: a dataset with a
  // comment line first, capitalised names or pandas' dropped empty columns is no dataset to the
  // reader, and merge/export/plan --force replaced it with nothing kept), or the only provenance of
  // a dataset moved away.
  const bool has_csv = fs::is_regular_file(fs::symlink_status(csv, ec));
  if (!has_csv && !(has_side && !fs::exists(fs::symlink_status(csv, ec)))) return;
  // A CSV whose provenance a killed run left staged is kept with it (sixtieth hostile pass: the
  // rerun's cleanup removed that staged provenance as a stale temporary, and the kept CSV had none).
  // Sixty-first: nor when the sidecar there is the earlier run's, which the killed run's CSV replaced
  // and its staged provenance was to: the staged one is what describes the CSV kept.
  const bool side_is_csvs = has_side && has_csv && [&] {
    std::ifstream in(side);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() && j.value(kCsvHashKey, std::string()) == file_fnv1a64(csv).value_or("");
  }();
  const fs::path staged = has_csv && !side_is_csvs ? staged_provenance_of(csv) : fs::path();
  const fs::path keep_side = staged.empty() ? (has_side ? side : fs::path()) : staged;
  const auto [kept, kept_side] =
      detail::keep_earlier_copies(has_csv ? csv : fs::path(), keep_side, [&](int n) {
        const fs::path k = detail::earlier_name(csv, ".csv", n);
        return std::make_pair(k, provenance_path(k));
      });
  warn((has_csv ? csv.string() + (is_dataset_csv(csv) ? " held measurements" : " held a file carb did not write")
                : side.string() + " held the only provenance of a dataset") +
       " that --force replaces (without it: " + why + "); " + (has_csv && !keep_side.empty() ? "they are" : "it is") + " kept as " +
       (has_csv ? kept.string() + (!keep_side.empty() ? " with " + kept_side.filename().string() : std::string())
                : kept_side.string()) +
       (staged.empty() ? std::string() : " (its provenance from the staging file " + staged.filename().string() +
                                             " a killed run left)"));
}

}  // namespace carb
