// The seeded Monte Carlo of the robustness analysis: every configuration of the pool at a
// sampled speed and price error (one error per GPU type, per price point, and one for the
// pick's memory), re-ranked by the planner's rule; the share of scenarios in which the pick
// stays best and still holds as ordered, the 5–95 % bands of time, TCO and replicas, the
// candidates it does not clearly beat, and warnings where it holds only at a band's good end.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/money.hpp"
#include "base/parallel.hpp"
#include "plan/robustness_analysis.hpp"

namespace gpusel::robustness_detail {

namespace {

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

// Closed-loop clients (inference.concurrency) have no rate to size replicas by: whether the
// candidate's P99 TPOT at `speed` times the estimate's speed still holds the target (true for
// an open-loop load or without a TPOT target).
bool clients_tpot_holds(const Workload& workload, const Candidate& candidate, double speed) {
    const double target = workload.inference.slo.tpot_seconds;
    const std::optional<double>& tpot = candidate.perf.inference->p99_tpot_s;
    return workload.inference.concurrency <= 0 || target <= 0 || !tpot || *tpot / speed <= target;
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
        // Closed-loop clients (inference.concurrency) bring no rate to divide: the candidate's
        // replicas stay, and the drawn speed moves only its latencies.
        int serving = m_workload.inference.concurrency > 0
                          ? member.serving
                          : replicas_for(m_workload.inference.requests_per_s, member.capacity_per_replica * speed);
        if (serving <= 0) {
            outcome.feasible = false;
            return outcome;
        }
        if (!clients_tpot_holds(m_workload, candidate, speed)) {
            outcome.feasible = false;
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

// A ranked candidate as ordered (its count, its replicas) in one scenario: fits, deadline, SLO,
// budget. `memory_z`: the memory model's error, shared by every candidate (one model). On a
// paged serving engine the memory as started is fixed (a fraction of the device); what the
// error moves is the KV-cache pool, hence how many sequences a replica runs at once, hence
// its capacity.
bool Analysis::holds(const Member& member, const Candidate& ranked, double speed, double price, double memory_z) const {
    const Candidate& candidate = *member.candidate;
    const MemoryBreakdown& memory = ranked.memory.per_gpu;
    const double bytes = band_value(memory_distribution(memory), memory_z);
    double capacity_factor = 1;
    if (ranked.memory.serving) {
        const ServingMemory& engine = *ranked.memory.serving;
        const double pool_bytes = engine.kv_cache_bytes - std::max(0.0, bytes - memory.total_bytes);
        const double per_sequence = engine.kv_bytes_per_token * std::max(1, ranked.memory.context_tokens);
        const double sequences = per_sequence > 0 ? pool_bytes / per_sequence : infinity;
        if (sequences < 1) {
            return false;
        }
        if (ranked.batch > 0 && sequences < ranked.batch) {
            capacity_factor = sequences / ranked.batch;
        }
    } else if (bytes > member.usable_bytes) {
        return false;
    }
    if (candidate.perf.training) {
        const double deadline = m_workload.training.deadline_seconds;
        if (deadline > 0 && candidate.perf.training->time_to_train_s &&
            *candidate.perf.training->time_to_train_s / speed > deadline) {
            return false;
        }
    } else if (m_workload.inference.concurrency > 0) {
        if (!clients_tpot_holds(m_workload, candidate, speed)) {
            return false;
        }
    } else if (member.capacity_per_replica * speed * capacity_factor * member.serving <
               m_workload.inference.requests_per_s * (1 - 1e-9)) {
        return false;
    }
    return within_budget(candidate.cost.capex_usd * price,
                         candidate.cost.monthly_opex_usd *
                             (member.base.tco_usd > 0
                                  ? (member.base.tco_usd + member.price_slope_usd * (price - 1)) / member.base.tco_usd
                                  : 1));
}

namespace {
// band_value of a log-scale band, its logarithms taken once: the same operations on the same
// figures, so the same values.
struct LogBand {
    double median = 0;
    double low_spread = 0;
    double high_spread = 0;
    static LogBand of(const PercentileBand& band) {
        const double median = std::log(band.p50);
        return {median, median - std::log(band.p10), std::log(band.p90) - median};
    }
    double value(double z) const {
        const double spread = z < 0 ? low_spread : high_spread;
        return std::exp(median + z * spread / normal_p90);
    }
};

// `count` standard normal draws of one stream from `seed`, in the order it gives them.
std::vector<double> normal_draws(std::uint64_t seed, std::size_t count) {
    std::vector<double> draws(count);
    ScenarioRandom random(seed);
    for (double& draw : draws) {
        draw = random.normal();
    }
    return draws;
}
}  // namespace

void Analysis::sample(RoleUncertainty& result) {
    // Ranked candidates' members, for bands, ties and the share of scenarios each holds in.
    std::vector<std::size_t> ranked_members;
    for (const Candidate& candidate : m_plan.ranked) {
        const std::size_t index = find(candidate);
        ranked_members.push_back(index);
        if (index != none) {
            Member& member = m_members[index];
            member.usable_bytes =
                memory_usable_bytes(m_workload, *member.gpu, candidate.layout,
                                    m_workload.constraints.memory_headroom_fraction, candidate.precision);
        }
    }
    // The draws first, in the order one stream gives them (scenario by scenario: the memory
    // error, each speed error, each price error), then the scenarios in parallel blocks: each
    // scenario writes only its own slots, and the counts are sums, so the result does not
    // depend on the scheduling.
    const std::size_t scenarios = static_cast<std::size_t>(std::max(0, m_options.samples));
    const std::size_t per_scenario = 1 + m_speed_slots.size() + m_price_slots.size();
    const std::vector<double> draws = normal_draws(m_options.seed, scenarios * per_scenario);
    std::vector<std::vector<double>> times(ranked_members.size());
    std::vector<std::vector<double>> costs(ranked_members.size());
    for (std::size_t r = 0; r < ranked_members.size(); ++r) {
        if (ranked_members[r] != none) {
            times[r].resize(scenarios);
            costs[r].resize(scenarios);
        }
    }
    struct Counts {
        int best = 0;
        std::vector<int> ranked_holds;
        std::vector<int> pick_beats;
    };
    // Each member's speed and price bands with their logarithms taken once: band_value would
    // take them again for every member of every scenario (the same figures).
    std::vector<LogBand> speed_bands;
    std::vector<LogBand> price_bands;
    for (const Member& member : m_members) {
        speed_bands.push_back(LogBand::of(speed_distribution(member.speed.percentiles)));
        price_bands.push_back(LogBand::of(price_distribution(member.price_band)));
    }
    const std::size_t block_size = 50;
    std::vector<Counts> blocks((scenarios + block_size - 1) / block_size);
    parallel_for(blocks.size(), [&](std::size_t block) {
        Counts& counts = blocks[block];
        counts.ranked_holds.assign(ranked_members.size(), 0);
        counts.pick_beats.assign(ranked_members.size(), 0);
        std::vector<Outcome> outcomes(m_members.size());
        std::vector<double> speeds(m_members.size());
        std::vector<double> prices(m_members.size());
        const std::size_t end = std::min(scenarios, (block + 1) * block_size);
        for (std::size_t s = block * block_size; s < end; ++s) {
            const double* draw = draws.data() + s * per_scenario;
            const double memory_z = draw[0];
            const double* gpu_error = draw + 1;
            const double* price_error = gpu_error + m_speed_slots.size();
            for (std::size_t i = 0; i < m_members.size(); ++i) {
                const Member& member = m_members[i];
                speeds[i] = speed_bands[i].value(gpu_error[member.speed_slot]);
                prices[i] = price_bands[i].value(price_error[member.price_slot]);
                outcomes[i] = sampled(member, speeds[i], prices[i]);
            }
            if (winner_of(outcomes, m_objective) == m_pick) {
                ++counts.best;
            }
            for (std::size_t r = 0; r < ranked_members.size(); ++r) {
                const std::size_t index = ranked_members[r];
                if (index == none) {
                    continue;
                }
                if (holds(m_members[index], m_plan.ranked[r], speeds[index], prices[index], memory_z)) {
                    ++counts.ranked_holds[r];
                }
                times[r][s] = member_time_factor(m_members[index], outcomes[index]);
                costs[r][s] = outcomes[index].tco_usd;
                if (index != m_pick && pick_wins_pair(outcomes[m_pick], outcomes[index], m_objective)) {
                    ++counts.pick_beats[r];
                }
            }
        }
    });
    int best = 0;
    std::vector<int> ranked_holds(ranked_members.size(), 0);
    std::vector<int> pick_beats(ranked_members.size(), 0);
    for (const Counts& counts : blocks) {
        best += counts.best;
        for (std::size_t r = 0; r < ranked_members.size(); ++r) {
            ranked_holds[r] += counts.ranked_holds[r];
            pick_beats[r] += counts.pick_beats[r];
        }
    }
    const double samples = m_options.samples;
    result.p_best = best / samples;
    for (std::size_t r = 0; r < ranked_members.size(); ++r) {
        EstimateBand band;
        const std::size_t index = ranked_members[r];
        band.p_feasible = index == none ? 0 : ranked_holds[r] / samples;
        band.sampled = index != none;
        if (index == m_pick) {
            result.p_feasible = band.p_feasible;
        }
        if (index != none && !times[r].empty()) {
            band.time_low_factor = percentile_of(times[r], 0.05);
            band.time_high_factor = percentile_of(times[r], 0.95);
            band.tco_low_usd = percentile_of(costs[r], 0.05);
            band.tco_high_usd = percentile_of(costs[r], 0.95);
            const Member& member = m_members[index];
            if (member.candidate->perf.inference) {
                const double rate = m_workload.inference.requests_per_s;
                band.replicas_low =
                    replicas_for(rate, member.capacity_per_replica * speed_factor(member, normal_p90)) + member.spares;
                band.replicas_high =
                    replicas_for(rate, member.capacity_per_replica * speed_factor(member, -normal_p90)) + member.spares;
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

double Analysis::speed_factor(const Member& member, double z) {
    const SpeedBandFactors& band = member.speed.percentiles;
    return band_value(speed_distribution(band), z);
}

// What the pick needs at the confidence level: memory at its quantile, speed at the opposite
// one (the slow end the decision must survive), the price at its high quantile.
void Analysis::warnings(RoleUncertainty& result) const {
    const Member& pick = m_members[m_pick];
    const Candidate& candidate = *pick.candidate;
    const double confidence = m_workload.confidence;
    const double z = normal_quantile(confidence);
    const int percent = static_cast<int>(std::lround(confidence * 100));
    const MemoryBreakdown& memory = m_plan.winner->memory.per_gpu;
    const double bytes = band_value(memory_distribution(memory), z);
    if (!m_plan.winner->memory.serving && bytes > pick.usable_bytes) {
        const std::string hidden = hidden_difference(format_gb(bytes), format_gb(pick.usable_bytes),
                                                     format_bytes_difference(bytes - pick.usable_bytes));
        result.warnings.push_back(
            fmt::format("may not fit: {} per GPU estimated, {} at the memory band's {}th percentile > {} usable{}",
                        format_gb(memory.total_bytes), format_gb(bytes), percent, format_gb(pick.usable_bytes),
                        hidden.empty() ? "" : " (" + hidden + " over)"));
    }
    const double slower = speed_factor(pick, -z);
    if (candidate.perf.training) {
        const double deadline = m_workload.training.deadline_seconds;
        const std::optional<double>& time = candidate.perf.training->time_to_train_s;
        if (deadline > 0 && time && *time <= deadline && *time / slower > deadline) {
            const std::string hidden = hidden_difference(format_duration(*time / slower), format_duration(deadline),
                                                         format_duration(*time / slower - deadline));
            result.warnings.push_back(fmt::format(
                "may miss the deadline: {} per run estimated, {} at the speed band's {}th percentile ({:.2f}× "
                "the estimate) > {} deadline{}",
                format_duration(*time), format_duration(*time / slower), 100 - percent, slower,
                format_duration(deadline), hidden.empty() ? "" : " (by " + hidden + ")"));
        }
    } else if (candidate.perf.inference) {
        const double rate = m_workload.inference.requests_per_s;
        const double served = pick.capacity_per_replica * slower * pick.serving;
        if (served < rate * (1 - 1e-9)) {
            const int needed = replicas_for(rate, pick.capacity_per_replica * slower);
            result.warnings.push_back(fmt::format(
                "may miss the SLO: at the {} speed band's {}th percentile ({:.2f}× the estimate), its {} serving "
                "replica{} carry {:.3g} req/s within the SLO < {:g} req/s; {} would be needed",
                pick.speed.phase, 100 - percent, slower, pick.serving, pick.serving == 1 ? "" : "s", served, rate,
                needed));
        }
    }
    const double capex_budget = m_workload.budget.capex_usd;
    const CurrencySpec& currency = m_workload.deployment.currency;
    const Money money{currency.code, currency.per_usd, currency.as_of};
    const double price_high = band_value(price_distribution(pick.price_band), z);
    if (capex_budget > 0 && candidate.cost.capex_usd <= capex_budget &&
        candidate.cost.capex_usd * price_high > capex_budget) {
        result.warnings.push_back(fmt::format(
            "may exceed the capex budget: {} at the {}th percentile of its price band ({} {}, ±{:.0f} %) > {}",
            money.whole(candidate.cost.capex_usd * price_high), percent, to_string(pick.quote->price.kind),
            candidate.cost.offer.id, pick.price_band * 100, money.whole(capex_budget)));
    }
}

}  // namespace gpusel::robustness_detail
