// Where a model bundle is written, and the rule that carb never removes what it did not write.
// `carb train --out PATH` once emptied a directory holding the user's CSV and notes, replaced a
// regular file and deleted PATH.old/ and PATH.tmp/ that the user had made. Now the destination
// is checked and a staging directory made before any training (an occupied or unwritable PATH
// fails in milliseconds, not after minutes of work), the bundle is written into the staging
// directory, and commit() swaps it in atomically: PATH is the old bundle or the new one at
// every instant, even under kill -9.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace carb {

class BundleDestination {
 public:
  /// Checks `dir` and stages a directory beside it. Throws InputError when `dir` holds anything
  /// but a carb model bundle (a regular file, a directory with other files) unless `force`, and
  /// when its parent is missing or not writable. Removes staging directories that an earlier,
  /// killed carb left for the same `dir` (their process is gone). `keep` are files the bundle was
  /// trained from: a `dir` that is or holds one is refused even with `force` (train --out . --force
  /// once deleted the CSV beside it; so did Python's save(".", force=True)).
  explicit BundleDestination(std::filesystem::path dir, bool force = false,
                             const std::vector<std::filesystem::path>& keep = {});
  /// Removes the staging directory unless commit() succeeded.
  ~BundleDestination();
  BundleDestination(const BundleDestination&) = delete;
  BundleDestination& operator=(const BundleDestination&) = delete;

  /// Throws InputError, unless `force`, when `dir` holds a bundle of another platform than
  /// `platform` (thirty-first hostile pass: `train --out models/h200` on CPU data replaced the H200
  /// model without a word; retraining a platform's own bundle is the everyday case and stays free).
  /// commit() checks it again, for a bundle that arrived during the work.
  void check_platform(const std::string& platform);

  /// The directory to write the bundle's files into.
  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& dir() const { return dir_; }
  /// Replaces `dir` with the staged bundle atomically (renameat2 RENAME_EXCHANGE where the file
  /// system has it) and removes what was there. Checks `dir` again first: it may have changed
  /// during the work; and what was swapped out once more, after the swap: one that gained files
  /// carb did not write is kept as `dir.earlier` (or `dir.earlier-N`), and stderr says so.
  void commit();

 private:
  std::filesystem::path dir_, staging_;
  std::string platform_;  // what check_platform() was given; "" when never called
  bool force_ = false, committed_ = false;
  int hold_fd_ = -1;  // the flock that tells other carbs this staging directory's owner is alive
};

namespace detail {
/// After the swap of commit(): unless `force`, when `old` (the bundle swapped out of `dir`) holds
/// files carb did not write, or the model of a platform other than `platform` (when given), moves
/// it to `dir.earlier` (or `dir.earlier-N`), says so on stderr and returns true; otherwise false,
/// and the caller removes it.
bool keep_changed_bundle(const std::filesystem::path& old, const std::filesystem::path& dir, bool force,
                         const std::string& platform = "");
}  // namespace detail

/// Why `dir` may not be replaced by a model bundle, or "" when it may: it does not exist, or it
/// is a carb bundle whose every file its manifest names.
std::string bundle_replace_refusal(const std::filesystem::path& dir);

}  // namespace carb
