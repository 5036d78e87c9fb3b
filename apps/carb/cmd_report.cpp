// `carb report`: one self-contained HTML file with characterization, model accuracy, transfer
// and screening charts and tables.
#include <iostream>

#include "carb/report.hpp"
#include "cli.hpp"

namespace carb::cli {
namespace {

Registrar reg(
    {"report",
     "Write one offline HTML report (inline SVG charts + tables) of datasets, models, transfer and a "
     "screening result",
     [](CLI::App& app) {
       auto o = std::make_shared<ReportOptions>();
       auto screen = std::make_shared<std::string>();
       auto format = std::make_shared<std::string>();
       app.add_option("--data", o->data, "dataset CSVs (two of different platforms add transfer)")
           ->required()
           ->check(CLI::ExistingFile);
       app.add_option("--model", o->models, "model bundle directories (parity plots)")
           ->check(CLI::ExistingDirectory);
       app.add_option("--screen", *screen, "output of `carb screen --format json`")->check(CLI::ExistingFile);
       auto curves = std::make_shared<std::string>();
       app.add_option("--curves", *curves, "learning curves of active profiling (the --csv of bench/active_learning_bench)")
           ->check(CLI::ExistingFile);
       app.add_option("--out", o->out, "HTML file to write; an earlier carb report there is replaced, anything else refused")
           ->required();
       app.add_flag("--force", o->force,
                    "replace --out even if it is not a report carb wrote (never one of the inputs); what was "
                    "there is kept first as NAME.earlier.EXT");
       app.add_option("--title", o->title, "report title")->capture_default_str();
       app.add_option("--seed", o->seed, "seed of the transfer few-shot draws")->capture_default_str();
       add_format(app, *format, {"table", "json"});
       app.callback([o, screen, curves, format] {
         if (!screen->empty()) o->screen = *screen;
         if (!curves->empty()) o->curves = *curves;
         write_report(*o);
         if (*format == "json")
           std::cout << nlohmann::json{{"out", o->out.string()},
                                       {"bytes", std::filesystem::file_size(o->out)}}
                            // A file name is bytes, not always UTF-8 (hundred-and-second hostile pass:
                            // an internal error, exit 3, after the report was written).
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                     << '\n';
         else
           std::cout << "wrote " << printable(o->out.string()) << '\n';
       });
     }});

}  // namespace
}  // namespace carb::cli
