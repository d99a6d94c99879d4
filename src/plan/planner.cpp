// `make_plan`: every catalog GPU through the candidate evaluation, ranked by the objective, one
// row per GPU type, the pick, its Pareto-neighbour alternative and the advice; the procurement
// table from the picks.

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/parallel.hpp"
#include "explain/explain.hpp"
#include "plan/internal.hpp"
#include "plan/mix_search.hpp"
#include "plan/robustness.hpp"

namespace gpusel {

namespace {

using namespace plan_detail;

// The training search of every GPU type the workload allows, in parallel (parallel_for: each
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
    parallel_for(work.size(), [&](std::size_t item) {
        results[work[item]] = search_training(workload, gpus[work[item]], efficiency, options);
    });
    return results;
}

// One GPU type through the candidate evaluation: its priced candidates, or why it has none.
struct GpuEvaluation {
    std::vector<Candidate> candidates;
    std::optional<Rejection> rejection;
    const TrainingSearchResult* searched = nullptr;  // training: the search it was evaluated from
    std::size_t evaluated = 0;                       // serving layouts evaluated
    std::size_t feasible = 0;                        // serving layouts feasible
};

// Independent of every other GPU type (its own CandidateEvaluator: the evaluator's bookkeeping
// is per GPU type), so the planner evaluates GPU types in parallel.
GpuEvaluation evaluate_gpu(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
                           const SpeedCalibration& calibration, const GpuSpec& gpu,
                           const TrainingSearchResult* search) {
    GpuEvaluation result;
    const std::string excluded = static_exclusion(workload, gpu);
    if (!excluded.empty()) {
        result.rejection = Rejection{
            gpu.id, RejectionKind::excluded, "", 0, 0, 0, excluded, rejection_closeness(RejectionKind::excluded, 0, 0)};
        return result;
    }
    const std::vector<PrecisionChoice> precisions = precision_choices(workload, gpu);
    if (precisions.empty()) {
        result.rejection = Rejection{gpu.id,
                                     RejectionKind::precision,
                                     "precision",
                                     0,
                                     0,
                                     0,
                                     fmt::format("no {} support", to_string(workload.precision)),
                                     rejection_closeness(RejectionKind::precision, 0, 0)};
        return result;
    }
    CandidateEvaluator evaluator(workload, catalog, efficiency, CandidatePolicy::search(workload), &calibration);
    Miss miss;
    evaluator.begin_gpu();
    if (workload.is_training()) {
        result.searched = search;
        evaluator.evaluate_training(gpu, *search, result.candidates, miss);
    } else {
        for (const PrecisionChoice& precision : precisions) {
            evaluator.evaluate_inference(gpu, precision, result.candidates, miss, result.evaluated);
        }
    }
    result.feasible = evaluator.feasible();
    if (result.candidates.empty()) {
        Rejection rejection = std::move(miss.rejection);
        rejection.gpu = gpu.id;
        if (rejection.why_not.empty()) {
            rejection.why_not = evaluator.no_offer_reason(gpu, 0);
        }
        if (precisions.size() == 1 && precisions.front().fallback) {
            rejection.why_not = fmt::format("no {} ({} fallback); {}", to_string(workload.precision),
                                            to_string(precisions.front().precision), rejection.why_not);
        }
        result.rejection = std::move(rejection);
    }
    return result;
}

// The alternative is a Pareto neighbour of the pick: faster, or cheaper; never one the pick
// beats on both.
void choose_alternative(RolePlan& plan, const Workload& workload) {
    if (!plan.winner) {
        return;
    }
    const std::vector<Candidate>& ranked = plan.ranked;
    // An option that holds in fewer scenarios than objective.confidence is no alternative to
    // order instead (the pick was chosen at that level too).
    const std::vector<EstimateBand>& bands = plan.uncertainty.bands;
    const bool banded = plan.uncertainty.computed && bands.size() == ranked.size();
    const auto confident = [&](const Candidate& other) {
        const std::size_t row = static_cast<std::size_t>(&other - ranked.data());
        return !banded || !bands[row].sampled || bands[row].p_feasible >= workload.confidence;
    };
    const auto neighbour = std::find_if(ranked.begin() + 1, ranked.end(), [&](const Candidate& other) {
        return (speed(other) > speed(ranked.front()) || other.cost.tco_usd < ranked.front().cost.tco_usd ||
                other.tied) &&
               confident(other);
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
    const std::vector<TrainingSearchResult> searches = workload.is_training()
                                                           ? search_catalog(workload, catalog, efficiency, reference)
                                                           : std::vector<TrainingSearchResult>{};
    const std::vector<GpuSpec>& gpus = catalog.gpus();
    std::vector<GpuEvaluation> evaluations(gpus.size());
    parallel_for(gpus.size(), [&](std::size_t position) {
        evaluations[position] = evaluate_gpu(workload, catalog, efficiency, plan.calibration, gpus[position],
                                             workload.is_training() ? &searches[position] : nullptr);
    });
    // Merged in catalog order, as one evaluator over the catalog would have left them, by
    // pointer: a candidate is a couple of kilobytes and a training search leaves thousands, and
    // moving them all into one vector (a fresh buffer each plan) cost vit-base-training a third
    // of its plan time in page faults on two threads (issue 39).
    std::vector<Candidate*> best_per_configuration;
    std::size_t feasible = 0;
    for (GpuEvaluation& evaluation : evaluations) {
        if (evaluation.searched) {
            const TrainingSearchResult& search = *evaluation.searched;
            plan.space += search.space;
            plan.evaluated += search.evaluated;
            plan.feasible += search.feasible;
        }
        plan.evaluated += evaluation.evaluated;
        feasible += evaluation.feasible;
        for (Candidate& candidate : evaluation.candidates) {
            best_per_configuration.push_back(&candidate);
        }
        if (evaluation.rejection) {
            plan.rejected.push_back(std::move(*evaluation.rejection));
        }
    }
    if (!workload.is_training()) {
        plan.space = plan.evaluated;
        plan.feasible = feasible;
    }
    // The near misses first: they are the ones worth a second look.
    std::stable_sort(plan.rejected.begin(), plan.rejected.end(),
                     [](const Rejection& a, const Rejection& b) { return a.closeness < b.closeness; });
    for (Candidate* candidate : best_per_configuration) {
        candidate->score = objective_score(objective, *candidate);
    }
    sort_by_score(best_per_configuration);
    const std::vector<Candidate> pool =
        robustness_pool(std::vector<const Candidate*>(best_per_configuration.begin(), best_per_configuration.end()));
    // One row per GPU type in the ranking: the best configuration of each.
    std::vector<Candidate> ranked;
    for (Candidate* candidate : best_per_configuration) {
        const bool seen = std::any_of(ranked.begin(), ranked.end(),
                                      [&](const Candidate& other) { return other.gpu == candidate->gpu; });
        if (!seen) {
            ranked.push_back(std::move(*candidate));
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
        // The GPU types rejected at objective.confidence leave the ranking, so they leave the
        // analysis's pool too: else one of them still wins the base scenario, the analysis finds
        // the planner's ranking not reproduced, and the new pick is left without a robustness
        // section (examples/serve-by-date.yaml: H200-SXM 4× on demand tied the H100 purchase,
        // won the tie by fewer GPUs and was rejected at 84 %).
        std::vector<Candidate> confident_pool;
        std::copy_if(pool.begin(), pool.end(), std::back_inserter(confident_pool), [&](const Candidate& candidate) {
            return std::none_of(plan.rejected.begin(), plan.rejected.end(), [&](const Rejection& rejection) {
                return rejection.kind == RejectionKind::confidence && rejection.gpu == candidate.gpu;
            });
        });
        plan.uncertainty = analyse_uncertainty(plan, workload, catalog, efficiency, objective, confident_pool);
    }
    choose_alternative(plan, workload);
    if (workload.role == Role::inference && workload.inference.input_length.given()) {
        plan.mix = plan_mix(plan, workload, catalog, efficiency, objective);
    }
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

// An order placed in place of the pick's (a fleet's part, a mixed fleet's GPU type, a split's
// phase): what it orders, priced by the cost model, and why; the pick is its alternative.
struct OrderInPlace {
    std::string gpu;  // empty: the pick's
    std::string gpu_name;
    int count = 0;
    Acquisition acquisition = Acquisition::buy_new;
    const CostEstimate* cost = nullptr;
    std::string reason;
    std::string pick_words;  // how the alternative names the pick: "owned whole", "alone", "co-located"
    std::string alternative_reason;
};

ProcurementLine line_in_place_of_pick(const RolePlan& plan, const OrderInPlace& order) {
    const Candidate& pick = *plan.winner;
    RolePlan ordered = plan;
    Candidate& winner = *ordered.winner;
    if (!order.gpu.empty()) {
        winner.gpu = order.gpu;
        winner.gpu_name = order.gpu_name;
    }
    winner.count = order.count;
    winner.acquisition = order.acquisition;
    winner.cost = *order.cost;
    winner.reason = order.reason;
    ProcurementLine line = procurement_line(ordered);
    line.alternative = fmt::format("{} ×{} {} ({}, {})", pick.gpu, pick.count, order.pick_words,
                                   describe(pick.acquisition), pick.cost.offer.id);
    line.alternative_reason = order.alternative_reason;
    return line;
}

// A fleet's order (plan/fleet.hpp, ordered): the owned base with its spares bought, then the
// peak rented on demand, its rent month by month for the cash flow.
std::vector<ProcurementLine> fleet_procurement(const RolePlan& plan) {
    const FleetPlan& fleet = *plan.fleet;
    const int per_replica = fleet.gpus_per_replica;
    const std::string alternative_reason =
        fmt::format("sized for the busiest hour of the horizon: {} more over {:g} months",
                    money_in(plan.workload).whole(fleet.pick_tco_usd - fleet.chosen.tco_usd), fleet.horizon_months);
    std::vector<ProcurementLine> lines;
    if (fleet.owned_cost) {
        const int owned = fleet.chosen.owned_replicas;
        lines.push_back(line_in_place_of_pick(
            plan,
            {{},
             {},
             (owned + fleet.spare_replicas) * per_replica,
             fleet.owned_cost->acquisition,
             &*fleet.owned_cost,
             fmt::format("owned base: {} replica{}{} carry the load alone in {} of hours; the rest is rented "
                         "on demand",
                         owned, owned == 1 ? "" : "s",
                         fleet.spare_replicas > 0 ? fmt::format(" + {} spare", fleet.spare_replicas) : std::string(),
                         format_percent(fleet.owned_load_percentile)),
             "owned whole",
             alternative_reason}));
    }
    if (fleet.rented_cost) {
        const int peak = fleet.chosen.rented_replicas_at_peak;
        ProcurementLine line = line_in_place_of_pick(
            plan, {{},
                   {},
                   peak * per_replica,
                   Acquisition::cloud_on_demand,
                   &*fleet.rented_cost,
                   fmt::format("rented peak: up to {} replica{} on demand in the busiest hours, {:.0f} replica-hours "
                               "over {:g} months",
                               peak, peak == 1 ? "" : "s", fleet.chosen.rented_replica_hours, fleet.horizon_months),
                   "owned whole",
                   alternative_reason});
        for (const FleetMonth& month : fleet.months) {
            line.rent_usd_by_month.push_back(month.rented_usd);
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

// A chosen mixed fleet (plan/mix.hpp): one line per GPU type, each routed its share of requests.
std::vector<ProcurementLine> mix_procurement(const RolePlan& plan) {
    const MixPlan& mix = *plan.mix;
    std::vector<ProcurementLine> lines;
    for (const MixPart& part : mix.parts) {
        lines.push_back(line_in_place_of_pick(
            plan, {part.gpu, part.gpu_name, part.count, part.acquisition, &part.cost,
                   fmt::format("mixed fleet ({}): {} of requests on {} replica{} (spares included)", mix.routing_rule,
                               format_percent(part.request_share), part.replicas, part.replicas == 1 ? "" : "s"),
                   "alone", "one GPU type: simpler to buy, run and route, costs more for these lengths"}));
    }
    return lines;
}

// A chosen prefill/decode split (plan/disaggregation.hpp): one line per GPU type, so that the
// order is what `deploy` launches.
std::vector<ProcurementLine> split_procurement(const RolePlan& plan) {
    const DisaggregatedPlan& split = *plan.disaggregated;
    std::vector<ProcurementLine> lines;
    for (const DisaggregatedOrder& entry : split.order) {
        const std::string phases = split.prefill.gpu == split.decode.gpu ? "prefill and decode"
                                   : entry.gpu == split.prefill.gpu      ? "prefill"
                                                                         : "decode";
        lines.push_back(
            line_in_place_of_pick(plan, {entry.gpu, entry.gpu_name, entry.gpus, plan.winner->acquisition, &entry.cost,
                                         fmt::format("disaggregated serving, {} workers: {}", phases, split.why),
                                         "co-located", "co-located serving: simpler to run, costs more at this load"}));
    }
    return lines;
}

// A role's procurement: its pick's line, or what a chosen split, mixed fleet or owned-base fleet
// orders in its place (one of them: a split first, then a mix, then a fleet).
std::vector<ProcurementLine> role_procurement(const RolePlan& plan) {
    if (!plan.winner) {
        return {procurement_line(plan)};
    }
    if (plan.disaggregated && plan.disaggregated->chosen && !plan.disaggregated->order.empty()) {
        return split_procurement(plan);
    }
    if (plan.mix && plan.mix->chosen && plan.mix->parts.size() == 2) {
        return mix_procurement(plan);
    }
    if (plan.fleet && plan.fleet->ordered) {
        return fleet_procurement(plan);
    }
    return {procurement_line(plan)};
}

// "8× RTX-PRO-6000 + 8× B200, buy new" or "3× H100-NVL buy new + 1× H100-NVL cloud on-demand":
// the GPUs of each order line, the acquisition once when they share it.
// `peak_rented`: a rented line is the peak's, "up to" its GPUs (an owned-base fleet).
std::string ordered_gpus(const std::vector<ProcurementLine>& lines, bool peak_rented = false) {
    const bool one_acquisition = std::all_of(lines.begin(), lines.end(), [&](const ProcurementLine& line) {
        return line.acquisition == lines.front().acquisition;
    });
    std::vector<std::string> parts;
    for (const ProcurementLine& line : lines) {
        const std::string up_to = peak_rented && !is_purchase(line.acquisition) ? "up to " : "";
        parts.push_back(one_acquisition
                            ? fmt::format("{}{}× {}", up_to, line.gpus, line.gpu)
                            : fmt::format("{}{}× {} {}", up_to, line.gpus, line.gpu, describe(line.acquisition)));
    }
    std::string words = fmt::format("{}", fmt::join(parts, " + "));
    if (one_acquisition && !lines.empty()) {
        words += fmt::format(", {}", describe(lines.front().acquisition));
    }
    return words;
}

// Where the procurement orders a split, a mixed fleet or an owned-base fleet in the pick's place
// (role_procurement), the headline names that order and the advice speaks of it: its expected
// resale and estimated prices are the order's lines', not the pick's.
void align_with_order(RolePlan& plan, const std::vector<ProcurementLine>& lines) {
    const Candidate& pick = *plan.winner;
    const Money money = money_in(plan.workload);
    double tco_usd = 0;
    for (const ProcurementLine& line : lines) {
        tco_usd += line.tco_usd;
    }
    const std::string cost =
        fmt::format("TCO {} over {:g} months", money.whole(tco_usd), plan.workload.deployment.horizon_months);
    if (plan.disaggregated && plan.disaggregated->chosen && !plan.disaggregated->order.empty()) {
        plan.ordered_in_place =
            fmt::format("{}: disaggregated prefill/decode workers, {}; the pick is the best co-located fleet ({} GPUs)",
                        ordered_gpus(lines), cost, pick.count);
    } else if (plan.mix && plan.mix->chosen && plan.mix->parts.size() == 2) {
        plan.ordered_in_place = fmt::format("{}: a mixed fleet ({}), {}; the best single type is the pick",
                                            ordered_gpus(lines), plan.mix->routing_rule, cost);
    } else if (plan.fleet && plan.fleet->ordered) {
        plan.ordered_in_place =
            fmt::format("{}: an owned base and a rented peak, {}; the pick owns the busiest hour's {} GPUs",
                        ordered_gpus(lines, true), cost, pick.count);
    } else {
        return;
    }
    std::vector<const OfferUse*> offers;
    double resale_usd = 0;
    bool resale_counted = false;
    bool purchased = false;
    for (const ProcurementLine& line : lines) {
        offers.push_back(&line.offer);
        if (is_purchase(line.acquisition)) {
            purchased = true;
            resale_usd += line.resale_usd;
            resale_counted = resale_counted || line.resale_counted;
        }
    }
    // The pick's sentences, as advice() wrote them, give way to the order's (or go, where the
    // order has none).
    const auto replace = [&](const std::string& pick_line, const std::string& order_line) {
        const auto at =
            pick_line.empty() ? plan.advice.end() : std::find(plan.advice.begin(), plan.advice.end(), pick_line);
        if (at == plan.advice.end()) {
            if (!order_line.empty()) {
                plan.advice.push_back(order_line);
            }
        } else if (order_line.empty()) {
            plan.advice.erase(at);
        } else {
            *at = order_line;
        }
    };
    replace(estimated_price_advice("the pick", {&pick.cost.offer}), estimated_price_advice("the order", offers));
    replace(is_purchase(pick.acquisition)
                ? resale_advice(money, pick.cost.breakdown.resale_usd, pick.cost.resale_counted, pick.cost.tco_usd)
                : std::string(),
            purchased ? resale_advice(money, resale_usd, resale_counted, tco_usd) : std::string());
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
    std::vector<std::string> line_workloads;  // the workload of each procurement line
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
        // Prefill/decode disaggregation against the co-located pick (plan/disaggregation.hpp).
        plan.disaggregated = plan_disaggregated(plan, catalog, efficiency);
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
            std::vector<ProcurementLine> ordered = role_procurement(plan);
            align_with_order(plan, ordered);
            for (ProcurementLine& line : ordered) {
                report.total_capex_usd += line.total_usd;
                report.total_monthly_opex_usd += line.monthly_opex_usd;
                report.total_tco_usd += line.tco_usd;
                report.procurement.push_back(std::move(line));
                line_workloads.push_back(workload.name);
            }
        }
        report.roles.push_back(std::move(plan));
    }
    if (!project.phases.empty()) {
        std::optional<ProcurementLine> shared;
        report.shared_fleet = plan_shared_fleet(project.phases, report.roles, catalog, efficiency, shared);
        if (shared) {
            // The phases' own lines give way to the fleet's one.
            std::vector<ProcurementLine> kept;
            for (std::size_t i = 0; i < report.procurement.size(); ++i) {
                const bool phased =
                    std::any_of(project.phases.begin(), project.phases.end(),
                                [&](const ProjectPhase& phase) { return phase.workload == line_workloads[i]; });
                if (!phased) {
                    kept.push_back(std::move(report.procurement[i]));
                }
            }
            report.procurement = std::move(kept);
            report.procurement.push_back(std::move(*shared));
            report.total_capex_usd = 0;
            report.total_monthly_opex_usd = 0;
            report.total_tco_usd = 0;
            for (const ProcurementLine& line : report.procurement) {
                report.total_capex_usd += line.total_usd;
                report.total_monthly_opex_usd += line.monthly_opex_usd;
                report.total_tco_usd += line.tco_usd;
            }
        }
    }
    return report;
}

}  // namespace gpusel