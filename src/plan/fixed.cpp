// `gpusel check`'s evaluation of one proposal line: one GPU type at one count and acquisition,
// the best layout at exactly that count. The deadline, SLO and budget are the judge's to weigh
// (check/judge.cpp), so the policy does not reject on them here.

#include <algorithm>

#include <fmt/format.h>

#include "explain/explain.hpp"
#include "plan/internal.hpp"

namespace gpusel {

namespace {

using namespace plan_detail;

bool meets_target(const Candidate& candidate) {
    return candidate.perf.training ? candidate.perf.training->meets_deadline
                                   : (candidate.perf.inference && candidate.perf.inference->meets_slo);
}

// No layout fitted: the memory of the one that needs the least per GPU.
void closest_memory(const Workload& workload, const GpuSpec& gpu, const TrainingSearchResult* search,
                    const std::vector<PrecisionChoice>& precisions, const CandidateEvaluator& evaluator,
                    FixedEvaluation& result) {
    if (search != nullptr) {
        if (search->least_memory) {
            const TrainingChoice& least = *search->least_memory;
            MemoryQuery query;
            query.layout = least.layout;
            query.micro_batch = least.micro_batch;
            query.precision = least.precision.precision;
            query.checkpointing = least.checkpointing;
            result.closest_memory = estimate_memory(workload, gpu, query);
            result.closest_layout = least.layout;
        }
        return;
    }
    if (const std::optional<MemoryMiss>& miss = evaluator.closest_memory_miss()) {
        // Shown at the first precision, whichever one missed closest.
        MemoryQuery query = miss->query;
        query.precision = precisions.front().precision;
        query.checkpointing = workload.training.checkpointing;
        result.closest_memory = estimate_memory(workload, gpu, query);
        result.closest_layout = miss->query.layout;
    }
}

}  // namespace

FixedEvaluation evaluate_fixed(const Workload& workload, const Catalog& catalog, const GpuSpec& gpu, int count,
                               Acquisition acquisition, std::optional<double> unit_price_usd, const Offer* offer,
                               const EfficiencyTable& efficiency, const SpeedCalibration* calibration,
                               bool prefer_confident) {
    FixedEvaluation result;
    // A development role of several seats buys one box per engineer: the line's count is
    // seats × the GPUs of one box.
    const int seats = workload.role == Role::development ? std::max(1, workload.deployment.seats) : 1;
    if (count % seats != 0) {
        result.why_not = fmt::format("{} GPUs are not the same box for each of the {} deployment.seats", count, seats);
        return result;
    }
    count /= seats;
    const std::vector<PrecisionChoice> precisions = precision_choices(workload, gpu);
    if (precisions.empty()) {
        result.why_not = fmt::format("no {} support", to_string(workload.precision));
        return result;
    }
    CandidatePolicy policy = CandidatePolicy::fixed_line(count, acquisition, unit_price_usd, offer);
    policy.size_for_confidence = prefer_confident;
    CandidateEvaluator evaluator(workload, catalog, efficiency, std::move(policy), calibration);
    std::vector<Candidate> found;
    Miss miss;
    std::size_t evaluated = 0;
    std::optional<TrainingSearchResult> search;
    if (workload.is_training()) {
        TrainingSearchOptions options;
        options.fixed_count = count;
        options.require_deadline = false;
        search = search_training(workload, gpu, efficiency, options);
        evaluator.evaluate_training(gpu, *search, found, miss);
    } else {
        for (const PrecisionChoice& precision : precisions) {
            evaluator.evaluate_inference(gpu, precision, found, miss, evaluated);
        }
    }
    if (found.empty()) {
        closest_memory(workload, gpu, search ? &*search : nullptr, precisions, evaluator, result);
        result.why_not =
            miss.rejection.why_not.empty() ? evaluator.no_offer_reason(gpu, count) : miss.rejection.why_not;
        return result;
    }
    // Prefer layouts that meet the deadline or SLO, then the objective.
    for (Candidate& candidate : found) {
        candidate.score = objective_score(workload.objective, candidate);
    }
    std::vector<bool> confident(found.size(), false);
    if (prefer_confident) {
        for (std::size_t i = 0; i < found.size(); ++i) {
            confident[i] = evaluator.holds_at_confidence(gpu, found[i]);
        }
    }
    std::vector<std::size_t> order(found.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (meets_target(found[a]) != meets_target(found[b])) {
            return meets_target(found[a]);
        }
        if (confident[a] != confident[b]) {
            return static_cast<bool>(confident[a]);
        }
        return found[a].score < found[b].score;
    });
    std::swap(found.front(), found[order.front()]);
    Candidate& best = found.front();
    best.memory = estimate_memory(workload, gpu, memory_query(best));
    fill_bottleneck_explanation(workload, gpu, best.perf);
    best.reason = winner_reason(workload, best, workload.objective);
    result.holds_at_confidence = evaluator.holds_at_confidence(gpu, best);
    result.candidate = std::move(best);
    return result;
}

}  // namespace gpusel
