// Warnings held back until the work they describe is done (warning.hpp says them; this decides when).
#pragma once
#include <string>
#include <vector>

namespace carb::detail {

/// While one is alive, warn() on this thread holds its words instead of saying them. release() says
/// them, in order, once the work is done: a handler that throws (Python's, with warnings made
/// errors) then stops the caller after the work, not in the middle of it (a hostile tester: an
/// export with force=True kept the user's file, raised, and wrote nothing; each retry kept another
/// copy). Released or destroyed, a holder passes its words to the one it was made inside, if any.
/// Destroyed unreleased (the work failed), it says them and drops whatever the handler throws:
/// the failure in flight is the one to report.
class HeldWarnings {
 public:
  HeldWarnings();
  ~HeldWarnings();
  HeldWarnings(const HeldWarnings&) = delete;
  HeldWarnings& operator=(const HeldWarnings&) = delete;
  void release();

 private:
  std::vector<std::string> held_;
  std::vector<std::string>* outer_;
  bool released_ = false;
};

}  // namespace carb::detail
