#include "monotone.hpp"

#include "carb/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace carb {

namespace {

double knob_value(const Config& c, const std::string& knob) {
  if (knob == "batch") return c.batch;
  if (knob == "resolution") return c.resolution;
  if (knob == "depth") return c.depth;
  return c.width;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool holds(const std::vector<std::string>& knobs, const char* knob) {
  return std::find(knobs.begin(), knobs.end(), knob) != knobs.end();
}

}  // namespace

std::vector<std::string> monotone_knobs(const Dataset& d, const std::string& target) {
  std::vector<std::string> out;
  for (const auto& knob : kMonotoneKnobCandidates) {
    // the configuration with this knob left out -> this knob's value -> the values measured there
    using Line = std::tuple<int, int, double, double, double, double>;
    std::map<Line, std::map<double, std::vector<double>>> lines;
    for (const Record& r : d.rows) {
      const auto v = r.value(target);
      if (r.status != Status::ok || !v) continue;
      const Config& c = r.config;
      const auto other = [&](const char* k) { return knob == k ? 0.0 : knob_value(c, k); };
      const Line line{static_cast<int>(c.family), static_cast<int>(c.precision), other("depth"), other("width"),
                      other("resolution"), other("batch")};
      lines[line][knob_value(c, knob)].push_back(*v);
    }
    int steps = 0;
    bool falls = false;
    for (const auto& [line, levels] : lines) {
      double before = 0;
      bool first = true;
      for (const auto& [level, values] : levels) {
        const double v = median_of(values);
        if (!first) {
          ++steps;
          falls = falls || v < before * (1 - kMonotoneTolerance);
        }
        before = v, first = false;
      }
    }
    if (!falls && steps >= kMinMonotoneSteps) out.push_back(knob);
  }
  if (holds(out, "depth") || holds(out, "width")) {
    // The trained lattice one prediction may need answered across networks: per held knob, its
    // trained levels (depths per family, over every precision, as predictions read them: the most
    // of those; a review: per family and precision undercounted it by up to the precisions).
    double lattice = 1;
    for (const auto& knob : out) {
      std::map<Family, std::set<double>> levels;  // one set per family for depth, one for the others
      for (const Record& r : d.rows)
        if (r.status == Status::ok && r.value(target))
          levels[knob == "depth" ? r.config.family : Family::basic].insert(knob_value(r.config, knob));
      std::size_t most = 0;
      for (const auto& [family, ls] : levels) most = std::max(most, ls.size());
      lattice *= static_cast<double>(most);
    }
    if (lattice > static_cast<double>(kMaxAcrossLattice))
      out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& k) { return k == "depth" || k == "width"; }),
                out.end());
  }
  return out;
}

