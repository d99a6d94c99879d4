// Out-of-sample accuracy of the performance model (docs/perf-model.md, "Validation"): every factor
// of data/efficiency.yaml that was fitted to validation rows (its `fitted_on` list) is refitted
// without the rows of one publication at a time, and that publication's rows are predicted with
// the refitted table (leave-one-publication-out cross-validation). Printed and asserted:
//  - the absolute error of those predictions, overall, by workload group and by GPU vendor, next
//    to the in-sample error of the shipped table;
//  - the error of predicted speed ratios between GPU types for the same workload;
//  - how much calibrating on one GPU's measurement (perf/calibration.hpp, the user's feature)
//    reduces the error on the other GPUs;
//  - the out-of-sample speed bands per group against data/efficiency.yaml's `speed_bands`.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "perf/calibration.hpp"
#include "support/held_bounds.hpp"
#include "support/validation_cases.hpp"

namespace {

using namespace gpusel;
using namespace gpusel::validation;

// Held bounds (support/held_bounds.hpp: today + 10 %, at least + 0.5 point, never above the
// target or hold bound it replaces; counts at today's). Where today + 10 % would pass the old
// bound, the old bound stays (its value is the second argument).
constexpr std::size_t held_cases = 117;                                        // today 117
constexpr double refit_move_bound_percent = held_bound_percent(16.6, 35);      // today at most 16.6 % -> 18.3 %
constexpr double out_median_bound_percent = held_bound_percent(13.3, 15);      // today 13.3 % -> 14.6 %
constexpr double out_p90_bound_percent = held_bound_percent(33.8, 35);         // today 33.8 % -> 35 % (target)
constexpr double calibrated_p90_bound_percent = held_bound_percent(44.5, 46);  // today 44.5 % -> 46 % (as held)
constexpr double ratio_median_bound_percent = held_bound_percent(13.9, 14.5);  // today 13.9 % -> 14.5 % (as held)
constexpr double in_sample_ratio_median_bound_percent = held_bound_percent(10.3, 10.5);       // today 10.3 % -> 10.5 %
constexpr double same_publication_ratio_median_bound_percent = held_bound_percent(13.6, 14);  // today 13.6 % -> 14 %
// data/efficiency.yaml's speed_bands against the bands computed here: the data's two-decimal
// rounding (0.005) plus 0.001; today at most 0.0042 (was 0.02).
constexpr double speed_band_tolerance = 0.005 + 0.001;

// One fitted value: a factor of the defaults (rule == -1) or of one rule.
struct FittedFactor {
    int rule = -1;
    std::string factor;
    std::vector<std::string> cases;
    double value = 0;
};

// The factors fitted on these validation cases. Those fitted on the InferenceX serving rows
// (ids IX…) are refitted by their own leave-one-out (test_serving_load_validation.cpp).
std::vector<FittedFactor> fitted_factors(const EfficiencyTable& table) {
    const auto on_inferencex = [](const std::vector<std::string>& cases) {
        return !cases.empty() && cases.front().rfind("IX", 0) == 0;
    };
    std::vector<FittedFactor> fitted;
    for (const auto& [factor, cases] : table.defaults_fitted_on) {
        fitted.push_back({-1, factor, cases, *efficiency_factor(table.defaults, factor)});
    }
    for (std::size_t i = 0; i < table.rules.size(); ++i) {
        for (const auto& [factor, cases] : table.rules[i].fitted_on) {
            if (on_inferencex(cases)) {
                continue;
            }
            fitted.push_back({static_cast<int>(i), factor, cases, table.rules[i].values.at(factor)});
        }
    }
    return fitted;
}

std::string label_of(const EfficiencyTable& table, const FittedFactor& fitted) {
    return fmt::format(
        "{}.{}", fitted.rule < 0 ? std::string("defaults") : table.rules[static_cast<std::size_t>(fitted.rule)].label,
        fitted.factor);
}

void set_value(EfficiencyTable& table, const FittedFactor& fitted, double value) {
    if (fitted.rule < 0) {
        set_efficiency_factor(table.defaults, fitted.factor, value);
    } else {
        table.rules[static_cast<std::size_t>(fitted.rule)].values[fitted.factor] = value;
    }
}

void remove_value(EfficiencyTable& table, const FittedFactor& fitted) {
    if (fitted.rule >= 0) {
        table.rules[static_cast<std::size_t>(fitted.rule)].values.erase(fitted.factor);
    }
}

// The median |log(predicted / measured)| over `rows`: the fit's objective (robust to one outlier).
double fit_loss(const std::vector<const PreparedCase*>& rows, const EfficiencyTable& table) {
    std::vector<double> losses;
    for (const PreparedCase* row : rows) {
        const Prediction prediction = predict(*row, table);
        losses.push_back(prediction.valid ? std::abs(std::log(prediction.value / row->item.measured)) : 10.0);
    }
    // The mean of the two middle values for an even count, so that two rows can both pull.
    std::sort(losses.begin(), losses.end());
    const std::size_t n = losses.size();
    return n % 2 == 1 ? losses[n / 2] : (losses[n / 2 - 1] + losses[n / 2]) / 2;
}

// Golden-section search in log space over [value / 3, value × 3] (fractions at most 0.98).
double refit(EfficiencyTable& table, const FittedFactor& fitted, const std::vector<const PreparedCase*>& rows) {
    const double low = std::log(fitted.value / 3);
    const double high =
        std::log(efficiency_factor_is_fraction(fitted.factor) ? std::min(max_achieved_fraction, fitted.value * 3)
                                                              : fitted.value * 3);
    const double best = std::exp(golden_section_minimum(low, high, 18, [&](double log_value) {
        set_value(table, fitted, std::exp(log_value));
        return fit_loss(rows, table);
    }));
    set_value(table, fitted, best);
    return best;
}

struct Outcome {
    const PreparedCase* entry = nullptr;
    bool leaked = false;  // its fold kept a default fitted only on this publication (no other source)
    Prediction in_sample;
    Prediction out_of_sample;
    EfficiencyTable fold_table;  // the table the out-of-sample prediction used
};

struct Summary {
    std::size_t count = 0;
    double median = 0;
    double p90 = 0;
};

Summary summarise(const std::vector<double>& errors) {
    return {errors.size(), percentile_of(errors, 0.5), percentile_of(errors, 0.9)};
}

std::string summary_text(const Summary& summary) {
    return fmt::format("{:>4} rows  median {:>5.1f} %  p90 {:>5.1f} %", summary.count, 100 * summary.median,
                       100 * summary.p90);
}

// Two runs of the same workload, metric and stack on different GPUs: a speed ratio to compare.
bool comparable(const Outcome& a, const Outcome& b) {
    return a.entry->item.file == b.entry->item.file && a.entry->item.metric == b.entry->item.metric &&
           a.entry->item.stack == b.entry->item.stack && a.entry->item.gpu != b.entry->item.gpu;
}

}  // namespace

