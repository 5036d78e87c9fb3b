// `carb transfer`: how measurements on one platform map onto another's (fits, rank correlation,
// zero-shot error of a source model, few-shot calibration against k).
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "carb/error.hpp"
#include "carb/transfer.hpp"
#include "cli.hpp"

namespace carb::cli {
namespace {

struct TransferOpts {
  std::filesystem::path source, target, model;
  TransferOptions t;
  std::string format;
};

Registrar reg({"transfer",
               "Compare two platforms on their common configurations: y_B = a*y_A + b, Spearman, "
               "zero-shot and few-shot calibration error",
               [](CLI::App& app) {
                 auto o = std::make_shared<TransferOpts>();
                 app.add_option("--source", o->source, "dataset CSV of the source platform (A)")
                     ->required()
                     ->check(CLI::ExistingFile);
                 app.add_option("--target", o->target, "dataset CSV of the target platform (B)")
                     ->required()
                     ->check(CLI::ExistingFile);
                 app.add_option("--model-source", o->model, "model bundle trained on the source platform")
                     ->check(CLI::ExistingDirectory);
                 app.add_option("--seed", o->t.seed, "seed of the few-shot draws")->capture_default_str();
                 app.add_option("--repeats", o->t.repeats, "draws per k")
                     ->check(in_range(1, 10000))
                     ->capture_default_str();
                 app.add_option("--k", o->t.ks, "calibration set sizes")
                     ->check(in_range(2, 1000000))
                     ->capture_default_str();
                 add_format(app, o->format, {"table", "json"});
                 app.callback([o] {
                   // --k 5 --k 5 printed the k = 5 rows twice (twentieth hostile pass). transfer()
                   // refuses it too; said here in the flag's words, before the data is read.
                   if (std::set<int>(o->t.ks.begin(), o->t.ks.end()).size() != o->t.ks.size())
                     throw InputError("--k lists a calibration set size twice");
                   if (std::error_code ec; std::filesystem::equivalent(o->source, o->target, ec))
                     throw InputError(
                         "--source and --target are the same file; a platform compared with itself "
                         "fits y = x by construction");
                   std::optional<CarbModel> model;
                   if (!o->model.empty()) model = CarbModel::load(o->model);
                   const auto res = transfer(read_dataset_csv(o->source), read_dataset_csv(o->target), o->t,
                                             model ? &*model : nullptr);
                   if (o->format == "json")
                     std::cout << json_text(res.to_json(), 2) << '\n';
                   else
                     render_transfer_table(res, std::cout);
                 });
               }});

}  // namespace
}  // namespace carb::cli
