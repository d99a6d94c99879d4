// Ordering candidates: the objective's score, ties on TCO broken by speed, the Pareto front.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "plan/internal.hpp"

namespace gpusel {

std::string_view to_string(RejectionKind kind) {
    switch (kind) {
        case RejectionKind::excluded:
            return "excluded";
        case RejectionKind::precision:
            return "precision";
        case RejectionKind::memory:
            return "memory";
        case RejectionKind::deadline:
            return "deadline";
        case RejectionKind::slo:
            return "slo";
        case RejectionKind::max_gpus:
            return "max-gpus";
        case RejectionKind::budget:
            return "budget";
        case RejectionKind::no_offer:
            return "no-offer";
        case RejectionKind::confidence:
            return "confidence";
    }
    return "?";
}

double rejection_closeness(RejectionKind kind, double needed, double available) {
    // Tiers, in presentation order (see plan.hpp); within a tier the ratio orders.
    constexpr double count_or_deadline_tier = 1.0;
    constexpr double slo_tier = 2.0;
    constexpr double memory_tier = 10.0;
    constexpr double precision_tier = 1e8;
    constexpr double excluded_tier = 1e9;
    const double ratio = available > 0 ? needed / available : 0.0;
    switch (kind) {
        case RejectionKind::budget:
        case RejectionKind::confidence:
            return ratio;
        case RejectionKind::max_gpus:
        case RejectionKind::deadline:
            return count_or_deadline_tier + ratio;
        case RejectionKind::slo:
            return slo_tier;
        case RejectionKind::memory:
            return memory_tier + ratio;
        case RejectionKind::precision:
            return precision_tier;
        case RejectionKind::excluded:
            return excluded_tier;
        case RejectionKind::no_offer:
            break;
    }
    return std::numeric_limits<double>::infinity();
}

}  // namespace gpusel

namespace gpusel::plan_detail {

double objective_score(Objective objective, const Candidate& candidate) {
    switch (objective) {
        case Objective::tco:
            return candidate.cost.tco_usd;
        case Objective::time:
            if (candidate.perf.training) {
                return candidate.perf.training->time_to_train_s.value_or(candidate.perf.training->step_time_s);
            }
            return candidate.perf.inference ? candidate.perf.inference->p99_e2e_s.value_or(infinity) : infinity;
        case Objective::latency:
            if (candidate.perf.inference) {
                const InferencePerf& inference = *candidate.perf.inference;
                return inference.p99_tpot_s.value_or(0) > 0 ? *inference.p99_tpot_s
                                                            : inference.p99_e2e_s.value_or(infinity);
            }
            return candidate.perf.training ? candidate.perf.training->step_time_s : infinity;
        case Objective::throughput_per_usd:
            return candidate.cost.usd_per_unit > 0 ? candidate.cost.usd_per_unit : candidate.cost.tco_usd;
        case Objective::energy:
            return candidate.cost.energy_kwh;
    }
    return candidate.cost.tco_usd;
}

// The speed figure of a candidate where larger is better (for comparisons in words).
double speed(const Candidate& candidate) {
    if (candidate.perf.training) {
        return candidate.perf.training->tokens_per_s > 0 ? candidate.perf.training->tokens_per_s
                                                         : candidate.perf.training->samples_per_s;
    }
    if (candidate.perf.inference && candidate.perf.inference->p99_tpot_s.value_or(0) > 0) {
        return 1.0 / *candidate.perf.inference->p99_tpot_s;
    }
    if (candidate.perf.inference && candidate.perf.inference->p99_e2e_s.value_or(0) > 0) {
        return 1.0 / *candidate.perf.inference->p99_e2e_s;
    }
    return 0;
}

std::vector<std::size_t> pareto_indices(const std::vector<Candidate>& ranked) {
    // Training: time vs cost, both minimised. Inference: latency vs cost per unit at the
    // candidates' own batch.
    const auto x = [](const Candidate& candidate) {
        if (candidate.perf.training) {
            return candidate.perf.training->time_to_train_s.value_or(candidate.perf.training->step_time_s);
        }
        return candidate.perf.inference ? candidate.perf.inference->p99_e2e_s.value_or(infinity) : infinity;
    };
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
        bool dominated = false;
        for (std::size_t j = 0; j < ranked.size() && !dominated; ++j) {
            dominated = j != i && x(ranked[j]) <= x(ranked[i]) && ranked[j].cost.tco_usd <= ranked[i].cost.tco_usd &&
                        (x(ranked[j]) < x(ranked[i]) || ranked[j].cost.tco_usd < ranked[i].cost.tco_usd);
        }
        if (!dominated) {
            front.push_back(i);
        }
    }
    return front;
}

