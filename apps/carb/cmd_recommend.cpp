// `carb recommend`: the batch size and precision that minimise energy (or latency) per image for
// one architecture within a latency and memory budget.
#include <iostream>
#include <sstream>

#include "carb/recommend.hpp"
#include "config_flags.hpp"

namespace carb::cli {
namespace {

struct RecommendCmd {
  std::string model, batches, precisions, format;
  ConfigFlags arch;
  double latency_max = 0, memory_max = 0, confidence = 0;
  CLI::Option *latency_opt = nullptr, *memory_opt = nullptr, *batches_opt = nullptr, *precisions_opt = nullptr;
};

std::vector<std::string> split_list(const std::string& s, const char* flag) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) throw InputError(std::string(flag) + " '" + s + "' has an empty item");
    out.push_back(item);
  }
  // getline drops a last empty item: "8," was taken as "8" while ",8" was refused.
  if (!s.empty() && s.back() == ',') throw InputError(std::string(flag) + " '" + s + "' has an empty item");
  return out;
}

int parse_batch(const std::string& s) {
  std::size_t used = 0;
  int b = 0;
  try {
    b = std::stoi(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used != s.size()) throw InputError("--batches: '" + s + "' is not an integer");
  return b;
}

void run(const RecommendCmd& c) {
  const Config a = c.arch.config();
  RecommendOptions o;
  o.family = a.family, o.depth = a.depth, o.width = a.width, o.resolution = a.resolution;
  if (c.batches_opt->count() > 0) {  // given empty, it is an empty list, not the default
    o.batches.clear();
    for (const auto& s : split_list(c.batches, "--batches")) o.batches.push_back(parse_batch(s));
  }
  if (c.precisions_opt->count() > 0 && c.precisions.empty()) throw InputError("--precisions is empty");
  if (!c.precisions.empty())
    for (const auto& s : split_list(c.precisions, "--precisions")) o.precisions.push_back(parse_precision(s));
  if (c.latency_opt->count() > 0) o.latency_max_ms = c.latency_max;
  if (c.memory_opt->count() > 0) o.memory_max_mb = c.memory_max;
  if (c.confidence > 0) o.confidence = c.confidence;
  const RecommendResult r = recommend(CarbModel::load(c.model), o);
  if (c.format == "json")
    std::cout << json_text(r.to_json(), 1) << '\n';
  else
    print_recommendation(r, std::cout);
  // The result (with best = null) is still printed: a script sees why, and the exit status says no fit.
  // The reasons are in it; the error line says where (seventy-second hostile pass: a paragraph of
  // them was printed twice, on stdout and again on stderr).
  if (!r.best)
    throw InputError("no batch size x precision meets the constraints (" + std::to_string(r.evaluated) +
                     " evaluated): why is in the " + (c.format == "json" ? "document's \"message\"" : "output above"));
}

Registrar reg({"recommend",
               "Recommend the batch size and precision with the lowest energy (or latency) per image for one "
               "architecture within latency and memory budgets",
               [](CLI::App& app) {
                 auto c = std::make_shared<RecommendCmd>();
                 app.add_option("--model", c->model, "model bundle of the deployment platform")->required();
                 c->arch.add(app, false);
                 c->batches_opt = app.add_option("--batches", c->batches,
                                                 "comma-separated batch sizes (default 1,2,4,8,16,32,64)");
                 c->precisions_opt = app.add_option("--precisions", c->precisions,
                                                    "comma-separated precisions (default: those the model was "
                                                    "trained on with this family)");
                 c->latency_opt =
                     app.add_option("--latency-max", c->latency_max, "latency budget, ms per batch")->check(in_range(1e-9, 1e15));
                 c->memory_opt = app.add_option("--memory-max", c->memory_max, "peak memory budget, MB")->check(in_range(1e-9, 1e15));
                 app.add_option("--confidence", c->confidence,
                                "judge the budgets on the upper bound of the split-conformal interval at this "
                                "coverage (0.8, 0.9, 0.95 or 0.99) instead of the point prediction")
                     ->check(confidence_level());
                 add_format(app, c->format, {"table", "json"});
                 app.callback([c] { run(*c); });
               }});

}  // namespace
}  // namespace carb::cli
