// Warnings: what carb tells a caller without stopping (the answer is given, but something about
// its input deserves a look). Library code calls warn(); where the words go is the caller's
// choice, as with XGBoost's and LightGBM's log callbacks. By default they go to standard error as
// "carb: warning: <text>".
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace carb {

using WarningHandler = std::function<void(const std::string&)>;

/// Sends every later warning to `handler` (an empty one restores the default, standard error);
/// returns the handler it replaces. Not meant to be called while other threads may warn. The
/// handler is called on the thread that warns, with no lock of carb's held, and so may be called
/// from several threads at once: it serialises what it shares.
WarningHandler set_warning_handler(WarningHandler handler);

/// Reports one warning through the current handler.
void warn(const std::string& text);

/// Warnings about an input (an edited sidecar, say) are said once per input and content within a
/// round, since one task reads an input more than once. A new round says them again: the CLI runs
/// one round per command; the Python module starts one per call that reads datasets (a hostile
/// tester: with warnings made errors, only the first of three calls on an edited file raised).
void new_warning_round();
/// The current round (0 until new_warning_round is first called).
std::uint64_t warning_round();

}  // namespace carb
