// The seeded Monte Carlo of the robustness analysis: every configuration of the pool at a
// sampled speed and price error (one error per GPU type, per price point, and one for the
// pick's memory), re-ranked by the planner's rule; the share of scenarios in which the pick
// stays best and still holds as ordered, the 5–95 % bands of time, TCO and replicas, the
// candidates it does not clearly beat, and warnings where it holds only at a band's good end.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "base/format.hpp"
#include "plan/robustness_analysis.hpp"

namespace gpusel::robustness_detail {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): a fixed, portable sequence. <random>'s distributions
// are implementation-defined, which would make the output differ between standard libraries.
class Random {
public:
    explicit Random(std::uint64_t seed) : m_state(seed) {}
    double uniform() {
        m_state += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = m_state;
        z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
        z ^= z >> 31U;
        return static_cast<double>(z >> 11U) * 0x1.0p-53;
    }
    // Triangular on [−1, 1], mode 0: errors near zero are likelier than at the band's edge,
    // and none lies beyond it (the bands are 90th-percentile errors, not hard limits; docs).
    double triangular() { return uniform() + uniform() - 1.0; }

private:
    std::uint64_t m_state;
};

double percentile_of(std::vector<double> values, double fraction) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const double position = fraction * static_cast<double>(values.size() - 1);
    const auto low = static_cast<std::size_t>(std::floor(position));
    const std::size_t high = std::min(values.size() - 1, low + 1);
    return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

}  // namespace

// A configuration at speed factor `speed` (> 1: faster than estimated) and price factor
// `price`: first-order in the price and the time (slopes from the cost model); a service
// re-sized to the replicas the load needs, its cost in proportion to its GPUs.
Outcome Analysis::sampled(const Member& member, double speed, double price) const {
    const Candidate& candidate = *member.candidate;
    Outcome outcome = member.base;
    outcome.speed *= speed;
    outcome.time_s /= speed;
    outcome.latency_s /= speed;
    double scale = 1;
    if (candidate.perf.training) {
        outcome.tco_usd += member.price_slope_usd * (price - 1) + member.time_slope_usd * (1 / speed - 1);
        outcome.energy_kwh /= speed;
        const double deadline = m_workload.training.deadline_seconds;
        if (deadline > 0 && candidate.perf.training->time_to_train_s &&
            *candidate.perf.training->time_to_train_s / speed > deadline) {
            outcome.feasible = false;
        }
    } else if (candidate.perf.inference) {
        int serving = replicas_for(m_workload.inference.requests_per_s, member.capacity_per_replica * speed);
        if (serving <= 0) {
            outcome.feasible = false;
            return outcome;
        }
        if (candidate.unit_fill_replicas > 0 && serving < member.serving) {
            serving = member.serving;  // its whole units are bought however few replicas the load needs
        }
        scale = static_cast<double>(serving + member.spares) / (member.serving + member.spares);
        outcome.replicas = serving + member.spares;
        outcome.count = outcome.replicas * member.replica_gpus;
        outcome.tco_usd = (outcome.tco_usd + member.price_slope_usd * (price - 1)) * scale;
        outcome.energy_kwh *= scale;
        if (outcome.count > m_workload.constraints.max_gpus) {
            outcome.feasible = false;
        }
    }
    const double ratio = member.base.tco_usd > 0 ? outcome.tco_usd / member.base.tco_usd : 1;
    outcome.usd_per_unit *= ratio;
    if (!within_budget(candidate.cost.capex_usd * price * scale, candidate.cost.monthly_opex_usd * ratio)) {
        outcome.feasible = false;
    }
    return outcome;
}

