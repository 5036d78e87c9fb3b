// SIGINT/SIGTERM as a request to stop: long work (profiling, training) polls stop_signal() at
// points where stopping keeps everything it has finished, and says so with carb::Interrupted.
#pragma once
#include <signal.h>

#include <csignal>
#include <string>

#include "carb/interrupt.hpp"

namespace carb::detail {

/// A second SIGINT/SIGTERM this many seconds or more after the first ends the process; one sooner is
/// the same request delivered twice (`timeout` signals the command and its process group).
inline constexpr double kSameStopRequestS = 1.0;

/// While one is alive, the first SIGINT or SIGTERM is recorded instead of ending the process; a
/// second one, kSameStopRequestS or more later, ends it. The public carb::StopOnSignalsScope
/// (carb/interrupt.hpp) under the name the library's own code uses.
using StopOnSignals = carb::StopOnSignalsScope;

/// The signal that asked the work to stop, 0 while none has (or outside every StopOnSignals).
int stop_signal();

/// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int sig);

/// Throws carb::Interrupted naming the signal when one asked to stop: "<what> interrupted by SIGINT; <kept>".
void throw_if_stopped(const char* what, const char* kept);

}  // namespace carb::detail
