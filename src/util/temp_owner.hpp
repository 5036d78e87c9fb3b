// Temporary names that carry their owner's pid (".NAME.carb-...-PID-XXXXXX"), so that a later run
// can tell what a killed carb left behind (its process is gone) from what another carb is writing
// now, with no marker file that could itself be torn by a kill. See docs/ARCHITECTURE.md, Outputs.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace carb::detail {

/// The directory `p`'s entry lives in: its parent, or "." for a bare name (where temporaries
/// beside it, and SQLite's side files, go).
std::filesystem::path parent_of(const std::filesystem::path& p);

/// The mkstemp/mkdtemp template for a temporary beside `target`: ".NAME" + tag + "PID-" + kind + "XXXXXX".
std::string owned_temp_template(const std::filesystem::path& target, const std::string& tag,
                                const std::string& kind = "");

/// Takes an exclusive flock on a temporary its caller made and returns the descriptor (or -1) to
/// keep open for as long as the temporary is in use; the kernel releases it when the process dies.
/// The pid in a name cannot tell a live owner in another PID namespace or on another node from a
/// dead one (seventeenth hostile pass: a containerised carb removed a running train's staging
/// directory); remove_stale_temps leaves a held temporary alone. A temporary made with mkstemp
/// can be locked through its own descriptor instead (flock(fd, LOCK_EX)).
int hold_temp(const std::filesystem::path& temp);

/// InputError when the temporary owned_temp_template makes for `target` would be a longer name than
/// the file system allows, though `target` itself is not (seventeenth hostile pass: a 236-character
/// --out wrote its CSV, then failed on its sidecar's temporary, leaving half a pair).
void check_temp_name_fits(const std::filesystem::path& target, const std::string& tag, const std::string& kind = "");

/// Removes the temporaries beside `target` made with `tag` whose owning process no longer exists
/// (by its pid, and no process holds hold_temp's lock on it) and whose content `ours` recognises
/// as what carb writes there. A name alone proves nothing (a
/// user's directory named like carb's staging was once emptied): names that do not parse exactly
/// as carb's templates, and entries `ours` does not recognise, are left alone.
void remove_stale_temps(const std::filesystem::path& target, const std::string& tag,
                        const std::function<bool(const std::filesystem::path&)>& ours);

/// The temporaries beside `target` made with `tag` and `kind` (as owned_temp_template names them)
/// whose owning process no longer exists, newest first. Nothing is removed.
std::vector<std::filesystem::path> dead_owners_temps(const std::filesystem::path& target, const std::string& tag,
                                                     const std::string& kind);

}  // namespace carb::detail