// The pick as ordered (its count, its replicas) in one scenario: fits, deadline, SLO, budget.
bool Analysis::pick_holds(double speed, double price, double memory_t) const {
    const Member& member = m_members[m_pick];
    const Candidate& candidate = *member.candidate;
    const MemoryBreakdown& memory = m_plan.winner->memory.per_gpu;
    const double bytes = memory_t >= 0 ? memory.total_bytes + memory_t * (memory.total_high_bytes - memory.total_bytes)
                                       : memory.total_bytes + memory_t * (memory.total_bytes - memory.total_low_bytes);
    if (bytes > m_usable_bytes) {
        return false;
    }
    if (candidate.perf.training) {
        const double deadline = m_workload.training.deadline_seconds;
        if (deadline > 0 && candidate.perf.training->time_to_train_s &&
            *candidate.perf.training->time_to_train_s / speed > deadline) {
            return false;
        }
    } else if (member.capacity_per_replica * speed * member.serving <
               m_workload.inference.requests_per_s * (1 - 1e-9)) {
        return false;
    }
    return within_budget(candidate.cost.capex_usd * price,
                         candidate.cost.monthly_opex_usd *
                             (member.base.tco_usd > 0
                                  ? (member.base.tco_usd + member.price_slope_usd * (price - 1)) / member.base.tco_usd
                                  : 1));
}

void Analysis::sample(RoleUncertainty& result) {
    const Candidate& winner = *m_members[m_pick].candidate;
    m_usable_bytes = memory_usable_bytes(m_workload, *m_members[m_pick].gpu, winner.layout,
                                         m_workload.constraints.memory_headroom_fraction, winner.precision);
    // Ranked candidates' members, for bands and ties.
    std::vector<std::size_t> ranked_members;
    for (const Candidate& candidate : m_plan.ranked) {
        ranked_members.push_back(find(candidate));
    }
    std::vector<std::vector<double>> times(ranked_members.size());
    std::vector<std::vector<double>> costs(ranked_members.size());
    std::vector<int> pick_beats(ranked_members.size(), 0);
    Random random(m_options.seed);
    std::vector<double> gpu_error(m_speed_slots.size());
    std::vector<double> price_error(m_price_slots.size());
    std::vector<Outcome> outcomes(m_members.size());
    int best = 0;
    int holds = 0;
    for (int s = 0; s < m_options.samples; ++s) {
        const double memory_t = random.triangular();
        for (double& error : gpu_error) {
            error = random.triangular();
        }
        for (double& error : price_error) {
            error = random.triangular();
        }
        for (std::size_t i = 0; i < m_members.size(); ++i) {
            const Member& member = m_members[i];
            outcomes[i] = sampled(member, 1 + member.speed.fraction * gpu_error[member.speed_slot],
                                  1 + member.price_band * price_error[member.price_slot]);
        }
        if (winner_of(outcomes, m_objective) == m_pick) {
            ++best;
        }
        const Member& pick = m_members[m_pick];
        if (pick_holds(1 + pick.speed.fraction * gpu_error[pick.speed_slot],
                       1 + pick.price_band * price_error[pick.price_slot], memory_t)) {
            ++holds;
        }
        for (std::size_t r = 0; r < ranked_members.size(); ++r) {
            const std::size_t index = ranked_members[r];
            if (index == none) {
                continue;
            }
            times[r].push_back(member_time_factor(m_members[index], outcomes[index]));
            costs[r].push_back(outcomes[index].tco_usd);
            const std::vector<Outcome> pair{outcomes[m_pick], outcomes[index]};
            if (index != m_pick && winner_of(pair, m_objective) == 0) {
                ++pick_beats[r];
            }
        }
    }
    const double samples = m_options.samples;
    result.p_best = best / samples;
    result.p_feasible = holds / samples;
    for (std::size_t r = 0; r < ranked_members.size(); ++r) {
        EstimateBand band;
        const std::size_t index = ranked_members[r];
        if (index != none && !times[r].empty()) {
            band.time_low_factor = percentile_of(times[r], 0.05);
            band.time_high_factor = percentile_of(times[r], 0.95);
            band.tco_low_usd = percentile_of(costs[r], 0.05);
            band.tco_high_usd = percentile_of(costs[r], 0.95);
            const Member& member = m_members[index];
            if (member.candidate->perf.inference) {
                const double rate = m_workload.inference.requests_per_s;
                band.replicas_low =
                    replicas_for(rate, member.capacity_per_replica * (1 + member.speed.fraction)) + member.spares;
                band.replicas_high =
                    replicas_for(rate, member.capacity_per_replica * (1 - member.speed.fraction)) + member.spares;
            }
            if (index != m_pick && pick_beats[r] < m_options.tie_confidence * samples) {
                result.tied_with.push_back(static_cast<int>(r + 1));
            }
        }
        result.bands.push_back(band);
    }
}

