#include "plan/robustness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/format.hpp"
#include "cost/offer_selection.hpp"
#include "plan/internal.hpp"

namespace gpusel {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

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

// The planner's speed measure (ranking.cpp), which its tie rule uses.
double speed_of(const Candidate& candidate) {
    return plan_detail::speed(candidate);
}

std::string label_of(const Candidate& candidate) {
    return fmt::format("{} ×{} {}", candidate.gpu, candidate.count, describe(candidate.acquisition));
}

bool same_configuration(const Candidate& a, const Candidate& b) {
    return a.gpu == b.gpu && a.count == b.count && a.acquisition == b.acquisition && a.cost.offer.id == b.cost.offer.id;
}

// What ranks a configuration in one scenario.
struct Outcome {
    bool feasible = true;
    double tco_usd = 0;
    double time_s = 0;     // objective time: time-to-train (or step), or P99 e2e
    double latency_s = 0;  // objective latency: P99 TPOT (or e2e), or the training step
    double usd_per_unit = 0;
    double energy_kwh = 0;
    double speed = 0;
    int count = 0;
    int replicas = 0;
    std::size_t gpu = 0;  // GPU type (one representative per type, as the planner ranks)
};

double score_of(Objective objective, const Outcome& outcome) {
    switch (objective) {
        case Objective::tco:
            return outcome.tco_usd;
        case Objective::time:
            return outcome.time_s;
        case Objective::latency:
            return outcome.latency_s;
        case Objective::throughput_per_usd:
            return outcome.usd_per_unit > 0 ? outcome.usd_per_unit : outcome.tco_usd;
        case Objective::energy:
            return outcome.energy_kwh;
    }
    return outcome.tco_usd;
}

// The planner's rule (ranking.cpp: sort_by_score, order_ties; planner.cpp: one row per GPU type),
// mirrored over the light Outcome of a sampled scenario: configurations by score, then TCO, then
// fewer GPUs; the first of each GPU type stands for it; under the TCO objective those within
// the tie tolerance of the cheapest go to the fastest, then the fewest GPUs. `none` when
// nothing is feasible.
std::size_t winner_of(const std::vector<Outcome>& outcomes, Objective objective) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (outcomes[i].feasible) {
            order.push_back(i);
        }
    }
    if (order.empty()) {
        return none;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double score_a = score_of(objective, outcomes[a]);
        const double score_b = score_of(objective, outcomes[b]);
        if (score_a != score_b) {
            return score_a < score_b;
        }
        if (outcomes[a].tco_usd != outcomes[b].tco_usd) {
            return outcomes[a].tco_usd < outcomes[b].tco_usd;
        }
        return outcomes[a].count < outcomes[b].count;
    });
    if (objective != Objective::tco) {
        return order.front();
    }
    std::vector<std::size_t> representatives;
    for (const std::size_t index : order) {
        const bool seen = std::any_of(representatives.begin(), representatives.end(),
                                      [&](std::size_t other) { return outcomes[other].gpu == outcomes[index].gpu; });
        if (!seen) {
            representatives.push_back(index);
        }
    }
    const double cheapest = outcomes[representatives.front()].tco_usd;
    const double tolerance = std::max(tie_tolerance_usd, tie_tolerance_fraction * std::fabs(cheapest));
    std::size_t pick = representatives.front();
    for (const std::size_t index : representatives) {
        const Outcome& other = outcomes[index];
        if (other.tco_usd - cheapest > tolerance) {
            break;
        }
        const Outcome& current = outcomes[pick];
        if (other.speed > current.speed || (other.speed == current.speed && other.count < current.count)) {
            pick = index;
        }
    }
    return pick;
}

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

// One configuration of the pool, with what re-pricing it needs.
struct Member {
    const Candidate* candidate = nullptr;
    const GpuSpec* gpu = nullptr;
    std::optional<OfferQuote> quote;
    std::string price_key;  // offer and acquisition: one price point
    double price_usd = 0;
    double price_band = 0;
    SpeedBand speed;
    std::size_t gpu_slot = 0;    // index of its GPU type among the pool's
    std::size_t speed_slot = 0;  // index of its speed error: its GPU type's, or the input pipeline's
    std::size_t price_slot = 0;  // index of its price point among the pool's (shared price error)
    double price_slope_usd = 0;  // d TCO / d (price factor)
    double time_slope_usd = 0;   // d TCO / d (time factor), training
    Outcome base;
    // Inference
    int serving = 0;
    int spares = 0;
    int replica_gpus = 1;
    double capacity_per_replica = 0;  // req/s within the SLO
    double single_capacity = 0;       // one replica's, as the perf model gives it (see capacity_under)
};