TEST_CASE("perf model out of sample: leave one publication out", "[validation][perf][cross-validation]") {
    const Catalog catalog = builtin_catalog();
    const ModelLibrary models = builtin_models();
    const EfficiencyTable shipped = builtin_efficiency();
    const std::vector<PreparedCase> cases = prepare(all_cases(), catalog, models);
    REQUIRE(cases.size() >= held_cases);
    std::map<std::string, const PreparedCase*> by_id;
    for (const PreparedCase& entry : cases) {
        REQUIRE(by_id.emplace(entry.item.id, &entry).second);  // ids are unique across both files
    }
    const std::vector<FittedFactor> fitted = fitted_factors(shipped);
    for (const FittedFactor& factor : fitted) {
        for (const std::string& id : factor.cases) {
            INFO(label_of(shipped, factor) << " fitted_on " << id);
            CHECK(by_id.count(id) == 1);  // every fitted_on id names a validation case
        }
    }

    // The shipped values are close to what the fit gives on all their rows, so the folds refit
    // what produced the file. Each factor alone, the rest as shipped: factors fitted together
    // (a bandwidth fraction and an overhead on the same rows) and flat medians over few rows
    // move further than one joint fit would: most are within 10 %, the largest 16.6 % today,
    // held at refit_move_bound_percent.
    std::string fit_table = "fitted factor                                   shipped   refit on all rows  rows\n";
    double largest_move = 0;
    for (const FittedFactor& factor : fitted) {
        std::vector<const PreparedCase*> rows;
        for (const std::string& id : factor.cases) {
            if (by_id.count(id) == 1) {
                rows.push_back(by_id.at(id));
            }
        }
        EfficiencyTable trial = shipped;
        const double value = rows.empty() ? factor.value : refit(trial, factor, rows);
        fit_table += fmt::format("{:<46} {:>9.4g} {:>12.4g} {:>10}\n", label_of(shipped, factor), factor.value, value,
                                 rows.size());
        INFO(label_of(shipped, factor));
        const double move = std::abs(value / factor.value - 1);
        largest_move = std::max(largest_move, move);
        CHECK(100 * move <= refit_move_bound_percent);
    }
    fit_table += fmt::format("largest move of a refit from its shipped value: {:.1f} % (held <= {:.1f} %)\n",
                             100 * largest_move, refit_move_bound_percent);
    std::cout << fit_table << "\n";

    // Folds.
    std::set<std::string> publications;
    for (const PreparedCase& entry : cases) {
        publications.insert(entry.item.publication);
    }
    std::vector<Outcome> outcomes;
    std::string fold_table = "publication (fold)                      rows  refitted factors\n";
    for (const std::string& publication : publications) {
        EfficiencyTable table = shipped;
        std::vector<std::string> refitted;
        bool leaked = false;
        for (const FittedFactor& factor : fitted) {
            std::vector<const PreparedCase*> rows;  // the factor's rows from other publications
            bool from_this = false;
            for (const std::string& id : factor.cases) {
                if (by_id.count(id) == 0) {
                    continue;
                }
                const PreparedCase* row = by_id.at(id);
                if (row->item.publication == publication) {
                    from_this = true;
                } else {
                    rows.push_back(row);
                }
            }
            if (!from_this) {
                continue;
            }
            if (rows.empty()) {
                // Nothing else to fit on: the rule goes; a default falls back to its value (a
                // published range) and says so.
                remove_value(table, factor);
                leaked = leaked || factor.rule < 0;
                refitted.push_back(label_of(shipped, factor) +
                                   (factor.rule < 0 ? " (kept: no rows left)" : " (dropped)"));
            } else {
                const double value = refit(table, factor, rows);
                refitted.push_back(fmt::format("{} {:.3g}→{:.3g}", label_of(shipped, factor), factor.value, value));
            }
        }
        std::size_t rows_in_fold = 0;
        for (const PreparedCase& entry : cases) {
            if (entry.item.publication != publication) {
                continue;
            }
            ++rows_in_fold;
            outcomes.push_back({&entry, leaked, predict(entry, shipped), predict(entry, table), table});
        }
        fold_table +=
            fmt::format("{:<38} {:>5}  {}\n", publication, rows_in_fold,
                        refitted.empty() ? std::string("none") : fmt::format("{}", fmt::join(refitted, "; ")));
    }
    std::cout << fold_table << "\n";

    // Errors by group and vendor.
    std::vector<double> in_sample, out_of_sample;
    std::map<std::string, std::vector<double>> by_group_in, by_group_out, by_vendor_out;
    std::map<std::string, std::vector<double>> ratios_by_group;  // measured / predicted, out of sample
    std::string rows_table = fmt::format("{:<34} {:<18} {:<9} {:<8} {:>11} {:>11} {:>8} {:>8}\n", "case", "gpu",
                                         "group", "vendor", "measured", "predicted", "in", "out");
    for (const Outcome& outcome : outcomes) {
        const ValidationCase& item = outcome.entry->item;
        INFO("case " << item.id);
        REQUIRE(outcome.in_sample.valid);
        REQUIRE(outcome.out_of_sample.valid);
        CHECK(within_physical_limit(outcome.out_of_sample));
        const double error_in = signed_error(outcome.in_sample, item);
        const double error_out = signed_error(outcome.out_of_sample, item);
        in_sample.push_back(std::abs(error_in));
        out_of_sample.push_back(std::abs(error_out));
        by_group_in[outcome.entry->group].push_back(std::abs(error_in));
        by_group_out[outcome.entry->group].push_back(std::abs(error_out));
        by_vendor_out[outcome.entry->vendor].push_back(std::abs(error_out));
        const double speed_ratio = outcome.out_of_sample.lower_is_better ? outcome.out_of_sample.value / item.measured
                                                                         : item.measured / outcome.out_of_sample.value;
        ratios_by_group[outcome.entry->group].push_back(speed_ratio);
        rows_table +=
            fmt::format("{:<34} {:<18} {:<9} {:<8} {:>11.5g} {:>11.5g} {:>+7.1f}% {:>+7.1f}%{}\n", item.id, item.gpu,
                        outcome.entry->group, outcome.entry->vendor, item.measured, outcome.out_of_sample.value,
                        100 * error_in, 100 * error_out, outcome.leaked ? "  (kept)" : "");
    }
    std::cout << rows_table << "\n";

    // Speed ratios between GPU types for the same workload, out of sample, and with the shipped
    // table (in sample: every factor fitted on every row).
    std::vector<double> ratio_errors;
    std::vector<double> in_sample_ratio_errors;
    // The pairs whose two runs come from one publication (one harness and software release): what
    // is left of the ratio error once software drift between publications is taken out.
    std::vector<double> same_publication_ratio_errors;
    std::map<std::string, std::vector<double>> ratio_errors_by_workload;
    // Calibration on one GPU, then the other GPU's prediction (the user's path: calibrate_speed on
    // the fold's table with the first case's measurement as a calibration point).
    std::vector<double> before_calibration, after_calibration;
    for (const Outcome& a : outcomes) {
        for (const Outcome& b : outcomes) {
            if (&a == &b || !comparable(a, b)) {
                continue;
            }
            if (a.entry->item.id < b.entry->item.id) {
                const double measured_ratio = a.entry->item.measured / b.entry->item.measured;
                const auto ratio_error = [measured_ratio](const Prediction& first, const Prediction& second) {
                    return std::abs(first.value / second.value / measured_ratio - 1);
                };
                ratio_errors.push_back(ratio_error(a.out_of_sample, b.out_of_sample));
                in_sample_ratio_errors.push_back(ratio_error(a.in_sample, b.in_sample));
                if (a.entry->item.publication == b.entry->item.publication) {
                    same_publication_ratio_errors.push_back(ratio_errors.back());
                }
                const std::string& file = a.entry->item.file;
                ratio_errors_by_workload[file.substr(file.find("/tests/validation/") + 18) + " " + a.entry->item.metric]
                    .push_back(ratio_errors.back());
            }
            if (!a.out_of_sample.speed_metric || b.entry->item.publication != a.entry->item.publication) {
                continue;  // the calibration point and the predicted run come from one fold
            }
            Workload calibrated = b.entry->workload;
            SpeedCalibrationPoint point;
            point.gpu = a.entry->item.gpu;
            point.count = a.entry->item.count;
            point.metric = *a.out_of_sample.speed_metric;
            point.measured = a.entry->item.measured / a.out_of_sample.speed_metric_scale;
            calibrated.calibration.speed = {point};
            const SpeedCalibration calibration = calibrate_speed(calibrated, catalog, b.fold_table);
            const Prediction after = predict(*b.entry, calibrated_efficiency(b.fold_table, calibration));
            REQUIRE(after.valid);
            before_calibration.push_back(std::abs(signed_error(b.out_of_sample, b.entry->item)));
            after_calibration.push_back(std::abs(signed_error(after, b.entry->item)));
        }
    }

    const Summary overall_in = summarise(in_sample);
    const Summary overall_out = summarise(out_of_sample);
    const Summary ratios = summarise(ratio_errors);
    const Summary in_sample_ratios = summarise(in_sample_ratio_errors);
    const Summary before = summarise(before_calibration);
    const Summary after = summarise(after_calibration);
    std::string summary =
        fmt::format("{:<22} {:<44} {}\n", "", "in sample (shipped table)", "out of sample (cross-validated)");
    summary += fmt::format("{:<22} {:<44} {}\n", "all", summary_text(overall_in), summary_text(overall_out));
    for (const auto& [group, errors] : by_group_out) {
        summary += fmt::format("{:<22} {:<44} {}\n", "group " + group, summary_text(summarise(by_group_in[group])),
                               summary_text(summarise(errors)));
    }
    for (const auto& [vendor, errors] : by_vendor_out) {
        summary += fmt::format("{:<22} {:<44} {}\n", "vendor " + vendor, "", summary_text(summarise(errors)));
    }
    summary += fmt::format(
        "\nspeed ratio between GPU types, same workload (out of sample): {} pairs, median {:.1f} %, "
        "p90 {:.1f} % (in sample: median {:.1f} %, p90 {:.1f} %)\n",
        ratios.count, 100 * ratios.median, 100 * ratios.p90, 100 * in_sample_ratios.median, 100 * in_sample_ratios.p90);
    const Summary same_publication = summarise(same_publication_ratio_errors);
    summary += fmt::format("  of which both runs from one publication: {} pairs, median {:.1f} %, p90 {:.1f} %\n",
                           same_publication.count, 100 * same_publication.median, 100 * same_publication.p90);
    for (const auto& [workload, errors] : ratio_errors_by_workload) {
        summary += fmt::format("  {:<70} {:>3} pairs, median {:>5.1f} %\n", workload, errors.size(),
                               100 * percentile_of(errors, 0.5));
    }
    summary += fmt::format(
        "calibrated on one GPU's measurement, error on another GPU of the same workload: {} pairs, "
        "median {:.1f} % → {:.1f} %, p90 {:.1f} % → {:.1f} %\n",
        before.count, 100 * before.median, 100 * after.median, 100 * before.p90, 100 * after.p90);
    summary +=
        "\nspeed bands (measured / predicted: 10th, 50th and 90th percentile, out of sample) against "
        "data/efficiency.yaml:\n";
    for (const std::string_view group : speed_band_groups) {
        const auto found = ratios_by_group.find(std::string(group));
        REQUIRE(found != ratios_by_group.end());
        const double low = percentile_of(found->second, 0.1);
        const double median = percentile_of(found->second, 0.5);
        const double high = percentile_of(found->second, 0.9);
        const SpeedBandFactors& shipped_band = shipped.speed_bands.at(std::string(group));
        const double low_gap = std::abs(shipped_band.low - std::min(low, 0.99));
        const double median_gap = std::abs(shipped_band.median - median);
        const double high_gap = std::abs(shipped_band.high - std::max(high, 1.01));
        summary += fmt::format(
            "  {:<9} low {:.2f} median {:.2f} high {:.2f}   (data: {:.2f} {:.2f} {:.2f}; gaps {:.4f} {:.4f} {:.4f}, "
            "held <= {:.3f})\n",
            group, low, median, high, shipped_band.low, shipped_band.median, shipped_band.high, low_gap, median_gap,
            high_gap, speed_band_tolerance);
        INFO("speed band " << group);
        CHECK(low_gap <= speed_band_tolerance);
        CHECK(median_gap <= speed_band_tolerance);
        CHECK(high_gap <= speed_band_tolerance);
    }
    const auto leaked_rows = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return o.leaked; });
    summary += fmt::format(
        "\n{} rows come from a publication that is the only source of a default factor; their fold "
        "keeps it (marked 'kept' above), so they are not fully out of sample\n",
        leaked_rows);
    std::cout << summary << std::flush;

    // Issue 17's targets are out-of-sample median <= 15 %, p90 <= 35 % and a speed-ratio median
    // <= 10 %. The median and the p90 are met; the median is held near today's figure, the p90 at
    // its target (today + 10 % would be above it). The ratio median (13.9 %) is not met yet
    // (docs/perf-model.md "Validation" says where it comes from), so it is held just above where it
    // stands today, against regressions, and printed against its target.
    // Calibrating on one GPU lowers the median error on the others; it does not lower the tail,
    // which after calibration is the ratio error (two llama.cpp publications disagree by 1.7x on
    // the A100 against the RTX 3090), so the tail is held, not asserted lower.
    CHECK(100 * overall_out.median <= out_median_bound_percent);
    CHECK(100 * overall_out.p90 <= out_p90_bound_percent);
    CHECK(after.median < before.median);
    CHECK(100 * after.p90 <= calibrated_p90_bound_percent);
    CHECK(100 * ratios.median <= ratio_median_bound_percent);
    // With every factor fitted on every row (the shipped table) the ratio median is 10.3 %, and
    // cross-validated refits land above it: meeting 10 % needs new structure, not refits.
    CHECK(100 * in_sample_ratios.median <= in_sample_ratio_median_bound_percent);
    // Same-publication pairs (13.6 % today) are not much better: the ratio gap is the model's,
    // not mainly software drift between publications. Held, like the ratio median.
    CHECK(100 * same_publication.median <= same_publication_ratio_median_bound_percent);
    std::cout << fmt::format(
        "held: out-of-sample median {:.1f} % (<= {:.1f}), p90 {:.1f} % (<= {:.1f}); calibrated "
        "median {:.1f} % (< {:.1f} uncalibrated), p90 {:.1f} % (<= {:.1f}); speed-ratio median "
        "{:.1f} % (<= {:.1f}), in sample {:.1f} % (<= {:.1f}), same publication {:.1f} % "
        "(<= {:.1f})\n",
        100 * overall_out.median, out_median_bound_percent, 100 * overall_out.p90, out_p90_bound_percent,
        100 * after.median, 100 * before.median, 100 * after.p90, calibrated_p90_bound_percent, 100 * ratios.median,
        ratio_median_bound_percent, 100 * in_sample_ratios.median, in_sample_ratio_median_bound_percent,
        100 * same_publication.median, same_publication_ratio_median_bound_percent);
    std::cout << fmt::format(
                     "targets: out-of-sample median {:.1f} % (<= 15 %: {}), p90 {:.1f} % (<= 35 %: {}), "
                     "speed-ratio median {:.1f} % (<= 10 %: {})\n",
                     100 * overall_out.median, overall_out.median <= 0.15 ? "met" : "NOT MET", 100 * overall_out.p90,
                     overall_out.p90 <= 0.35 ? "met" : "NOT MET", 100 * ratios.median,
                     ratios.median <= 0.10 ? "met" : "NOT MET")
              << std::flush;
}
