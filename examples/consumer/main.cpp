// Predicts one configuration and screens a preset with a trained carb bundle:
//   consumer MODEL_DIR
#include <carb/carb.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer MODEL_DIR\n";
    return 2;
  }
  try {
    const carb::CarbModel model = carb::CarbModel::load(argv[1]);
    const carb::Config c{carb::Family::basic, 18, 1.0, 64, 8, carb::Precision::fp32};
    const auto p = model.predict({c}, {}, 0.9);
    std::cout << "carb " << CARB_VERSION_STRING << ", model of " << model.platform() << "\n";
    for (const auto& [target, value] : p.front().value) {
      const auto [lo, hi] = p.front().interval.at(target);
      std::cout << carb::config_key(c) << " " << target << " " << value << " [" << lo << ", " << hi << "]\n";
    }
    carb::ScreenOptions o;
    o.rank_by = "latency";
    o.budgets = {{"latency_ms", 50.0}};
    const carb::ScreenResult r = carb::screen(carb::enumerate_preset("tiny"), model, nullptr, o);
    std::cout << "screened " << r.stages.front().count << " configurations, " << r.within_budget
              << " within 50 ms, " << r.pareto.size() << " on the Pareto front\n";
    return r.pareto.empty() ? 1 : 0;
  } catch (const carb::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