namespace {

std::uint64_t pack(int a, int b) {
  return (std::uint64_t{static_cast<std::uint32_t>(a)} << 32) | static_cast<std::uint32_t>(b);
}

// Two knobs held together, x and y, and the two others, u and v, which with the family, the
// precision and the readings make a group: configurations of one group differ in x and y alone.
// Within a network: resolution and batch.
struct WithinNetwork {
  static constexpr const char* x_knob = "resolution";
  static constexpr const char* y_knob = "batch";
  static double x(const Config& c) { return c.resolution; }
  static double y(const Config& c) { return c.batch; }
  static double u(const Config& c) { return c.depth; }
  static double v(const Config& c) { return c.width; }
  static void place(Config& c, double x, double y) { c.resolution = static_cast<int>(x), c.batch = static_cast<int>(y); }
  // A place as one integer, as cheap to hash as a key can be.
  struct Keyer {
    Keyer(const std::vector<Config>&, const std::vector<double>&) {}
    std::uint64_t operator()(double x, double y) const { return pack(static_cast<int>(x), static_cast<int>(y)); }
  };
};

// Across the networks of a family and precision, at one resolution and batch: depth and width.
struct AcrossNetworks {
  static constexpr const char* x_knob = "depth";
  static constexpr const char* y_knob = "width";
  static double x(const Config& c) { return c.depth; }
  static double y(const Config& c) { return c.width; }
  static double u(const Config& c) { return c.resolution; }
  static double v(const Config& c) { return c.batch; }
  static void place(Config& c, double x, double y) { c.depth = static_cast<int>(x), c.width = y; }
  // A width by its index among the widths asked and trained (every width a place can have).
  struct Keyer {
    std::vector<double> widths;
    Keyer(const std::vector<Config>& configs, const std::vector<double>& trained) : widths(trained) {
      for (const Config& c : configs) widths.push_back(c.width);
      std::sort(widths.begin(), widths.end());
      widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
    }
    std::uint64_t operator()(double x, double y) const {
      return pack(static_cast<int>(x), static_cast<int>(std::lower_bound(widths.begin(), widths.end(), y) - widths.begin()));
    }
  };
};

using GroupKey = std::tuple<int, int, double, double, double, double>;

template <class P>
GroupKey group_of(const Config& c, const std::vector<Telemetry>& tel, bool by_readings,
                  std::size_t row) {
  const auto reading = [](const std::optional<double>& v) { return v ? *v : -1.0; };  // none: below any reading
  return {static_cast<int>(c.family), static_cast<int>(c.precision), P::u(c), P::v(c),
          by_readings ? reading(tel.at(row).avg_sm_util) : 0.0, by_readings ? reading(tel.at(row).avg_mem_util) : 0.0};
}

// A place in a group's plane, as its plane's Keyer makes it: integers, not strings or doubles: a
// million configurations have about twenty smaller ones each, most of them asked too (a preset, a
// grid), and formatting each one's key cost more than answering; a hashed pair of doubles twice the
// time of the hold.
using Places = std::unordered_map<std::uint64_t, std::size_t>;

constexpr double kNone = -std::numeric_limits<double>::infinity();

// One held target's lattices over the rows of one group. A row's configurations below, at
// trained levels TX and TY, split in three: the grid TX<x x TY<y, the line x x TY<y and the line
// TX<x x y. The grids of all rows together are a staircase (a down-set of the trained grid), so
// each row's largest answer below is one prefix maximum of the staircase and one of each of its
// two lines: linear in the group's answers below, where visiting every row's lattice was
// rows x levels^2 (20,000 rows of 129 x 64 levels: minutes).
template <class P>
struct GroupLattice {
  std::vector<std::size_t> tall;  // staircase: per trained x index, the trained ys under it
  std::map<double, std::size_t> along_y;  // a row's x -> trained ys below on its line
  std::map<double, std::size_t> along_x;  // a row's y -> trained xs below on its line
  std::vector<std::pair<std::size_t, std::size_t>> below;  // per row: (trained xs, ys) below it

  GroupLattice(const std::vector<std::size_t>& rows, const std::vector<Config>& configs, bool by_x,
               bool by_y, const std::vector<double>& xs, const std::vector<double>& ys) {
    const auto count_below = [](const std::vector<double>& levels, double v, bool held) -> std::size_t {
      return held ? static_cast<std::size_t>(std::lower_bound(levels.begin(), levels.end(), v) - levels.begin()) : 0;
    };
    std::vector<std::size_t> widest;  // per count of xs below: the most ys below
    for (std::size_t i : rows) {
      const double cx = P::x(configs[i]), cy = P::y(configs[i]);
      const std::size_t x = count_below(xs, cx, by_x);
      const std::size_t y = count_below(ys, cy, by_y);
      below.emplace_back(x, y);
      if (y > 0) along_y[cx] = std::max(along_y[cx], y);
      if (x > 0) along_x[cy] = std::max(along_x[cy], x);
      if (x > 0 && y > 0) {
        if (widest.size() < x + 1) widest.resize(x + 1, 0);
        widest[x] = std::max(widest[x], y);
      }
    }
    // Index x is under every row with more than x levels below: the widest of those.
    tall.assign(widest.empty() ? 0 : widest.size() - 1, 0);
    for (std::size_t x = tall.size(), most = 0; x-- > 0;) tall[x] = most = std::max(most, widest[x + 1]);
  }