double Analysis::member_time_factor(const Member& member, const Outcome& outcome) {
    return member.base.speed > 0 ? member.base.speed / outcome.speed : 1;
}

void Analysis::warnings(RoleUncertainty& result) const {
    const Member& pick = m_members[m_pick];
    const Candidate& candidate = *pick.candidate;
    const MemoryBreakdown& memory = m_plan.winner->memory.per_gpu;
    if (memory.total_bytes <= m_usable_bytes && memory.total_high_bytes > m_usable_bytes) {
        const std::string hidden = hidden_difference(format_gb(memory.total_high_bytes), format_gb(m_usable_bytes),
                                                     format_bytes_difference(memory.total_high_bytes - m_usable_bytes));
        result.warnings.push_back(fmt::format(
            "fits only at the optimistic end of the memory band: {} per GPU estimated, up to {} of {} usable{}",
            format_gb(memory.total_bytes), format_gb(memory.total_high_bytes), format_gb(m_usable_bytes),
            hidden.empty() ? "" : " (" + hidden + " over)"));
    }
    const double slower = 1 - pick.speed.fraction;
    if (candidate.perf.training) {
        const double deadline = m_workload.training.deadline_seconds;
        const std::optional<double>& time = candidate.perf.training->time_to_train_s;
        if (deadline > 0 && time && *time <= deadline && *time / slower > deadline) {
            const std::string hidden = hidden_difference(format_duration(*time / slower), format_duration(deadline),
                                                         format_duration(*time / slower - deadline));
            result.warnings.push_back(fmt::format(
                "meets the deadline only at the optimistic end of the speed band: {} per run now, {} if {:.0f} % "
                "slower > {} deadline{}",
                format_duration(*time), format_duration(*time / slower), pick.speed.fraction * 100,
                format_duration(deadline), hidden.empty() ? "" : " (by " + hidden + ")"));
        }
    } else if (candidate.perf.inference) {
        const double rate = m_workload.inference.requests_per_s;
        const double served = pick.capacity_per_replica * slower * pick.serving;
        if (served < rate * (1 - 1e-9)) {
            const int needed = replicas_for(rate, pick.capacity_per_replica * slower);
            result.warnings.push_back(fmt::format(
                "meets the SLO only at the optimistic end of the speed band: if {:.0f} % slower ({}), its {} "
                "serving replica{} carry {:.3g} req/s within the SLO < {:g} req/s; {} would be needed",
                pick.speed.fraction * 100, pick.speed.phase, pick.serving, pick.serving == 1 ? "" : "s", served, rate,
                needed));
        }
    }
    const double capex_budget = m_workload.budget.capex_usd;
    if (capex_budget > 0 && candidate.cost.capex_usd <= capex_budget &&
        candidate.cost.capex_usd * (1 + pick.price_band) > capex_budget) {
        result.warnings.push_back(fmt::format(
            "stays within the capex budget only at the low end of its price band ({} {}, ±{:.0f} %): {} vs {}",
            to_string(pick.quote->price.kind), candidate.cost.offer.id, pick.price_band * 100,
            format_usd(candidate.cost.capex_usd), format_usd(capex_budget)));
    }
}

}  // namespace gpusel::robustness_detail
