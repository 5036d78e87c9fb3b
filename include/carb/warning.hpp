// Warnings: what carb tells a caller without stopping (the answer is given, but something about
// its input deserves a look). Library code calls warn(); where the words go is the caller's
// choice, as with XGBoost's and LightGBM's log callbacks. By default they go to standard error as
// "carb: warning: <text>".
#pragma once
#include <functional>
#include <string>

namespace carb {

using WarningHandler = std::function<void(const std::string&)>;

/// Sends every later warning to `handler` (an empty one restores the default, standard error);
/// returns the handler it replaces. Not meant to be called while other threads may warn.
WarningHandler set_warning_handler(WarningHandler handler);

/// Reports one warning through the current handler.
void warn(const std::string& text);

}  // namespace carb