  /// Every configuration below some row, once: fn(x, y).
  template <class Fn>
  void each_place(const std::vector<double>& xs, const std::vector<double>& ys, Fn&& fn) const {
    for (std::size_t x = 0; x < tall.size(); ++x)
      for (std::size_t y = 0; y < tall[x]; ++y) fn(xs[x], ys[y]);
    for (const auto& [cx, n] : along_y)
      for (std::size_t y = 0; y < n; ++y) fn(cx, ys[y]);
    for (const auto& [cy, n] : along_x)
      for (std::size_t x = 0; x < n; ++x) fn(xs[x], cy);
  }

  /// Per row (in `rows` order), the largest answer below it (kNone when none is finite).
  std::vector<double> largest_below(const std::vector<std::size_t>& rows,
                                    const std::vector<Config>& configs, const std::vector<double>& xs,
                                    const std::vector<double>& ys,
                                    const std::function<double(double, double)>& answer_at) const {
    std::vector<std::vector<double>> grid(tall.size());
    for (std::size_t x = 0; x < tall.size(); ++x) {
      grid[x].resize(tall[x]);
      for (std::size_t y = 0; y < tall[x]; ++y) {  // tall never grows with x: grid[x - 1][y] is there
        double m = answer_at(xs[x], ys[y]);
        if (x > 0) m = std::max(m, grid[x - 1][y]);
        if (y > 0) m = std::max(m, grid[x][y - 1]);
        grid[x][y] = m;
      }
    }
    const auto running = [](std::size_t count, auto&& at) {
      std::vector<double> v(count);
      for (std::size_t k = 0; k < count; ++k) v[k] = std::max(at(k), k > 0 ? v[k - 1] : kNone);
      return v;
    };
    std::map<double, std::vector<double>> on_y, on_x;
    for (const auto& [cx, n] : along_y)
      on_y[cx] = running(n, [&, cx = cx](std::size_t y) { return answer_at(cx, ys[y]); });
    for (const auto& [cy, n] : along_x)
      on_x[cy] = running(n, [&, cy = cy](std::size_t x) { return answer_at(xs[x], cy); });
    std::vector<double> out(rows.size(), kNone);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto [x, y] = below[k];
      const Config& c = configs[rows[k]];
      if (x > 0 && y > 0) out[k] = grid[x - 1][y - 1];
      if (y > 0) out[k] = std::max(out[k], on_y.at(P::x(c))[y - 1]);
      if (x > 0) out[k] = std::max(out[k], on_x.at(P::y(c))[x - 1]);
    }
    return out;
  }
};

// The trained levels of a plane's x, for a group (by its configurations' family).
using LevelsOf = std::function<const std::vector<double>&(const Config&)>;

using Columns = std::map<std::string, std::vector<double>>;