// One input moved: the workload as changed, and factors the workload does not hold.
struct Scenario {
    Workload workload;
    std::string price_key;
    double price_factor = 1;
    double dataset_factor = 1;
    bool slo_changed = false;
};

class Analysis {
public:
    Analysis(const RolePlan& plan, const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
             Objective objective, const std::vector<Candidate>& pool, const RobustnessOptions& options)
        : m_plan(plan),
          m_workload(workload),
          m_catalog(catalog),
          m_efficiency(efficiency),
          m_objective(objective),
          m_options(options) {
        for (const Candidate& candidate : pool) {
            add_member(candidate);
        }
    }

    RoleUncertainty run() {
        RoleUncertainty result;
        const Candidate& winner = *m_plan.winner;
        m_pick = find(winner);
        if (m_pick == none) {
            return result;
        }
        std::vector<Outcome> base;
        for (const Member& member : m_members) {
            base.push_back(member.base);
        }
        if (winner_of(base, m_objective) != m_pick) {
            // The pool does not reproduce the planner's ranking: nothing said is better than a
            // wrong answer.
            return result;
        }
        result.computed = true;
        result.samples = m_options.samples;
        result.seed = m_options.seed;
        const Member& pick = m_members[m_pick];
        result.speed_phase = pick.speed.phase;
        result.speed_band_fraction = pick.speed.fraction;
        result.price_band_fraction = pick.price_band;
        result.score = score_of(m_objective, pick.base);
        result.score_unit = score_unit();
        sample(result);
        warnings(result);
        sensitivities(result);
        return result;
    }

private:
    void add_member(const Candidate& candidate) {
        Member member;
        member.candidate = &candidate;
        member.gpu = m_catalog.find(candidate.gpu);
        if (member.gpu == nullptr) {
            return;
        }
        for (OfferQuote& quote : quotes_for(m_catalog, m_workload, *member.gpu, candidate.acquisition)) {
            if (quote.offer != nullptr && quote.offer->id == candidate.cost.offer.id) {
                member.quote = std::move(quote);
                break;
            }
        }
        if (!member.quote) {
            return;
        }
        member.price_key = fmt::format("{}:{}", candidate.cost.offer.id, to_string(candidate.acquisition));
        member.price_usd = member.quote->price.usd;
        member.price_band = price_band_fraction(member.quote->price.kind);
        member.speed = speed_band(m_workload, m_efficiency);
        member.gpu_slot = slot(m_gpu_slots, candidate.gpu);
        // An input-bound candidate runs as fast as the host feeds it: one error for all of them
        // (the data pipeline's), not its GPU's.
        member.speed_slot = slot(m_speed_slots, candidate.perf.bottleneck.resource == Resource::input_pipeline
                                                    ? std::string("input pipeline")
                                                    : candidate.gpu);
        member.price_slot = slot(m_price_slots, member.price_key);
        member.base = base_outcome(candidate);
        member.base.gpu = member.gpu_slot;
        if (candidate.perf.inference) {
            member.spares = candidate.spare_replicas;
            member.serving = candidate.serving_replicas();
            member.replica_gpus = std::max(1, candidate.count / std::max(1, candidate.replicas));
            member.capacity_per_replica =
                candidate.perf.inference->max_requests_per_s_meeting_slo / std::max(1, candidate.layout.data_parallel);
            // The planner sized replicas from one replica's capacity; where the whole
            // candidate's figure per replica gives another count, take the middle of the
            // capacities that give the planner's count, so that the scenario at the estimate is
            // the plan.
            const double rate = m_workload.inference.requests_per_s;
            if (rate > 0 && replicas_for(rate, member.capacity_per_replica) != member.serving) {
                member.capacity_per_replica = rate / (member.serving - 0.5);
            }
        }
        if (candidate.perf.inference && m_workload.inference.requests_per_s > 0) {
            member.single_capacity = single_replica_capacity(member, m_workload);
        }
        // Slopes from the cost model itself: re-priced at +10 % price and +10 % time.
        const CostEstimate at_price =
            estimate_cost(m_workload, *member.gpu, *member.quote, candidate.usage, member.price_usd * 1.1);
        member.price_slope_usd = at_price.available ? (at_price.tco_usd - candidate.cost.tco_usd) / 0.1 : 0;
        if (candidate.perf.training && candidate.usage.job_seconds > 0) {
            UsageProfile slower = candidate.usage;
            slower.job_seconds *= 1.1;
            const CostEstimate at_time = estimate_cost(m_workload, *member.gpu, *member.quote, slower);
            member.time_slope_usd = at_time.available ? (at_time.tco_usd - candidate.cost.tco_usd) / 0.1 : 0;
        }
        m_members.push_back(std::move(member));
    }

