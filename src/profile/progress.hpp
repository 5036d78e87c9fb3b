// Progress reporting for long runs: a live bar with count, rate and ETA on a terminal,
// plain periodic lines otherwise (logs, CI).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace carb {

class Progress {
 public:
  /// `enabled` false silences it; output goes to stderr.
  Progress(std::string what, std::size_t total, bool enabled);
  void tick(const std::string& note = "");
  void finish();

 private:
  void draw(const std::string& note);
  std::string what_;
  std::size_t total_, done_ = 0;
  bool enabled_, tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace carb
