// Mixed GPU types in one serving role (issue 37 item 3; docs/cost-model.md, "Mixed fleets"): an
// exact search over ordered pairs of GPU types × the length thresholds at the distribution's
// bin boundaries, each part sized by the planner's own candidate evaluation.

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/parallel.hpp"
#include "inputs/length_distribution.hpp"
#include "plan/internal.hpp"
#include "plan/mix_search.hpp"

namespace gpusel {

namespace plan_detail {

namespace {

// GPU types paired: those of the cheapest single-type picks. 4 types give 12 ordered pairs × 7
// thresholds of the 8-bin log-normal = 84 splits from 4 × 7 × 2 = 56 sizings (one per type,
// threshold and side): 0.17 → 0.29 s of CPU for examples/chat-length-mix.yaml's whole plan (debug
// build, 2026-12-05). A type outside the 4 cheapest for the whole load is not tried, though it
// might win one side (docs/cost-model.md, "Mixed fleets").
constexpr std::size_t max_mix_types = 4;

// "1,024": tokens as the routing rule names them.
std::string grouped(int value) {
    std::string digits = std::to_string(value);
    for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
        digits.insert(static_cast<std::size_t>(at), ",");
    }
    return digits;
}

struct Side {
    double share = 0;
    int mean_tokens = 0;
    int max_tokens = 0;  // the routing threshold (the longest request of the side's bins)
};

Side side_of(const LengthDistribution& distribution, std::size_t first, std::size_t last) {
    Side side;
    double weighted = 0;
    for (std::size_t bin = first; bin < last; ++bin) {
        side.share += distribution.bins[bin].share;
        weighted += distribution.bins[bin].share * distribution.bins[bin].tokens;
    }
    side.mean_tokens = std::max(1, static_cast<int>(std::lround(weighted / side.share)));
    side.max_tokens = length_bin_upper_tokens(distribution, last - 1);
    return side;
}

// The role's workload restricted to one side of a split: its share of the rate, at its mean
// length, with no distribution left (so nothing recurses and the estimators see one length).
Workload sub_workload(const Workload& workload, const Side& side) {
    Workload part = workload;
    part.inference.requests_per_s = workload.inference.requests_per_s * side.share;
    part.inference.input_tokens = side.mean_tokens;
    part.inference.input_length = {};
    // Its engine must still accept the longest request routed to it.
    if (workload.runtime.max_model_len == 0) {
        const int longest_output = longest_request_tokens(part.inference) - part.inference.input_tokens;
        part.runtime.max_model_len = side.max_tokens + longest_output;
    }
    return part;
}

// The cheapest candidate of `gpu` for `part` that meets the SLO with the planner's confidence
// margins: the evaluation make_plan runs for one GPU type, priced at every allowed acquisition.
std::optional<Candidate> cheapest_on(const Workload& part, const GpuSpec& gpu, const Catalog& catalog,
                                     const EfficiencyTable& efficiency, const SpeedCalibration* calibration) {
    CandidatePolicy policy = CandidatePolicy::search(part);
    policy.sizing_only = true;  // a part's size and price are all the mix reads of it
    CandidateEvaluator evaluator(part, catalog, efficiency, std::move(policy), calibration);
    evaluator.begin_gpu();
    std::vector<Candidate> found;
    Miss miss;
    std::size_t evaluated = 0;
    for (const PrecisionChoice& precision : precision_choices(part, gpu)) {
        evaluator.evaluate_inference(gpu, precision, found, miss, evaluated);
    }
    std::optional<Candidate> best;
    for (Candidate& candidate : found) {
        if (!candidate.perf.inference || !candidate.perf.inference->meets_slo ||
            !evaluator.holds_at_confidence(gpu, candidate)) {
            continue;
        }
        if (!best || candidate.cost.tco_usd < best->cost.tco_usd) {
            best = std::move(candidate);
        }
    }
    return best;
}

int ordered_gpus(const Candidate& candidate) {
    return candidate.cost.offer.units * candidate.cost.offer.gpus_per_unit + candidate.cost.spare_gpus;
}

MixPart part_of(const Candidate& candidate, const Side& side) {
    MixPart value;
    value.gpu = candidate.gpu;
    value.gpu_name = candidate.gpu_name;
    value.replicas = candidate.replicas;
    value.gpus = ordered_gpus(candidate);
    value.max_input_tokens = side.max_tokens;
    value.request_share = side.share;
    value.tco_usd = candidate.cost.tco_usd;
    value.count = candidate.count;
    value.acquisition = candidate.acquisition;
    value.cost = candidate.cost;
    return value;
}

// "8 × rtx-pro-6000-card + 2 × Workstation tower (~estimated price)": what a part orders, by
// offer id (the catalog's; the pick's order line spells the offer out).
std::string order_words(const Candidate& candidate) {
    const OfferUse& offer = candidate.cost.offer;
    std::string text = fmt::format("{} × {}", offer.units + candidate.cost.spare_units, offer.id);
    if (offer.hosts > 0) {
        text += fmt::format(" + {} × {}", offer.hosts, offer.host_name);
    }
    return offer.estimated() ? text + " (~estimated price)" : text;
}

// Whether a whole mix stays within the role's limits that each part was held to alone.
bool within_limits(const Workload& workload, const Candidate& a, const Candidate& b) {
    const ConstraintSpec& constraints = workload.constraints;
    if (constraints.max_gpus > 0 && a.count + b.count > constraints.max_gpus) {
        return false;
    }
    const BudgetSpec& budget = workload.budget;
    if (budget.capex_usd > 0 && a.cost.capex_usd + b.cost.capex_usd > budget.capex_usd) {
        return false;
    }
    return budget.monthly_usd <= 0 || a.cost.monthly_opex_usd + b.cost.monthly_opex_usd <= budget.monthly_usd;
}

std::string single_words(const Candidate& winner) {
    return fmt::format("{}× {} alone", ordered_gpus(winner), winner.gpu);
}

// `shorter`, `longer`: the parts' candidates.
void explain(MixPlan& mix, const Candidate& winner, Objective objective, const Candidate& shorter,
             const Candidate& longer_part, const Money& money) {
    const double saving_usd = mix.best_single_tco_usd - mix.tco_usd;
    const double margin_usd = tie_tolerance(mix.best_single_tco_usd);
    const MixPart& longer = mix.parts.back();
    const double longer_cost_share = mix.tco_usd > 0 ? longer.tco_usd / mix.tco_usd : 0;
    if (objective != Objective::tco) {
        mix.why = fmt::format("the role ranks by {}; a mix is weighed by TCO only, so it is shown, not chosen",
                              objective_words(objective));
    } else if (saving_usd <= 0) {
        const int spares = shorter.spare_replicas + longer_part.spare_replicas;
        const std::string spare_words =
            spares > winner.spare_replicas
                ? fmt::format(
                      "each fleet keeps its own spare ({} spare replicas, not {}) and rounds up to whole "
                      "replicas and units",
                      spares, winner.spare_replicas)
                : std::string("two fleets each round up to whole replicas and units");
        mix.why = fmt::format(
            "one type is cheaper: the best mix costs {} more than {}; {}, and the longer {} of "
            "requests take {} of its cost",
            money.whole(-saving_usd), single_words(winner), spare_words, format_percent(longer.request_share),
            format_percent(longer_cost_share));
    } else if (saving_usd <= margin_usd) {
        mix.why = fmt::format(
            "saves {} ({}) over {}, within the tie margin ({}): one GPU type is simpler to buy, run and route",
            money.whole(saving_usd), format_percent(mix.saving_fraction), single_words(winner),
            money.whole(margin_usd));
    } else {
        mix.chosen = true;
        mix.why = fmt::format(
            "saves {} ({}) over {}, more than the tie margin ({}): the shorter {} of requests run "
            "on {}, the rest on {}; the procurement orders {} in place of the single-type pick",
            money.whole(saving_usd), format_percent(mix.saving_fraction), single_words(winner), money.whole(margin_usd),
            format_percent(mix.parts.front().request_share), mix.parts.front().gpu, longer.gpu,
            fmt::format("{} and {}", order_words(shorter), order_words(longer_part)));
    }
}

}  // namespace

MixPlan plan_mix(const RolePlan& plan, const Workload& workload, const Catalog& catalog,
                 const EfficiencyTable& efficiency, Objective objective) {
    MixPlan mix;
    const LengthDistribution& lengths = workload.inference.input_length;
    if (!plan.winner) {
        mix.why = "no single GPU type meets every constraint, so no mix was searched";
        return mix;
    }
    const Candidate& winner = *plan.winner;
    mix.best_single_tco_usd = winner.cost.tco_usd;
    if (workload.inference.concurrency > 0) {
        mix.why =
            "the load is closed-loop clients (inference.concurrency), whose rate depends on the fleet; a mix "
            "is sized for an open-loop requests_per_s";
        return mix;
    }
    if (lengths.bins.size() < 2) {
        mix.why = "the input length distribution has one length: nothing to route by";
        return mix;
    }
    // The cheapest single-type candidates, one per GPU type.
    std::vector<const Candidate*> by_cost;
    for (const Candidate& candidate : plan.ranked) {
        by_cost.push_back(&candidate);
    }
    std::stable_sort(by_cost.begin(), by_cost.end(),
                     [](const Candidate* a, const Candidate* b) { return a->cost.tco_usd < b->cost.tco_usd; });
    std::vector<const GpuSpec*> types;
    for (const Candidate* candidate : by_cost) {
        const GpuSpec* gpu = catalog.find(candidate->gpu);
        if (gpu != nullptr && types.size() < max_mix_types &&
            std::none_of(types.begin(), types.end(), [&](const GpuSpec* seen) { return seen->id == gpu->id; })) {
            types.push_back(gpu);
        }
    }
    if (types.size() < 2) {
        mix.why = fmt::format("only {} meets every constraint: a mix needs two GPU types", winner.gpu);
        return mix;
    }
    // Sizings: [type][split][side], side 0 the requests up to the threshold, 1 the longer ones.
    const std::size_t splits = lengths.bins.size() - 1;
    struct Sized {
        Side side;
        std::optional<Candidate> candidate;
    };
    std::vector<std::vector<std::array<std::optional<Sized>, 2>>> sized(types.size());
    for (std::vector<std::array<std::optional<Sized>, 2>>& by_split : sized) {
        by_split.resize(splits);
    }
    // Each sizing is independent of the others (its own evaluator): on every core, each into
    // its own slot.
    parallel_for(types.size() * splits * 2, [&](std::size_t item) {
        const std::size_t type = item / (splits * 2);
        const std::size_t split = item / 2 % splits;
        const std::size_t s = item % 2;
        const Side side = s == 0 ? side_of(lengths, 0, split + 1) : side_of(lengths, split + 1, lengths.bins.size());
        sized[type][split][s] = Sized{
            side, cheapest_on(sub_workload(workload, side), *types[type], catalog, efficiency, &plan.calibration)};
    });
    // Exact search: every ordered pair of distinct types at every threshold; the cheapest wins,
    // ties to the fewer GPUs, then to the earlier pair and threshold (catalog order by cost).
    struct Best {
        std::size_t a = 0, b = 0, split = 0;
        double tco_usd = 0;
        int gpus = 0;
    };
    std::optional<Best> best;
    for (std::size_t a = 0; a < types.size(); ++a) {
        for (std::size_t b = 0; b < types.size(); ++b) {
            if (a == b) {
                continue;
            }
            for (std::size_t split = 0; split < splits; ++split) {
                const Sized& shorter = *sized[a][split][0];
                const Sized& longer = *sized[b][split][1];
                if (!shorter.candidate || !longer.candidate ||
                    !within_limits(workload, *shorter.candidate, *longer.candidate)) {
                    continue;
                }
                const double tco = shorter.candidate->cost.tco_usd + longer.candidate->cost.tco_usd;
                const int gpus = ordered_gpus(*shorter.candidate) + ordered_gpus(*longer.candidate);
                if (!best || tco < best->tco_usd || (tco == best->tco_usd && gpus < best->gpus)) {
                    best = Best{a, b, split, tco, gpus};
                }
            }
        }
    }
    if (!best) {
        mix.why =
            fmt::format("no two of the {} cheapest types meet the SLO on both sides of any threshold", types.size());
        return mix;
    }
    const Sized& shorter = *sized[best->a][best->split][0];
    const Sized& longer = *sized[best->b][best->split][1];
    mix.parts.push_back(part_of(*shorter.candidate, shorter.side));
    mix.parts.push_back(part_of(*longer.candidate, longer.side));
    mix.routing_rule = fmt::format("input ≤ {} tokens → {}, longer → {}", grouped(shorter.side.max_tokens),
                                   shorter.candidate->gpu, longer.candidate->gpu);
    mix.tco_usd = mix.parts.front().tco_usd + mix.parts.back().tco_usd;
    mix.saving_fraction = mix.best_single_tco_usd > 0 ? 1 - mix.tco_usd / mix.best_single_tco_usd : 0;
    explain(mix, winner, objective, *shorter.candidate, *longer.candidate, money_in(workload));
    return mix;
}

}  // namespace plan_detail

}  // namespace gpusel
