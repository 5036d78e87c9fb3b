// Stopping carb's long work on SIGINT or SIGTERM, for a program that calls the library (the CLI
// and the Python module do). While a StopOnSignalsScope is alive, the first SIGINT or SIGTERM is
// recorded instead of ending the process; training, evaluation and profiling stop at their next
// step and throw carb::Interrupted (carb/error.hpp), keeping what they finished. A second signal,
// a second or more later, ends the process (the way out of a step that does not poll). Scopes
// nest, in one thread or several: the first one opened resets the record and installs the
// handler, the last one closed puts back what was there. A signal the process was started ignoring
// (a shell's `carb ... &` under some shells) stays ignored.
#pragma once

namespace carb {

class StopOnSignalsScope {
 public:
  StopOnSignalsScope();
  ~StopOnSignalsScope();
  StopOnSignalsScope(const StopOnSignalsScope&) = delete;
  StopOnSignalsScope& operator=(const StopOnSignalsScope&) = delete;
  /// The signal recorded since the outermost scope opened (SIGINT or SIGTERM), 0 while none has. A
  /// caller whose work finished after its last check reads it here, so the request is not lost.
  int signal() const;
};

}  // namespace carb
