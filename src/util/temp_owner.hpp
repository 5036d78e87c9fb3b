// Temporary names that carry their owner's pid (".NAME.carb-...-PID-XXXXXX"), so that a later run
// can tell what a killed carb left behind (its process is gone) from what another carb is writing
// now, with no marker file that could itself be torn by a kill. See docs/ARCHITECTURE.md, Outputs.
#pragma once

#include <filesystem>
#include <string>

namespace carb::detail {

/// The mkstemp/mkdtemp template for a temporary beside `target`: ".NAME" + tag + "PID-" + kind + "XXXXXX".
std::string owned_temp_template(const std::filesystem::path& target, const std::string& tag,
                                const std::string& kind = "");

/// Removes the temporaries beside `target` made with `tag` whose owning process no longer exists.
/// Names that do not parse as carb's are left alone: not ours to judge.
void remove_stale_temps(const std::filesystem::path& target, const std::string& tag);

}  // namespace carb::detail
