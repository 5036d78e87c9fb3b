// Fuzz target: configuration text -> Config, the input of profile, predict and screen.
//
// The first line of the input goes to the string parsers a flag reaches (parse_family,
// parse_precision, find_preset, shard's "k/N"); the whole input is read as a configurations CSV
// (read_configs_csv). Beyond "no crash, only carb::Error" it checks what the rest of carb relies
// on: every Config the reader returns passes validate(), writes back and reads back unchanged,
// and has an analytic model (build_network_spec) whose totals network_totals reproduces, with
// the int64 counters free of overflow (UBSan aborts on it).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/space.hpp"
#include "fuzz_common.hpp"

namespace {

using carb::fuzz::finding;

void flags(const std::string& line) {
  try {
    const carb::Family f = carb::parse_family(line);
    if (carb::parse_family(carb::to_string(f)) != f) finding("family does not round-trip: " + line);
  } catch (const carb::Error&) {
  }
  try {
    const carb::Precision p = carb::parse_precision(line);
    if (carb::parse_precision(carb::to_string(p)) != p) finding("precision does not round-trip: " + line);
  } catch (const carb::Error&) {
  }
  try {
    if (carb::find_preset(line).name != line)
      finding("find_preset returned another preset than asked: " + line);
  } catch (const carb::Error&) {
  }
  // A fleet of N shards covers a list exactly once, so an accepted shard is every N-th element
  // from its first, starting inside the first N. The batch field tells the elements apart.
  static const std::vector<carb::Config> all = [] {
    std::vector<carb::Config> v(17);
    for (std::size_t i = 0; i < v.size(); ++i) v[i].batch = static_cast<int>(i);
    return v;
  }();
  try {
    const std::vector<carb::Config> part = carb::shard(all, line);
    if (line.find('/') == std::string::npos) finding("shard accepted a spec without '/': " + line);
    if (part.size() >= 2) {
      const int first = part[0].batch, stride = part[1].batch - part[0].batch;
      if (stride <= 0 || first >= stride) finding("shard " + line + " is not a stride of the list");
      for (std::size_t i = 1; i < part.size(); ++i)
        if (part[i].batch - part[i - 1].batch != stride) finding("shard " + line + " skipped an element");
      if (part.back().batch + stride < static_cast<int>(all.size()))
        finding("shard " + line + " stopped early");
    }
  } catch (const carb::Error&) {
  }
}

void analytic(const carb::Config& c) {
  const carb::NetworkSpec s = carb::build_network_spec(c);
  const carb::NetworkSpec t = carb::network_totals(c);
  if (s.params <= 0 || s.macs <= 0 || s.act_elements_max <= 0)
    finding("non-positive analytic totals for " + carb::config_key(c));
  if (s.params != t.params || s.macs != t.macs || s.act_elements_total != t.act_elements_total ||
      s.act_elements_max != t.act_elements_max || s.conv_layers != t.conv_layers ||
      s.input_shape != t.input_shape)
    finding("network_totals disagrees with build_network_spec for " + carb::config_key(c));
  (void)s.param_bytes(), (void)s.activation_bytes_total(), (void)s.input_bytes();
}

void configs_csv(std::string_view text) {
  const auto file = carb::fuzz::scratch_dir() / "configs.csv";
  carb::fuzz::write_bytes(file, text);
  std::vector<carb::Config> cs;
  try {
    cs = carb::read_configs_csv(file);
  } catch (const carb::Error&) {
    return;
  }
  for (const carb::Config& c : cs) {
    try {
      carb::validate(c);
    } catch (const carb::Error& e) {
      finding(std::string("read_configs_csv returned a configuration validate() refuses: ") + e.what());
    }
  }
  std::ostringstream out;
  carb::write_configs_csv(cs, out);
  const auto copy = carb::fuzz::scratch_dir() / "rewritten.csv";
  carb::fuzz::write_bytes(copy, out.str());
  std::vector<carb::Config> back;
  try {
    back = carb::read_configs_csv(copy);
  } catch (const carb::Error& e) {
    finding(std::string("configurations carb wrote no longer read: ") + e.what());
  }
  if (back != cs) finding("configurations written and read back changed");
  // A few per input: the analytic model of a deep network is the slow part of an execution.
  for (std::size_t i = 0; i < cs.size() && i < 3; ++i) analytic(cs[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = carb::fuzz::as_text(data, size);
  flags(std::string(text.substr(0, text.find('\n'))));
  configs_csv(text);
  return 0;
}
