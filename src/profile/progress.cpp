// Progress bar / periodic progress lines on stderr.
#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace carb {

Progress::Progress(std::string what, std::size_t total, bool enabled)
    : what_(std::move(what)), total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {
  start_ = last_ = std::chrono::steady_clock::now();
}

void Progress::tick(const std::string& note) {
  ++done_;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  // A terminal gets a redraw at most 5 times a second; a log a line every 30 s.
  const double gap = std::chrono::duration<double>(now - last_).count();
  if (done_ < total_ && gap < (tty_ ? 0.2 : 30.0)) return;
  last_ = now;
  draw(note);
}

void Progress::draw(const std::string& note) {
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = el > 0 ? done_ / el : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : 0;
  const int pct = total_ ? static_cast<int>(100.0 * done_ / total_) : 100;
  char buf[256];
  if (tty_) {
    const int filled = pct * 30 / 100;
    std::string bar = std::string(filled, '#') + std::string(30 - filled, '.');
    std::snprintf(buf, sizeof buf, "\r%s [%s] %zu/%zu %3d%% %.2f/s ETA %.0fs %-32.32s", what_.c_str(), bar.c_str(),
                  done_, total_, pct, rate, eta, note.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu (%d%%) %.2f/s ETA %.0fs %s\n", what_.c_str(), done_, total_, pct,
                  rate, eta, note.c_str());
  }
  std::fputs(buf, stderr);
  std::fflush(stderr);
}

void Progress::finish() {
  if (enabled_ && tty_) std::fputs("\n", stderr);
}

}  // namespace carb
