// A long command's progress on stderr, and where it hears a signal: `carb plan` and `carb screen`.
#pragma once
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>

#include "util/stop_signal.hpp"

namespace carb::cli {

/// Each call stops the command on a signal (carb::Interrupted: "<command> interrupted by SIGINT;
/// <kept>"); a line (made only when shown) goes out after the first second, then at most every
/// 200 ms on a terminal (redrawn), every 30 s in a log. A StopOnSignals scope must be alive.
class ProgressLine {
 public:
  ProgressLine(const char* command, const char* kept) : command_(command), kept_(kept) {}

  template <class Line>
  void operator()(const Line& line) {
    detail::throw_if_stopped(command_, kept_);
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) ||
        (shown_ && now - last_ < (tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(30000))))
      return;
    last_ = now;
    std::cerr << (tty_ ? "\r" : "") << "carb " << command_ << ": " << line() << (tty_ ? "            " : "\n")
              << std::flush;
    shown_ = true;
  }

  /// The last word, over a redrawn line (padded: it may be shorter), where a line was shown.
  void finish(const std::string& last) const {
    if (shown_) std::cerr << (tty_ ? "\r" : "") << "carb " << command_ << ": " << last << (tty_ ? "                    \n" : "\n");
  }

 private:
  const char* command_;
  const char* kept_;
  const bool tty_ = isatty(STDERR_FILENO) != 0;
  bool shown_ = false;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

}  // namespace carb::cli