    static std::size_t slot(std::vector<std::string>& slots, const std::string& key) {
        const auto found = std::find(slots.begin(), slots.end(), key);
        if (found != slots.end()) {
            return static_cast<std::size_t>(found - slots.begin());
        }
        slots.push_back(key);
        return slots.size() - 1;
    }

    std::size_t find(const Candidate& candidate) const {
        for (std::size_t i = 0; i < m_members.size(); ++i) {
            if (same_configuration(*m_members[i].candidate, candidate)) {
                return i;
            }
        }
        return none;
    }

    static Outcome base_outcome(const Candidate& candidate) {
        Outcome outcome;
        outcome.tco_usd = candidate.cost.tco_usd;
        outcome.usd_per_unit = candidate.cost.usd_per_unit;
        outcome.energy_kwh = candidate.cost.energy_kwh;
        outcome.speed = speed_of(candidate);
        outcome.count = candidate.count;
        outcome.replicas = candidate.replicas;
        if (candidate.perf.training) {
            const TrainingPerf& training = *candidate.perf.training;
            outcome.time_s = training.time_to_train_s.value_or(training.step_time_s);
            outcome.latency_s = training.step_time_s;
        } else if (candidate.perf.inference) {
            const InferencePerf& inference = *candidate.perf.inference;
            outcome.time_s = inference.p99_e2e_s.value_or(infinity);
            outcome.latency_s =
                inference.p99_tpot_s.value_or(0) > 0 ? *inference.p99_tpot_s : inference.p99_e2e_s.value_or(infinity);
        }
        return outcome;
    }

    std::string score_unit() const {
        switch (m_objective) {
            case Objective::tco:
                return "USD";
            case Objective::time:
            case Objective::latency:
                return "s";
            case Objective::throughput_per_usd:
                return "USD per " + m_members[m_pick].candidate->cost.unit;
            case Objective::energy:
                return "kWh";
        }
        return "USD";
    }

    bool within_budget(double capex_usd, double monthly_usd) const {
        const BudgetSpec& budget = m_workload.budget;
        return (budget.capex_usd <= 0 || capex_usd <= budget.capex_usd) &&
               (budget.monthly_usd <= 0 || monthly_usd <= budget.monthly_usd);
    }

