// Fuzz target: the dataset CSV reader, the door every measurement comes in by.
//
// Exercises the in-memory tokenizer (csv::parse), both forms of read_dataset_csv (throwing, and
// collecting every problem for `carb data validate`) and validate_dataset_csv. Beyond "no crash,
// only carb::Error", it checks the contracts that keep data from being lost or invented silently:
//  - the two reading forms agree: a file with a collected problem never reads cleanly;
//  - validate_dataset_csv finds something whenever the throwing reader refuses the file;
//  - what was read writes back and reads back to the same text (nothing dropped or altered);
//  - the tokenizer's rows write back and parse back to the same fields.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "carb/data_ops.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "data/csv.hpp"
#include "fuzz_common.hpp"

namespace {

using carb::fuzz::finding;

// Rows the writer cannot express are left out of the round trip: a row of one empty field is
// written as an empty line, which every CSV reader (carb's included, by contract) skips.
bool representable(const carb::csv::Row& r) { return !(r.fields.size() == 1 && r.fields[0].empty()); }

void tokenizer(std::string_view text) {
  std::vector<carb::csv::Row> rows;
  try {
    rows = carb::csv::parse(text, "fuzz.csv");
  } catch (const carb::DataError&) {
    return;
  }
  std::ostringstream out;
  std::vector<std::vector<std::string>> kept;
  std::size_t last_line = 0;
  for (const auto& r : rows) {
    if (r.line < 1 || r.line < last_line) finding("csv::parse gave line numbers out of order");
    last_line = r.line;
    if (!representable(r)) continue;
    carb::csv::write_row(out, r.fields);
    kept.push_back(r.fields);
  }
  std::vector<carb::csv::Row> again;
  try {
    again = carb::csv::parse(out.str(), "rewritten.csv");
  } catch (const carb::DataError& e) {
    finding(std::string("csv::write_row wrote text csv::parse refuses: ") + e.what());
  }
  if (again.size() != kept.size()) finding("csv rows written and parsed back changed in number");
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (again[i].fields != kept[i])
      finding("csv row " + std::to_string(i) + " changed when written and parsed back");
}

std::string written(const carb::Dataset& d) {
  std::ostringstream out;
  carb::write_dataset_csv(d, out);
  return out.str();
}

void dataset(std::string_view text) {
  const auto file = carb::fuzz::scratch_dir() / "input.csv";
  carb::fuzz::write_bytes(file, text);

  std::vector<std::string> problems;
  std::vector<std::size_t> lines;
  const carb::Dataset collected = carb::read_dataset_csv(file, problems, &lines);
  if (lines.size() != collected.rows.size())
    finding("read_dataset_csv gave a line per row in another number");

  bool throwing_ok = true;
  carb::Dataset d;
  try {
    d = carb::read_dataset_csv(file);
  } catch (const carb::Error&) {
    throwing_ok = false;
  }
  if (throwing_ok && !problems.empty())
    finding("read_dataset_csv read cleanly a file whose collecting form found: " + problems.front());

  const std::vector<std::string> validated = carb::validate_dataset_csv(file);
  if (!throwing_ok && validated.empty())
    finding("read_dataset_csv refused a file validate_dataset_csv finds nothing wrong with");
  if (!throwing_ok) return;

  // Round trip: what carb read, carb writes, and reading that back must give the same dataset.
  const std::string once = written(d);
  const auto copy = carb::fuzz::scratch_dir() / "rewritten.csv";
  carb::fuzz::write_bytes(copy, once);
  carb::Dataset back;
  try {
    back = carb::read_dataset_csv(copy);
  } catch (const carb::Error& e) {
    finding(std::string("a dataset carb read and wrote back no longer reads: ") + e.what());
  }
  if (back.rows.size() != d.rows.size())
    finding("a dataset written and read back changed its number of rows");
  if (written(back) != once) finding("a dataset written and read back changed its contents");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = carb::fuzz::as_text(data, size);
  tokenizer(text);
  dataset(text);
  return 0;
}
