// `make_plan`: every catalog GPU through the candidate evaluation, ranked by the objective, one
// row per GPU type, the pick, its Pareto-neighbour alternative and the advice; the procurement
// table from the picks.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "explain/explain.hpp"
#include "plan/internal.hpp"
#include "plan/robustness.hpp"

namespace gpusel {

namespace {

using namespace plan_detail;

// Runs `worker` on every hardware thread (at most one per item), or inline for one item.
// The first exception a thread throws is rethrown here once all have stopped.
template <typename Worker>
void run_in_parallel(const Worker& worker, std::size_t items) {
    const std::size_t threads = std::min<std::size_t>(std::max(1U, std::thread::hardware_concurrency()), items);
    if (threads <= 1) {
        worker();
        return;
    }
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    const auto guarded = [&]() {
        try {
            worker();
        } catch (...) {
            if (!failed.exchange(true)) {
                failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t thread = 1; thread < threads; ++thread) {
        pool.emplace_back(guarded);
    }
    guarded();
    for (std::thread& thread : pool) {
        thread.join();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

// search is independent and pure; results are merged in catalog order, so the plan does not
// depend on the scheduling).
std::vector<TrainingSearchResult> search_catalog(const Workload& workload, const Catalog& catalog,
                                                 const EfficiencyTable& efficiency, bool reference) {
    const std::vector<GpuSpec>& gpus = catalog.gpus();
    std::vector<TrainingSearchResult> results(gpus.size());
    std::vector<std::size_t> work;
    for (std::size_t index = 0; index < gpus.size(); ++index) {
        if (static_exclusion(workload, gpus[index]).empty() && !precision_choices(workload, gpus[index]).empty()) {
            work.push_back(index);
        }
    }
    TrainingSearchOptions options;
    options.reference = reference;
    std::atomic<std::size_t> next{0};
    const auto worker = [&]() {
        for (std::size_t item = next++; item < work.size(); item = next++) {
            results[work[item]] = search_training(workload, gpus[work[item]], efficiency, options);
        }
    };
    run_in_parallel(worker, work.size());
    return results;
}

// The alternative is a Pareto neighbour of the pick: faster, or cheaper; never one the pick
// beats on both.
void choose_alternative(RolePlan& plan, const Workload& workload) {
    if (!plan.winner) {
        return;
    }
    const std::vector<Candidate>& ranked = plan.ranked;
    const auto neighbour = std::find_if(ranked.begin() + 1, ranked.end(), [&](const Candidate& other) {
        return speed(other) > speed(ranked.front()) || other.cost.tco_usd < ranked.front().cost.tco_usd || other.tied;
    });
    if (neighbour != ranked.end()) {
        plan.alternative = *neighbour;
        plan.alternative_why_not = alternative_condition(workload, ranked.front(), *neighbour);
    }
}

// The first `top` ranked candidates, with their bands and ties (the analysis saw them all).
void keep_top(RolePlan& plan, std::size_t top) {
    if (plan.ranked.size() <= top) {
        return;
    }
    plan.ranked.resize(top);
    if (plan.uncertainty.bands.size() > top) {
        plan.uncertainty.bands.resize(top);
    }
    const int shown = static_cast<int>(top);
    std::erase_if(plan.uncertainty.tied_with, [shown](int rank) { return rank > shown; });
}

// objective.confidence: a candidate holds only if, in that share of the robustness scenarios,
// it still fits and meets SLO, deadline and budget as ordered (bands[r].p_feasible). Where the
// pick does not, the ranked candidates before the first that does are rejected with the share
// they reach, and that one becomes the pick (true: the analysis must be redone for it). The
// planner's own margins (serving replicas, training micro-batch and deadline at the band's
// quantile) make this rare; it catches what they do not size (budgets, inference memory bands).
bool keep_confident(RolePlan& plan, const Workload& workload, Objective objective) {
    const RoleUncertainty& uncertainty = plan.uncertainty;
    if (!uncertainty.computed || uncertainty.p_feasible >= workload.confidence ||
        uncertainty.bands.size() != plan.ranked.size()) {
        return false;
    }
    std::size_t first = 0;
    while (first < plan.ranked.size() && uncertainty.bands[first].p_feasible < workload.confidence) {
        ++first;
    }
    for (std::size_t r = 0; r < first; ++r) {
        const Candidate& candidate = plan.ranked[r];
        const double share = uncertainty.bands[r].p_feasible;
        Rejection rejection{
            candidate.gpu,
            RejectionKind::confidence,
            "objective.confidence",
            workload.confidence,
            share,
            candidate.count,
            fmt::format("{}× {}: meets every constraint as ordered in {:.0f} % of scenarios (needs "
                        "{:.0f} %, objective.confidence)",
                        candidate.count, describe(candidate.acquisition), share * 100, workload.confidence * 100),
            0};
        rejection.closeness = rejection_closeness(RejectionKind::confidence, workload.confidence, share);
        plan.rejected.insert(plan.rejected.begin(), std::move(rejection));
    }
    plan.ranked.erase(plan.ranked.begin(), plan.ranked.begin() + static_cast<std::ptrdiff_t>(first));
    plan.winner.reset();
    plan.uncertainty = {};
    if (plan.ranked.empty()) {
        return false;
    }
    for (Candidate& candidate : plan.ranked) {
        candidate.tied = false;
    }
    order_ties(plan.ranked, objective);
    plan.winner = plan.ranked.front();
    return true;
}

}  // namespace

RolePlan plan_detail::plan_role(const Workload& workload, const Catalog& catalog, const EfficiencyTable& uncalibrated,
                                Objective objective, std::size_t top, bool reference) {
    RolePlan plan;
    // Measured speeds move every candidate's stack factor alike (perf/calibration.hpp).
    plan.calibration = calibrate_speed(workload, catalog, uncalibrated);
    const EfficiencyTable efficiency = calibrated_efficiency(uncalibrated, plan.calibration);
    plan.speed_band_group = speed_band_group(workload);
    if (const auto band = efficiency.speed_bands.find(plan.speed_band_group); band != efficiency.speed_bands.end()) {
        plan.speed_band = band->second;
    }
    plan.role = workload.role;
    plan.workload = workload;
    plan.question = question(workload);
    plan.workload_class = classify(workload);
    std::vector<Candidate> best_per_configuration;
    CandidateEvaluator evaluator(workload, catalog, efficiency, CandidatePolicy::search(workload), &plan.calibration);
    const std::vector<TrainingSearchResult> searches = workload.is_training()
                                                           ? search_catalog(workload, catalog, efficiency, reference)
                                                           : std::vector<TrainingSearchResult>{};
    std::size_t index = 0;
    for (const GpuSpec& gpu : catalog.gpus()) {
        const std::size_t position = index++;
        Miss miss;
        const std::string excluded = static_exclusion(workload, gpu);
        if (!excluded.empty()) {
            plan.rejected.push_back({gpu.id, RejectionKind::excluded, "", 0, 0, 0, excluded,
                                     rejection_closeness(RejectionKind::excluded, 0, 0)});
            continue;
        }
        const std::vector<PrecisionChoice> precisions = precision_choices(workload, gpu);
        if (precisions.empty()) {
            plan.rejected.push_back({gpu.id, RejectionKind::precision, "precision", 0, 0, 0,
                                     fmt::format("no {} support", to_string(workload.precision)),
                                     rejection_closeness(RejectionKind::precision, 0, 0)});
            continue;
        }
        const std::size_t before = best_per_configuration.size();
        evaluator.begin_gpu();
        if (workload.is_training()) {
            const TrainingSearchResult& search = searches[position];
            plan.space += search.space;
            plan.evaluated += search.evaluated;
            plan.feasible += search.feasible;
            evaluator.evaluate_training(gpu, search, best_per_configuration, miss);
        } else {
            for (const PrecisionChoice& precision : precisions) {
                evaluator.evaluate_inference(gpu, precision, best_per_configuration, miss, plan.evaluated);
            }
        }
        if (best_per_configuration.size() == before) {
            Rejection rejection = std::move(miss.rejection);
            rejection.gpu = gpu.id;
            if (rejection.why_not.empty()) {
                rejection.why_not = evaluator.no_offer_reason(gpu, 0);
            }
            if (precisions.size() == 1 && precisions.front().fallback) {
                rejection.why_not = fmt::format("no {} ({} fallback); {}", to_string(workload.precision),
                                                to_string(precisions.front().precision), rejection.why_not);
            }
            plan.rejected.push_back(std::move(rejection));
        }
    }
    if (!workload.is_training()) {
        plan.space = plan.evaluated;
        plan.feasible = evaluator.feasible();
    }
    // The near misses first: they are the ones worth a second look.
    std::stable_sort(plan.rejected.begin(), plan.rejected.end(),
                     [](const Rejection& a, const Rejection& b) { return a.closeness < b.closeness; });
    for (Candidate& candidate : best_per_configuration) {
        candidate.score = objective_score(objective, candidate);
    }
    sort_by_score(best_per_configuration);
    const std::vector<Candidate> pool = robustness_pool(best_per_configuration);
    // One row per GPU type in the ranking: the best configuration of each.
    std::vector<Candidate> ranked;
    for (Candidate& candidate : best_per_configuration) {
        const bool seen = std::any_of(ranked.begin(), ranked.end(),
                                      [&](const Candidate& other) { return other.gpu == candidate.gpu; });
        if (!seen) {
            ranked.push_back(std::move(candidate));
        }
    }
    order_ties(ranked, objective);
    for (Candidate& candidate : ranked) {
        const GpuSpec& gpu = *catalog.find(candidate.gpu);
        candidate.memory = estimate_memory(workload, gpu, memory_query(candidate));
        fill_bottleneck_explanation(workload, gpu, candidate.perf);
        candidate.reason = winner_reason(workload, candidate, objective);
    }
    plan.ranked = std::move(ranked);
    if (!plan.ranked.empty()) {
        plan.winner = plan.ranked.front();
    }
    plan.uncertainty = analyse_uncertainty(plan, workload, catalog, efficiency, objective, pool);
    if (keep_confident(plan, workload, objective)) {
        plan.uncertainty = analyse_uncertainty(plan, workload, catalog, efficiency, objective, pool);
    }
    choose_alternative(plan, workload);
    keep_top(plan, top);
    plan.pareto = pareto_indices(plan.ranked);
    plan.advice = advice(workload, plan);
    plan.fleet = fleet_for(plan, catalog, efficiency);
    if (plan.calibration.applied) {
        plan.advice.insert(plan.advice.begin(), describe_calibration(plan.calibration));
        plan.advice.insert(plan.advice.begin() + 1, plan.calibration.notes.begin(), plan.calibration.notes.end());
    }
    return plan;
}

namespace {

std::optional<PickSummary> pick_summary(const RolePlan& plan) {
    if (!plan.winner) {
        return std::nullopt;
    }
    return PickSummary{plan.winner->gpu, plan.winner->count, plan.winner->acquisition, plan.winner->cost.tco_usd};
}

}  // namespace

CalibrationDelta calibration_delta(const RolePlan& calibrated, const RolePlan& uncalibrated) {
    CalibrationDelta delta;
    delta.role = calibrated.role;
    delta.horizon_months = calibrated.workload.deployment.horizon_months;
    std::vector<std::string> gpus;
    double log_sum = 0;
    for (const CalibratedPoint& point : calibrated.calibration.points) {
        if (std::find(gpus.begin(), gpus.end(), point.point.gpu) == gpus.end()) {
            gpus.push_back(point.point.gpu);
        }
        // A speed ratio: a rate measured over the one predicted, a time predicted over measured.
        const double ratio = higher_is_faster(point.metric) ? point.point.measured / point.predicted_before
                                                            : point.predicted_before / point.point.measured;
        log_sum += std::log(ratio);
    }
    delta.measured_gpu = fmt::format("{}", fmt::join(gpus, ", "));
    if (!calibrated.calibration.points.empty()) {
        delta.measured_vs_predicted = std::exp(log_sum / static_cast<double>(calibrated.calibration.points.size()));
    }
    delta.uncalibrated = pick_summary(uncalibrated);
    delta.calibrated = pick_summary(calibrated);
    if (delta.uncalibrated && delta.calibrated) {
        delta.tco_delta_usd = delta.calibrated->tco_usd - delta.uncalibrated->tco_usd;
    }
    return delta;
}

std::string constraint_exclusion(const Workload& workload, const GpuSpec& gpu) {
    return static_exclusion(workload, gpu);
}

PlanReport make_plan(const Project& project, const Catalog& catalog, const EfficiencyTable& efficiency,
                     const PlanOptions& options) {
    PlanReport report;
    report.project = project.name;
    const bool several = project.workloads.size() > 1;
    for (const Workload& workload : project.workloads) {
        const Objective objective = options.objective.value_or(workload.objective);
        if (report.objective.empty()) {
            report.objective = objective_words(objective);
        } else if (report.objective != objective_words(objective)) {
            report.objective = "per role (see each role)";
        }
        RolePlan plan = plan_role(workload, catalog, efficiency, objective, options.top, options.reference_search);
        if (plan.calibration.applied) {
            // What the measurement changed: the same role planned without its speed points (a
            // second planner run, only where there are points).
            Workload unmeasured = workload;
            unmeasured.calibration.speed.clear();
            const RolePlan without =
                plan_role(unmeasured, catalog, efficiency, objective, options.top, options.reference_search);
            plan.calibration_delta = calibration_delta(plan, without);
        }
        if (!plan.winner) {
            plan.relaxations = find_relaxations(workload, catalog, efficiency, objective, options.reference_search,
                                                plan.relaxations_tried);
            for (std::string& line : relaxation_advice(plan)) {
                plan.advice.push_back(std::move(line));
            }
        }
        report.horizon_months = std::max(report.horizon_months, workload.deployment.horizon_months);
        for (const Assumption& assumption : workload.assumptions) {
            Assumption copy = assumption;
            if (several) {
                copy.field = workload.name + ": " + copy.field;
            }
            report.assumptions.push_back(std::move(copy));
        }
        for (const CalibratedPoint& point : plan.calibration.points) {
            if (measured_speed_band(plan.calibration, point.point.gpu, point.configuration_gpus)) {
                report.assumptions.push_back(
                    {(several ? workload.name + ": " : std::string()) + "calibration.speed noise",
                     fmt::format("±{:g}%", measured_speed_noise_fraction * 100),
                     fmt::format("the speed band on {} × {} in place of the model's: MLPerf Inference TEST05's "
                                 "re-run tolerance",
                                 point.point.count, point.point.gpu)});
                break;
            }
        }
        if (plan.winner) {
            ProcurementLine line = procurement_line(plan);
            report.total_capex_usd += line.total_usd;
            report.total_monthly_opex_usd += line.monthly_opex_usd;
            report.total_tco_usd += line.tco_usd;
            report.procurement.push_back(std::move(line));
        }
        report.roles.push_back(std::move(plan));
    }
    return report;
}

}  // namespace gpusel