    // A configuration at speed factor `speed` (> 1: faster than estimated) and price factor
    // `price`: first-order in the price and the time (slopes from the cost model); a service
    // re-sized to the replicas the load needs, its cost in proportion to its GPUs.
    Outcome sampled(const Member& member, double speed, double price) const {
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
            const int serving = replicas_for(m_workload.inference.requests_per_s, member.capacity_per_replica * speed);
            if (serving <= 0) {
                outcome.feasible = false;
                return outcome;
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

    // Replicas that carry `rate` at `capacity` req/s each; 0 when none can.
    static int replicas_for(double rate, double capacity) {
        if (capacity <= 0) {
            return 0;
        }
        return std::max(1, static_cast<int>(std::ceil(rate / capacity - 1e-9)));
    }

    // The pick as ordered (its count, its replicas) in one scenario: fits, deadline, SLO, budget.
    bool pick_holds(double speed, double price, double memory_t) const {
        const Member& member = m_members[m_pick];
        const Candidate& candidate = *member.candidate;
        const MemoryBreakdown& memory = m_plan.winner->memory.per_gpu;
        const double bytes = memory_t >= 0
                                 ? memory.total_bytes + memory_t * (memory.total_high_bytes - memory.total_bytes)
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
        return within_budget(
            candidate.cost.capex_usd * price,
            candidate.cost.monthly_opex_usd *
                (member.base.tco_usd > 0
                     ? (member.base.tco_usd + member.price_slope_usd * (price - 1)) / member.base.tco_usd
                     : 1));
    }

    void sample(RoleUncertainty& result) {
        const Candidate& winner = *m_members[m_pick].candidate;
        const Workload pick_workload = variant(winner);
        m_usable_bytes = memory_usable_bytes(pick_workload, *m_members[m_pick].gpu, winner.layout,
                                             m_workload.constraints.memory_headroom_fraction);
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

    static double member_time_factor(const Member& member, const Outcome& outcome) {
        return member.base.speed > 0 ? member.base.speed / outcome.speed : 1;
    }

    Workload variant(const Candidate& candidate) const {
        Workload workload = m_workload;
        workload.precision = candidate.precision;
        workload.training.checkpointing = candidate.checkpointing;
        return workload;
    }

    void warnings(RoleUncertainty& result) const {
        const Member& pick = m_members[m_pick];
        const Candidate& candidate = *pick.candidate;
        const MemoryBreakdown& memory = m_plan.winner->memory.per_gpu;
        if (memory.total_bytes <= m_usable_bytes && memory.total_high_bytes > m_usable_bytes) {
            result.warnings.push_back(fmt::format(
                "fits only at the optimistic end of the memory band: {} per GPU estimated, up to {} of {} usable",
                format_gb(memory.total_bytes), format_gb(memory.total_high_bytes), format_gb(m_usable_bytes)));
        }
        const double slower = 1 - pick.speed.fraction;
        if (candidate.perf.training) {
            const double deadline = m_workload.training.deadline_seconds;
            const std::optional<double>& time = candidate.perf.training->time_to_train_s;
            if (deadline > 0 && time && *time <= deadline && *time / slower > deadline) {
                result.warnings.push_back(fmt::format(
                    "meets the deadline only at the optimistic end of the speed band: {} per run now, {} if {:.0f} % "
                    "slower > {} deadline",
                    format_duration(*time), format_duration(*time / slower), pick.speed.fraction * 100,
                    format_duration(deadline)));
            }
        } else if (candidate.perf.inference) {
            const double rate = m_workload.inference.requests_per_s;
            const double served = pick.capacity_per_replica * slower * pick.serving;
            if (served < rate * (1 - 1e-9)) {
                const int needed = replicas_for(rate, pick.capacity_per_replica * slower);
                result.warnings.push_back(fmt::format(
                    "meets the SLO only at the optimistic end of the speed band: if {:.0f} % slower ({}), its {} "
                    "serving replica{} carry {:.3g} req/s within the SLO < {:g} req/s; {} would be needed",
                    pick.speed.fraction * 100, pick.speed.phase, pick.serving, pick.serving == 1 ? "" : "s", served,
                    rate, needed));
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

    // ------------------------------------------------------------------------------------
    // Sensitivity: exact re-pricing with one input moved

    // The capacity per replica of a service, in req/s within the SLO: as planned, or scaled by
    // how one replica's capacity moves with the SLO (one replica: the perf model's queueing over
    // many replicas costs far more and moves alike).
    double single_replica_capacity(const Member& member, const Workload& workload) const {
        const Candidate& candidate = *member.candidate;
        Workload variant_workload = workload;
        variant_workload.precision = candidate.precision;
        PerfQuery query;
        query.layout = candidate.layout;
        query.layout.data_parallel = 1;
        query.batch = candidate.batch;
        const PerfEstimate perf = estimate_perf(variant_workload, *member.gpu, query, m_efficiency);
        return perf.inference ? perf.inference->max_requests_per_s_meeting_slo : 0;
    }

    // `ratios`: one scenario's capacity ratios by GPU, layout, batch and precision, which the
    // acquisitions of one configuration share.
    double capacity_under(const Member& member, const Scenario& scenario, std::map<std::string, double>& ratios) const {
        if (!scenario.slo_changed) {
            return member.capacity_per_replica;
        }
        if (member.single_capacity <= 0) {
            return 0;
        }
        const Candidate& candidate = *member.candidate;
        const std::string key = fmt::format("{}/{}/{}/{}", candidate.gpu, candidate.layout.tensor_parallel,
                                            candidate.batch, to_string(candidate.precision));
        auto found = ratios.find(key);
        if (found == ratios.end()) {
            found =
                ratios.emplace(key, single_replica_capacity(member, scenario.workload) / member.single_capacity).first;
        }
        return member.capacity_per_replica * found->second;
    }

    Outcome exact(const Member& member, const Scenario& scenario) const {
        std::map<std::string, double> ratios;
        return exact(member, scenario, ratios);
    }

    Outcome exact(const Member& member, const Scenario& scenario, std::map<std::string, double>& ratios) const {
        const Candidate& candidate = *member.candidate;
        const Workload& workload = scenario.workload;
        Outcome outcome = member.base;
        UsageProfile usage = candidate.usage;
        usage.average_utilization = workload.deployment.utilization;
        if (candidate.perf.training) {
            const double runs = static_cast<double>(workload.training.runs) / std::max(1, m_workload.training.runs);
            const double factor = scenario.dataset_factor * runs;
            usage.job_seconds *= factor;
            usage.work_units *= factor;
            usage.transfer_bytes *= factor;
            usage.launches = workload.training.runs;
            const std::optional<double>& time = candidate.perf.training->time_to_train_s;
            if (time) {
                outcome.time_s = *time * scenario.dataset_factor;
                const double deadline = workload.training.deadline_seconds;
                if (deadline > 0 && outcome.time_s > deadline) {
                    outcome.feasible = false;
                }
            }
        } else if (candidate.perf.inference) {
            const double rate = workload.inference.requests_per_s;
            const int serving = replicas_for(rate, capacity_under(member, scenario, ratios));
            if (serving <= 0) {
                outcome.feasible = false;
                return outcome;
            }
            outcome.replicas = serving + member.spares;
            outcome.count = outcome.replicas * member.replica_gpus;
            if (outcome.count > workload.constraints.max_gpus) {
                outcome.feasible = false;
            }
            usage.gpus = outcome.count;
            usage.min_gpus = std::min(outcome.count, candidate.usage.min_gpus);
            const DeploymentSpec& before = m_workload.deployment;
            const double served_before =
                m_workload.inference.requests_per_s * before.utilization * before.horizon_months;
            const double served = rate * workload.deployment.utilization * workload.deployment.horizon_months;
            usage.work_units *= served_before > 0 ? served / served_before : 1;
        }
        const bool repriced = scenario.price_key == member.price_key && scenario.price_factor != 1;
        const CostEstimate cost =
            estimate_cost(workload, *member.gpu, *member.quote, usage,
                          repriced ? std::optional<double>(member.price_usd * scenario.price_factor) : std::nullopt);
        if (!cost.available) {
            outcome.feasible = false;
            return outcome;
        }
        outcome.tco_usd = cost.tco_usd;
        outcome.usd_per_unit = cost.usd_per_unit;
        outcome.energy_kwh = cost.energy_kwh;
        const BudgetSpec& budget = workload.budget;
        if ((budget.capex_usd > 0 && cost.capex_usd > budget.capex_usd) ||
            (budget.monthly_usd > 0 && cost.monthly_opex_usd > budget.monthly_usd)) {
            outcome.feasible = false;
        }
        return outcome;
    }

    // A moved price re-prices only the configurations bought or rented at it; the others keep
    // their outcome at the inputs as given (m_given).
    std::size_t winner_under(const Scenario& scenario) const {
        std::vector<Outcome> outcomes;
        if (!scenario.price_key.empty() && m_given.size() == m_members.size()) {
            outcomes = m_given;
            for (std::size_t i = 0; i < m_members.size(); ++i) {
                if (m_members[i].price_key == scenario.price_key) {
                    outcomes[i] = exact(m_members[i], scenario);
                }
            }
            return winner_of(outcomes, m_objective);
        }
        outcomes.reserve(m_members.size());
        std::map<std::string, double> ratios;
        for (const Member& member : m_members) {
            outcomes.push_back(exact(member, scenario, ratios));
        }
        return winner_of(outcomes, m_objective);
    }

    // One input the user controls or guesses: its value now, the span searched for a
    // break-even, the span the tornado shows, and how a value enters a scenario.
    struct Input {
        std::string id;
        std::string label;
        std::string unit;
        double current = 0;
        double lowest = 0;  // searched
        double highest = 0;
        double swing_low = 0;  // tornado
        double swing_high = 0;
        std::function<void(Scenario&, double)> apply;
    };

    std::vector<Input> inputs() const {
        std::vector<Input> list;
        const DeploymentSpec& deployment = m_workload.deployment;
        const double horizon = deployment.horizon_months;
        list.push_back({"horizon_months", "horizon", "months", horizon, std::min(1.0, horizon),
                        std::max(120.0, horizon), horizon * 0.5, horizon * 1.5,
                        [](Scenario& s, double v) { s.workload.deployment.horizon_months = v; }});
        const double utilization = deployment.utilization;
        if (utilization > 0) {
            list.push_back({"utilization", "utilisation", "fraction", utilization, std::min(0.05, utilization), 1.0,
                            std::max(0.05, utilization - 0.2), std::min(1.0, utilization + 0.2),
                            [](Scenario& s, double v) { s.workload.deployment.utilization = v; }});
        }
        const double energy = deployment.energy_usd_per_kwh;
        if (energy > 0) {
            list.push_back({"energy_usd_per_kwh", "energy price", "USD/kWh", energy, energy / 20, energy * 20,
                            energy * 0.5, energy * 1.5,
                            [](Scenario& s, double v) { s.workload.deployment.energy_usd_per_kwh = v; }});
        }
        price_inputs(list);
        if (m_workload.is_training()) {
            training_inputs(list);
        } else {
            inference_inputs(list);
        }
        return list;
    }

    // The price of the pick and of each ranked candidate: the ones a quote could move.
    void price_inputs(std::vector<Input>& list) const {
        std::vector<std::string> seen;
        std::vector<std::size_t> order{m_pick};
        for (const Candidate& candidate : m_plan.ranked) {
            order.push_back(find(candidate));
        }
        for (const std::size_t index : order) {
            if (index == none) {
                continue;
            }
            const Member& member = m_members[index];
            if (std::find(seen.begin(), seen.end(), member.price_key) != seen.end() || member.price_usd <= 0) {
                continue;
            }
            seen.push_back(member.price_key);
            const double price = member.price_usd;
            const std::string key = member.price_key;
            const std::string unit =
                member.quote->offer->kind == OfferKind::rental ? "USD per unit-hour" : "USD per unit";
            list.push_back({"price:" + key,
                            fmt::format("price of {} ({})", member.candidate->cost.offer.id,
                                        describe(member.candidate->acquisition)),
                            unit, price, price * 0.2, price * 5, price * (1 - member.price_band),
                            price * (1 + member.price_band), [key, price](Scenario& s, double v) {
                                s.price_key = key;
                                s.price_factor = v / price;
                            }});
        }
    }

    void training_inputs(std::vector<Input>& list) const {
        const TrainingSpec& training = m_workload.training;
        const double dataset = training.dataset_tokens > 0 ? training.dataset_tokens : training.dataset_samples;
        if (dataset > 0) {
            list.push_back({"dataset", "dataset size", training.dataset_tokens > 0 ? "tokens" : "samples", dataset,
                            dataset / 20, dataset * 20, dataset * 0.5, dataset * 1.5,
                            [dataset](Scenario& s, double v) { s.dataset_factor = v / dataset; }});
            const double runs = training.runs;
            list.push_back({"runs", "runs over the horizon", "runs", runs, 1, std::max(20.0, runs * 20),
                            std::max(1.0, std::floor(runs * 0.5)), std::max(runs + 1, std::ceil(runs * 1.5)),
                            [](Scenario& s, double v) {
                                s.workload.training.runs = std::max(1, static_cast<int>(std::lround(v)));
                            }});
        }
        const double deadline = training.deadline_seconds;
        if (deadline > 0) {
            list.push_back({"deadline_s", "deadline", "s", deadline, deadline * 0.25, deadline * 4, deadline * 0.8,
                            deadline * 1.25, [](Scenario& s, double v) { s.workload.training.deadline_seconds = v; }});
        }
    }

    void inference_inputs(std::vector<Input>& list) const {
        const InferenceSpec& inference = m_workload.inference;
        const double rate = inference.requests_per_s;
        if (rate > 0) {
            list.push_back({"requests_per_s", "request rate", "req/s", rate, rate / 20, rate * 20, rate * 0.5,
                            rate * 1.5, [](Scenario& s, double v) { s.workload.inference.requests_per_s = v; }});
        }
        const SloSpec& slo = inference.slo;
        const auto add = [&](const char* id, const char* label, double target, double SloSpec::*field) {
            list.push_back({id, label, "s", target, target * 0.25, target * 4, target * 0.8, target * 1.25,
                            [field](Scenario& s, double v) {
                                s.workload.inference.slo.*field = v;
                                s.slo_changed = true;
                            }});
        };
        if (slo.tpot_seconds > 0) {
            add("slo_tpot_s", "TPOT SLO", slo.tpot_seconds, &SloSpec::tpot_seconds);
        } else if (slo.ttft_seconds > 0) {
            add("slo_ttft_s", "TTFT SLO", slo.ttft_seconds, &SloSpec::ttft_seconds);
        } else if (slo.e2e_seconds > 0) {
            add("slo_e2e_s", "latency SLO", slo.e2e_seconds, &SloSpec::e2e_seconds);
        }
    }

    Scenario scenario_at(const Input& input, double value) const {
        Scenario scenario{m_workload, {}, 1, 1, false};
        input.apply(scenario, value);
        return scenario;
    }

    // The nearest value between `current` and `bound` at which the winner is no longer the
    // pick: a grid of 6 steps (geometric when both ends are positive), then 10 halvings of
    // the first bracket that changes (a ratio of 20 over 6 steps leaves 0.05 % of the value).
    // Absent when the pick wins over the whole span.
    std::optional<Sensitivity> break_even(const Input& input, double bound) const {
        const int steps = 6;
        const bool geometric = input.current > 0 && bound > 0;
        const auto at = [&](double a, double b, double t) {
            return geometric ? a * std::pow(b / a, t) : a + (b - a) * t;
        };
        double same = input.current;
        for (int step = 1; step <= steps; ++step) {
            const double value = at(input.current, bound, static_cast<double>(step) / steps);
            if (winner_under(scenario_at(input, value)) == m_pick) {
                same = value;
                continue;
            }
            double changed = value;
            for (int halving = 0; halving < 10; ++halving) {
                const double middle = at(same, changed, 0.5);
                if (winner_under(scenario_at(input, middle)) == m_pick) {
                    same = middle;
                } else {
                    changed = middle;
                }
            }
            if (input.id == "runs") {
                changed = std::round(changed);  // whole runs: the first count at which it flips
            }
            const std::size_t next = winner_under(scenario_at(input, changed));
            Sensitivity found;
            found.input = input.id;
            found.label = input.label;
            found.unit = input.unit;
            found.current = input.current;
            found.break_even = changed;
            found.new_winner = next == none ? "none feasible" : label_of(*m_members[next].candidate);
            found.distance = input.current > 0 && changed > 0 ? std::fabs(std::log(changed / input.current))
                                                              : std::fabs(changed - input.current);
            return found;
        }
        return std::nullopt;
    }

    void sensitivities(RoleUncertainty& result) {
        const Member& pick = m_members[m_pick];
        // Re-priced at the inputs as given, the pool must still pick the pick; where the
        // cost model's re-pricing does not reproduce the plan, a break-even would be noise.
        if (winner_under(Scenario{m_workload, {}, 1, 1, false}) != m_pick) {
            return;
        }
        for (const Member& member : m_members) {
            m_given.push_back(exact(member, Scenario{m_workload, {}, 1, 1, false}));
        }
        for (const Input& input : inputs()) {
            for (const double bound : {input.lowest, input.highest}) {
                if (bound != input.current) {
                    if (std::optional<Sensitivity> found = break_even(input, bound)) {
                        result.sensitivity.push_back(std::move(*found));
                    }
                }
            }
            Swing swing;
            swing.input = input.id;
            swing.label = input.label;
            swing.unit = input.unit;
            swing.low_value = input.swing_low;
            swing.high_value = input.swing_high;
            const Scenario low = scenario_at(input, input.swing_low);
            const Scenario high = scenario_at(input, input.swing_high);
            swing.low_score = score_of(m_objective, exact(pick, low));
            swing.high_score = score_of(m_objective, exact(pick, high));
            swing.flips_low = winner_under(low) != m_pick;
            swing.flips_high = winner_under(high) != m_pick;
            result.tornado.push_back(std::move(swing));
        }
        std::stable_sort(result.sensitivity.begin(), result.sensitivity.end(),
                         [](const Sensitivity& a, const Sensitivity& b) { return a.distance < b.distance; });
        std::stable_sort(result.tornado.begin(), result.tornado.end(), [](const Swing& a, const Swing& b) {
            return std::fabs(a.high_score - a.low_score) > std::fabs(b.high_score - b.low_score);
        });
    }

    const RolePlan& m_plan;
    const Workload& m_workload;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    Objective m_objective;
    RobustnessOptions m_options;
    std::vector<Member> m_members;
    std::vector<std::string> m_gpu_slots;
    std::vector<std::string> m_speed_slots;
    std::vector<std::string> m_price_slots;
    std::size_t m_pick = none;
    double m_usable_bytes = infinity;
    std::vector<Outcome> m_given;  // each configuration re-priced at the inputs as given
};

}  // namespace

double price_band_fraction(PriceKind kind) {
    // A quote or a list price is what is paid, up to discounts and the date (±5 %); a reported
    // price is a third party's account (±10 %); a street price moves with the market month to
    // month (±15 %); an estimate is a judgement (±30 %). Basis: docs/cost-model.md.
    switch (kind) {
        case PriceKind::quote:
        case PriceKind::list:
        case PriceKind::msrp:
            return 0.05;
        case PriceKind::reported:
            return 0.10;
        case PriceKind::street:
            return 0.15;
        case PriceKind::estimate:
            return 0.30;
    }
    return 0.30;
}

SpeedBand speed_band(const Workload& workload, const EfficiencyTable& efficiency) {
    const std::string_view group = speed_band_group(workload);
    SpeedBand band{group == "non-llm" ? "non-LLM" : std::string(group), 0};
    if (const auto found = efficiency.speed_bands.find(group); found != efficiency.speed_bands.end()) {
        band.fraction = std::max(1 - found->second.low, found->second.high - 1);
    }
    return band;
}

std::vector<Candidate> robustness_pool(const std::vector<Candidate>& sorted, std::size_t limit) {
    // Every GPU type's first configuration (what the planner ranks and ties), and the first of
    // each further acquisition up to `limit` of them (what a change of horizon or price brings).
    std::vector<Candidate> pool;
    std::size_t extra = 0;
    for (const Candidate& candidate : sorted) {
        const bool gpu_seen =
            std::any_of(pool.begin(), pool.end(), [&](const Candidate& other) { return other.gpu == candidate.gpu; });
        const bool pair_seen = std::any_of(pool.begin(), pool.end(), [&](const Candidate& other) {
            return other.gpu == candidate.gpu && other.acquisition == candidate.acquisition;
        });
        if (!gpu_seen) {
            pool.push_back(candidate);
        } else if (!pair_seen && extra < limit) {
            pool.push_back(candidate);
            ++extra;
        }
    }
    return pool;
}

RoleUncertainty analyse_uncertainty(const RolePlan& plan, const Workload& workload, const Catalog& catalog,
                                    const EfficiencyTable& efficiency, Objective objective,
                                    const std::vector<Candidate>& pool, const RobustnessOptions& options) {
    if (!plan.winner || pool.empty() || options.samples <= 0) {
        return {};
    }
    Analysis analysis(plan, workload, catalog, efficiency, objective, pool, options);
    return analysis.run();
}

}  // namespace gpusel