RankKey rank_key(const Candidate& candidate) {
    const OfferUse& offer = candidate.cost.offer;
    return {candidate.score,
            candidate.cost.tco_usd,
            candidate.count,
            speed(candidate),
            candidate.count + offer.idle_gpus,
            offer.idle_gpus,
            offer.kind == OfferKind::rental && offer.tier == ProviderTier::marketplace,
            candidate.single_source};
}

bool ranks_before(const RankKey& a, const RankKey& b) {
    if (a.score != b.score) {
        return a.score < b.score;
    }
    if (a.tco_usd != b.tco_usd) {
        return a.tco_usd < b.tco_usd;
    }
    // The same money exactly: the tie rule (the same whole units bought, every GPU of them paid
    // for: the configuration that leaves none idle).
    return wins_tie(a, b);
}

double tie_tolerance(double cheapest_tco_usd) {
    return std::max(tie_tolerance_usd, tie_tolerance_fraction * std::fabs(cheapest_tco_usd));
}

namespace {

// The rule that separates a from b, and whether a wins by it.
struct TieDecision {
    std::string_view rule;  // empty: nothing separates them
    bool first_wins = false;
};

// docs/cost-model.md "Ties": an 8-GPU cluster for a job one GPU does within the tie margin is the
// waste the method warns about first; then GPUs paid for and idle; then the host's reliability.
TieDecision decide_tie(const RankKey& a, const RankKey& b) {
    if (a.ordered_gpus != b.ordered_gpus) {
        return {"fewer GPUs", a.ordered_gpus < b.ordered_gpus};
    }
    if (a.idle_gpus != b.idle_gpus) {
        return {"fewer idle GPUs", a.idle_gpus < b.idle_gpus};
    }
    if (a.marketplace != b.marketplace) {
        return {"not a marketplace host", !a.marketplace};
    }
    // A part one provider alone sells is the harder to get more of, replace or rent elsewhere.
    if (a.single_source != b.single_source) {
        return {"a part several providers offer", !a.single_source};
    }
    if (a.tco_usd != b.tco_usd) {
        return {"cheaper", a.tco_usd < b.tco_usd};
    }
    if (a.speed != b.speed) {
        return {"faster", a.speed > b.speed};
    }
    if (a.count != b.count) {
        return {"fewer GPUs used", a.count < b.count};
    }
    return {};
}

}  // namespace

bool wins_tie(const RankKey& a, const RankKey& b) {
    return decide_tie(a, b).first_wins;
}

std::string tie_rule(const RankKey& a, const RankKey& b) {
    return std::string(decide_tie(a, b).rule);
}

void sort_by_score(std::vector<Candidate*>& candidates) {
    std::vector<std::pair<RankKey, Candidate*>> keyed;
    keyed.reserve(candidates.size());
    for (Candidate* candidate : candidates) {
        keyed.emplace_back(rank_key(*candidate), candidate);
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return ranks_before(a.first, b.first); });
    std::transform(keyed.begin(), keyed.end(), candidates.begin(), [](const auto& entry) { return entry.second; });
}

void order_ties(std::vector<Candidate>& ranked, Objective objective) {
    if (ranked.size() < 2 || objective != Objective::tco) {
        return;
    }
    const double best = ranked.front().cost.tco_usd;
    const double tolerance = tie_tolerance(best);
    const auto end = std::find_if(ranked.begin(), ranked.end(), [&](const Candidate& candidate) {
        return candidate.cost.tco_usd - best > tolerance;
    });
    if (end - ranked.begin() < 2) {
        return;
    }
    std::stable_sort(ranked.begin(), end,
                     [](const Candidate& a, const Candidate& b) { return wins_tie(rank_key(a), rank_key(b)); });
    for (auto it = ranked.begin() + 1; it != end; ++it) {
        it->tied = true;
    }
}

}  // namespace gpusel::plan_detail