// hold_monotone's one step, in plane P: each row with a positive answer raised to the largest
// finite answer below it there. The answers below are the asked rows' own (from `read` instead
// where given) and the answerer's for the others. With `reach`, each row's largest finite answer at
// or below it (kNone where none) is written there too, whatever its own answer.
template <class P>
void hold_in(const std::vector<Config>& configs, const std::vector<Telemetry>& tel, bool by_readings,
             const std::map<std::string, std::vector<std::string>>& held, const LevelsOf& xs_of,
             const std::vector<double>& ys, Columns& values, const Answerer& answer, std::size_t answered_at_once,
             Columns* reach = nullptr, const Columns* read = nullptr) {
  if (held.empty()) return;
  const std::size_t n = configs.size();
  for (const auto& [target, knobs] : held)
    if (const auto it = values.find(target); it == values.end() || it->second.size() != n)
      throw ModelError("internal: " + target + " was not answered for every configuration");
  if (reach)
    for (const auto& [target, knobs] : held) (*reach)[target].assign(n, kNone);
  std::vector<std::vector<std::size_t>> groups;  // rows, by group, in order of first appearance
  {
    std::map<GroupKey, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [it, fresh] = index.emplace(group_of<P>(configs[i], tel, by_readings, i), groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  std::map<std::string, std::vector<double>> asked;  // before any is raised
  for (const auto& [target, knobs] : held) asked[target] = values.at(target);
  const typename P::Keyer key(configs, ys);
  // Groups are held a chunk at a time, whole, so that the answers below rows with many trained
  // levels under them never all stand in memory at once.
  for (std::size_t first = 0; first < groups.size();) {
    std::vector<Places> places;                       // per group of the chunk: place -> row
    std::vector<std::vector<GroupLattice<P>>> lattices;  // per group of the chunk, per held target
    std::vector<Config> extra;  // the smaller configurations nobody asked: place n + their index
    std::vector<Telemetry> extra_tel;
    std::size_t last = first;
    for (; last < groups.size() && (last == first || extra.size() < answered_at_once); ++last) {
      const auto& rows = groups[last];
      const std::vector<double>& xs = xs_of(configs[rows.front()]);
      auto& place = places.emplace_back();
      for (std::size_t i : rows) place.emplace(key(P::x(configs[i]), P::y(configs[i])), i);
      auto& lattice = lattices.emplace_back();  // one per held target, in `held`'s order
      for (const auto& [target, knobs] : held)
        lattice.emplace_back(rows, configs, holds(knobs, P::x_knob), holds(knobs, P::y_knob), xs, ys)
            .each_place(xs, ys, [&](double x, double y) {
              if (!place.emplace(key(x, y), n + extra.size()).second) return;
              Config k = configs[rows.front()];
              P::place(k, x, y);
              extra.push_back(k);
              if (!tel.empty()) extra_tel.push_back(tel.at(rows.front()));  // one group, one reading
            });
    }
    const auto answered = extra.empty() ? std::map<std::string, std::vector<double>>{} : answer(extra, extra_tel);
    std::size_t held_index = 0;
    for (const auto& [target, knobs] : held) {
      const auto there = answered.find(target);
      if (!extra.empty() && (there == answered.end() || there->second.size() != extra.size()))
        throw ModelError("internal: the smaller configurations were not answered for " + target);
      const auto& before = asked.at(target);
      const auto& below = read ? read->at(target) : before;
      auto& v = values.at(target);
      for (std::size_t k = first; k < last; ++k) {
        const auto& rows = groups[k];
        const std::vector<double>& xs = xs_of(configs[rows.front()]);
        const auto& place = places[k - first];
        const auto answer_at = [&](double x, double y) {
          const std::size_t j = place.at(key(x, y));
          const double w = j < n ? below[j] : there->second[j - n];
          return std::isfinite(w) ? w : kNone;
        };
        const auto most = lattices[k - first][held_index].largest_below(rows, configs, xs, ys, answer_at);
        for (std::size_t m = 0; m < rows.size(); ++m) {
          const std::size_t i = rows[m];
          if (before[i] > 0) v[i] = std::max(v[i], most[m]);  // 0: no cost any device has
          if (reach) (*reach)[target][i] = std::max(most[m], std::isfinite(below[i]) ? below[i] : kNone);
        }
      }
      ++held_index;
    }
    first = last;
  }
}

template <class T>
std::vector<double> as_doubles(const std::set<T>& s) {
  return std::vector<double>(s.begin(), s.end());
}

}  // namespace

const std::set<int>& TrainedLevels::depths_of(Family f) const {
  static const std::set<int> none;
  const auto it = depths.find(f);
  return it == depths.end() ? none : it->second;
}

std::vector<Config> configs_below(const Config& c, const std::vector<std::string>& knobs, const TrainedLevels& levels) {
  std::vector<Config> out;
  for (int d : levels_below(c.depth, levels.depths_of(c.family), holds(knobs, "depth")))
    for (double w : levels_below(c.width, levels.widths, holds(knobs, "width")))
      for (int r : levels_below(c.resolution, levels.resolutions, holds(knobs, "resolution")))
        for (int b : levels_below(c.batch, levels.batches, holds(knobs, "batch"))) {
          if (d == c.depth && w == c.width && r == c.resolution && b == c.batch) continue;
          Config k = c;
          k.depth = d, k.width = w, k.resolution = r, k.batch = b;
          out.push_back(k);
        }
  return out;
}

void hold_monotone(const std::vector<Config>& configs, const std::vector<Telemetry>& tel, bool by_readings,
                   const std::map<std::string, std::vector<std::string>>& held, const TrainedLevels& levels,
                   std::map<std::string, std::vector<double>>& values, const Answerer& answer,
                   std::size_t answered_at_once) {
  std::map<std::string, std::vector<std::string>> within, across;  // each target's knobs, per plane
  for (const auto& [target, knobs] : held)
    for (const auto& k : knobs)
      (k == WithinNetwork::x_knob || k == WithinNetwork::y_knob ? within : across)[target].push_back(k);
  const std::vector<double> resolutions = as_doubles(levels.resolutions), batches = as_doubles(levels.batches);
  const LevelsOf all_resolutions = [&](const Config&) -> const std::vector<double>& { return resolutions; };
  // Across networks, a smaller network counts by the largest finite answer at or below it within its
  // own network (its reach), whatever its own answer: with a network's 0 (no cost any device has)
  // or NaN read as its whole lattice, a larger one missed the answers under it (a review). The
  // targets held across but not within count by their own answers.
  std::map<std::string, std::vector<std::string>> within_across;
  for (const auto& [target, knobs] : across)
    if (const auto it = within.find(target); it != within.end()) within_across.insert(*it);
  Columns read;
  for (const auto& [target, knobs] : across)
    if (!within_across.count(target)) read[target] = values.at(target);
  hold_in<WithinNetwork>(configs, tel, by_readings, within, all_resolutions, batches, values, answer, answered_at_once,
                         across.empty() ? nullptr : &read);
  if (across.empty()) return;
  // A smaller network nobody asked is answered, and counts by its reach, for the targets held across
  // networks only (holding the others there is not read: it tripled a tester's training time).
  const Answerer reached = [&](const std::vector<Config>& cs, const std::vector<Telemetry>& ts) {
    Columns v = answer(cs, ts);
    Columns r;
    hold_in<WithinNetwork>(cs, ts, by_readings, within_across, all_resolutions, batches, v, answer, answered_at_once, &r);
    for (auto& [target, reach] : r) v[target] = std::move(reach);
    return v;
  };
  std::map<Family, std::vector<double>> depths;  // a family no configuration trained has none
  for (const auto& [family, ds] : levels.depths) depths[family] = as_doubles(ds);
  const std::vector<double> no_depths;
  const LevelsOf depths_of = [&](const Config& c) -> const std::vector<double>& {
    const auto it = depths.find(c.family);
    return it == depths.end() ? no_depths : it->second;
  };
  hold_in<AcrossNetworks>(configs, tel, by_readings, across, depths_of, as_doubles(levels.widths), values, reached,
                          answered_at_once, nullptr, &read);
}

bool valid_monotone_knobs(const std::vector<std::string>& knobs) {
  std::size_t next = 0;  // each candidate at most once, in order
  for (const auto& k : knobs) {
    while (next < kMonotoneKnobCandidates.size() && kMonotoneKnobCandidates[next] != k) ++next;
    if (next == kMonotoneKnobCandidates.size()) return false;
    ++next;
  }
  return true;
}

}  // namespace carb
