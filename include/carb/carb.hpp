// carb's public API in one include: the configuration space and its presets, the analytic
// architecture model, datasets, the CARB predictor, evaluation, screening and recommendation.
// What each module holds, and how data flows between them: docs/ARCHITECTURE.md.
//
//   #include <carb/carb.hpp>
//   const carb::CarbModel m = carb::CarbModel::load("models/cpu-2t");
//   const auto cols = m.predict_columns(carb::enumerate_preset("screen"));  // target -> values
//
// Every function reports a bad input by throwing a subclass of carb::Error (carb/error.hpp).
#pragma once

#include "carb/version.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "carb/config.hpp"
#include "carb/space.hpp"
#include "carb/network_spec.hpp"
#include "carb/arch.hpp"
#include "carb/features.hpp"
#include "carb/dataset.hpp"
#include "carb/data_ops.hpp"
#include "carb/model.hpp"
#include "carb/training.hpp"
#include "carb/training_record.hpp"
#include "carb/prediction_io.hpp"
#include "carb/prediction_notes.hpp"
#include "carb/interrupt.hpp"
#include "carb/evaluate.hpp"
#include "carb/characterization.hpp"
#include "carb/characterize.hpp"
#include "carb/transfer.hpp"
#include "carb/screen.hpp"
#include "carb/recommend.hpp"
#include "carb/plan.hpp"
#include "carb/plugin.hpp"
#include "carb/profiler.hpp"
#include "carb/store.hpp"
#include "carb/store_export.hpp"
#include "carb/store_info.hpp"
#include "carb/matrix.hpp"
#include "carb/learner.hpp"
#include "carb/analytic_estimate.hpp"
#include "carb/envelope.hpp"
#include "carb/drift.hpp"
#include "carb/metrics.hpp"
#include "carb/extra_columns.hpp"
#include "carb/combine.hpp"
#include "carb/bundle_destination.hpp"
#include "carb/meter.hpp"
#include "carb/report.hpp"
#include "carb/text_table.hpp"
