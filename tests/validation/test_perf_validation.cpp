// Predicts every published measurement in tests/validation/perf/cases.yaml, prints case,
// measured, predicted and error, and asserts the figures held near today's (support/held_bounds.hpp),
// inside the accuracy targets (docs/perf-model.md, "Validation": median absolute error <= 20 %,
// 90th percentile <= 40 %), and no prediction beyond the physical limit (peak FLOPs, peak
// bandwidth) of the hardware it ran on.

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "catalog/catalog.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "support/held_bounds.hpp"
#include "support/validation_cases.hpp"

namespace {

using namespace gpusel;
using namespace gpusel::validation;

// Held bounds (support/held_bounds.hpp: today + 10 %, at least + 0.5 point; counts at today's).
constexpr std::size_t held_cases = 100;                               // today 100
constexpr double median_bound_percent = held_bound_percent(7.2, 20);  // today 7.2 % -> 7.9 %
constexpr double p90_bound_percent = held_bound_percent(27.4, 40);    // today 27.4 % -> 30.1 %

}  // namespace

TEST_CASE("perf model against published measurements", "[validation][perf]") {
    const Catalog catalog = builtin_catalog();
    const ModelLibrary models = builtin_models();
    const EfficiencyTable efficiency = builtin_efficiency();
    const std::vector<PreparedCase> cases = prepare(load_cases(validation_folder("perf")), catalog, models);
    REQUIRE(cases.size() >= held_cases);

    std::vector<double> errors;
    std::map<std::string, std::vector<double>> errors_by_set;  // "inference rows", "Set B training rows", ...
    std::string table = fmt::format("{:<34} {:<15} {:>5} {:<29} {:>12} {:>12} {:>8}\n", "case", "gpu", "count",
                                    "metric", "measured", "predicted", "error");
    int beyond_limit = 0;
    for (const PreparedCase& entry : cases) {
        const ValidationCase& item = entry.item;
        INFO("case " << item.id);
        const Prediction prediction = predict(entry, efficiency);
        REQUIRE(prediction.valid);
        const double error = signed_error(prediction, item);
        errors.push_back(std::abs(error));
        const std::string kind = entry.workload.is_training() ? "training rows" : "inference rows";
        errors_by_set[kind].push_back(std::abs(error));
        if (item.set_b) {
            errors_by_set["Set B " + kind].push_back(std::abs(error));
        }
        const bool within_limit = within_physical_limit(prediction);
        if (!within_limit) {
            ++beyond_limit;
        }
        CHECK(within_limit);
        table += fmt::format("{:<34} {:<15} {:>5} {:<29} {:>12.5g} {:>12.5g} {:>+7.1f}%{}\n", item.id, item.gpu,
                             item.count, item.metric, item.measured, prediction.value, 100 * error,
                             within_limit ? "" : "  BEYOND PHYSICAL LIMIT");
    }
    const double median = percentile_of(errors, 0.5);
    const double p90 = percentile_of(errors, 0.9);
    const double worst = percentile_of(errors, 1.0);
    table += fmt::format(
        "\n{} cases (held >= {}): median absolute error {:.1f} % (held <= {:.1f}, target <= 20 %), "
        "90th percentile {:.1f} % (held <= {:.1f}, target <= 40 %), worst {:.1f} %, beyond physical "
        "limit: {}\n",
        errors.size(), held_cases, 100 * median, median_bound_percent, 100 * p90, p90_bound_percent, 100 * worst,
        beyond_limit);
    const auto summary = [&](const char* group, const std::vector<double>& values) {
        if (!values.empty()) {
            table += fmt::format("{:<28} {:>3} cases: median {:.1f} %, p90 {:.1f} %, worst {:.1f} %\n", group,
                                 values.size(), 100 * percentile_of(values, 0.5), 100 * percentile_of(values, 0.9),
                                 100 * percentile_of(values, 1.0));
        }
    };
    for (const auto& [name, values] : errors_by_set) {
        summary(name.c_str(), values);
    }
    std::cout << table << std::flush;
    CHECK(100 * median <= median_bound_percent);
    CHECK(100 * p90 <= p90_bound_percent);
    CHECK(beyond_limit == 0);
}
