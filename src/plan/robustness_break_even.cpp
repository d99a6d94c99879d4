// Sensitivity of the robustness analysis: exact re-pricing through the cost model with one
// input moved (horizon, utilisation, energy price, the prices of the pick and the ranked
// candidates, dataset, runs, deadline, request rate, the SLO); the nearest value at which the
// pick stops winning (a grid, then bisection) and the tornado of the pick's score over each
// input's swing.

#include <algorithm>
#include <cmath>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "base/parallel.hpp"
#include "plan/robustness_analysis.hpp"

namespace gpusel::robustness_detail {

namespace {

std::string label_of(const Candidate& candidate) {
    return fmt::format("{} ×{} {}", candidate.gpu, candidate.count, describe(candidate.acquisition));
}

}  // namespace

// The capacity per replica of a service, in req/s within the SLO: as planned, or scaled by
// how one replica's capacity moves with the SLO (one replica: the perf model's queueing over
// many replicas costs far more and moves alike).
double Analysis::single_replica_capacity(const Member& member, const Workload& workload) const {
    const Candidate& candidate = *member.candidate;
    PerfQuery query;
    query.layout = candidate.layout;
    query.layout.data_parallel = 1;
    query.batch = candidate.batch;
    query.precision = candidate.precision;
    const PerfEstimate perf = estimate_perf(workload, *member.gpu, query, m_efficiency);
    return perf.inference ? perf.inference->max_requests_per_s_meeting_slo : 0;
}

bool Analysis::LoadLatency::meets(const SloSpec& slo) const {
    return usable && (slo.ttft_seconds <= 0 || ttft_s <= slo.ttft_seconds) &&
           (slo.tpot_seconds <= 0 || !tpot_s || *tpot_s <= slo.tpot_seconds) &&
           (slo.e2e_seconds <= 0 || e2e_s <= slo.e2e_seconds);
}

const Analysis::LoadLatency& Analysis::single_replica_latency(const Member& member, double load) const {
    const Candidate& candidate = *member.candidate;
    {
        // The break-evens run in parallel; a map's elements stay where they are as it grows.
        const std::lock_guard<std::mutex> lock(m_latency_mutex);
        const std::map<double, LoadLatency>& by_load = m_latency_cache[member.configuration];
        const auto found = by_load.find(load);
        if (found != by_load.end()) {
            return found->second;
        }
    }
    Workload loaded = m_workload;
    loaded.inference.requests_per_s = load;
    PerfQuery query;
    query.layout = candidate.layout;
    query.layout.data_parallel = 1;
    query.batch = candidate.batch;
    query.precision = candidate.precision;
    query.search_capacity = false;
    const PerfEstimate perf = estimate_perf(loaded, *member.gpu, query, m_efficiency);
    LoadLatency latency;
    if (perf.inference && perf.inference->fits && perf.inference->batch_fits && perf.inference->p99_ttft_s) {
        latency.usable = true;
        latency.ttft_s = *perf.inference->p99_ttft_s;
        latency.tpot_s = perf.inference->p99_tpot_s;
        latency.e2e_s = perf.inference->p99_e2e_s.value_or(latency.ttft_s);
    }
    const std::lock_guard<std::mutex> lock(m_latency_mutex);
    return m_latency_cache[member.configuration].emplace(load, latency).first->second;
}

// Replicas serving the scenario's load. Under a moved SLO, one replica's capacity c(T) is the
// largest load whose latencies meet target T, and the planner's count is ceil(rate / capacity),
// capacity = capacity_per_replica × c(T) / c(T₀). So n replicas suffice exactly when one replica
// meets T at the load ℓₙ = c(T₀) · rate / (capacity_per_replica · n): the smallest such n, found
// by doubling and halving over n. The loads ℓₙ do not depend on T, so every SLO value a
// break-even tries reads the same cached latencies instead of searching a capacity again.
int Analysis::serving_replicas_under(const Member& member, const Scenario& scenario) const {
    const double rate = scenario.workload.inference.requests_per_s;
    if (!scenario.slo_changed) {
        return replicas_for(rate, member.capacity_per_replica);
    }
    if (member.single_capacity <= 0 || member.capacity_per_replica <= 0) {
        return 0;
    }
    const SloSpec& slo = scenario.workload.inference.slo;
    const auto suffices = [&](int replicas) {
        const double load = member.single_capacity * rate / (member.capacity_per_replica * (replicas + 1e-9));
        return single_replica_latency(member, load).meets(slo);
    };
    if (const std::optional<int> enough = smallest_holding(1, 1 << 20, suffices)) {
        return *enough;
    }
    // Beyond any fleet the constraints allow: the capacity itself, searched.
    const double capacity = single_replica_capacity(member, scenario.workload);
    return replicas_for(rate, member.capacity_per_replica * capacity / member.single_capacity);
}

Outcome Analysis::exact(const Member& member, const Scenario& scenario) const {
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
        const int serving = serving_replicas_under(member, scenario);
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
        const double served_before = m_workload.inference.requests_per_s * before.utilization * before.horizon_months;
        const double served = rate * workload.deployment.utilization * workload.deployment.horizon_months;
        usage.work_units *= served_before > 0 ? served / served_before : 1;
    }
    const bool repriced = scenario.price_key == member.price_key && scenario.price_factor != 1;
    const CostEstimate cost = estimate_cost(
        workload, *member.gpu, *member.quote, usage,
        repriced ? std::optional<double>(member.price_usd * scenario.price_factor) : std::nullopt, CostDetail::figures);
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
std::size_t Analysis::winner_under(const Scenario& scenario) const {
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
    for (const Member& member : m_members) {
        outcomes.push_back(exact(member, scenario));
    }
    return winner_of(outcomes, m_objective);
}

std::vector<Analysis::Input> Analysis::inputs() const {
    std::vector<Input> list;
    const DeploymentSpec& deployment = m_workload.deployment;
    const double horizon = deployment.horizon_months;
    list.push_back({"horizon_months", "horizon", "months", horizon, std::min(1.0, horizon), std::max(120.0, horizon),
                    horizon * 0.5, horizon * 1.5,
                    [](Scenario& s, double v) { s.workload.deployment.horizon_months = v; }});
    const double utilization = deployment.utilization;
    if (utilization > 0) {
        list.push_back({"utilization", "utilisation", "fraction", utilization, std::min(0.05, utilization), 1.0,
                        std::max(0.05, utilization - 0.2), std::min(1.0, utilization + 0.2),
                        [](Scenario& s, double v) { s.workload.deployment.utilization = v; }});
    }
    const double energy = deployment.energy_usd_per_kwh;
    if (energy > 0) {
        list.push_back({"energy_usd_per_kwh", "energy price", "USD/kWh", energy, energy / 20, energy * 20, energy * 0.5,
                        energy * 1.5, [](Scenario& s, double v) { s.workload.deployment.energy_usd_per_kwh = v; }});
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
void Analysis::price_inputs(std::vector<Input>& list) const {
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
        const std::string unit = member.quote->offer->kind == OfferKind::rental ? "USD per unit-hour" : "USD per unit";
        list.push_back(
            {"price:" + key,
             fmt::format("price of {} ({})", member.candidate->cost.offer.id, describe(member.candidate->acquisition)),
             unit, price, price * 0.2, price * 5, price * (1 - member.price_band), price * (1 + member.price_band),
             [key, price](Scenario& s, double v) {
                 s.price_key = key;
                 s.price_factor = v / price;
             }});
    }
}

void Analysis::training_inputs(std::vector<Input>& list) const {
    const TrainingSpec& training = m_workload.training;
    const double dataset = training.dataset_tokens > 0 ? training.dataset_tokens : training.dataset_samples;
    if (dataset > 0) {
        list.push_back({"dataset", "dataset size", training.dataset_tokens > 0 ? "tokens" : "samples", dataset,
                        dataset / 20, dataset * 20, dataset * 0.5, dataset * 1.5,
                        [dataset](Scenario& s, double v) { s.dataset_factor = v / dataset; }});
        const double runs = training.runs;
        list.push_back(
            {"runs", "runs over the horizon", "runs", runs, 1, std::max(20.0, runs * 20),
             std::max(1.0, std::floor(runs * 0.5)), std::max(runs + 1, std::ceil(runs * 1.5)),
             [](Scenario& s, double v) { s.workload.training.runs = std::max(1, static_cast<int>(std::lround(v))); }});
    }
    const double deadline = training.deadline_seconds;
    if (deadline > 0) {
        list.push_back({"deadline_s", "deadline", "s", deadline, deadline * 0.25, deadline * 4, deadline * 0.8,
                        deadline * 1.25, [](Scenario& s, double v) { s.workload.training.deadline_seconds = v; }});
    }
}

void Analysis::inference_inputs(std::vector<Input>& list) const {
    const InferenceSpec& inference = m_workload.inference;
    const double rate = inference.requests_per_s;
    if (rate > 0) {
        list.push_back({"requests_per_s", "request rate", "req/s", rate, rate / 20, rate * 20, rate * 0.5, rate * 1.5,
                        [](Scenario& s, double v) { s.workload.inference.requests_per_s = v; }});
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

Scenario Analysis::scenario_at(const Input& input, double value) const {
    Scenario scenario{m_workload, {}, 1, 1, false};
    input.apply(scenario, value);
    return scenario;
}

// The nearest value between `current` and `bound` at which the winner is no longer the
// pick: a grid of 6 steps (geometric when both ends are positive), then 10 halvings of
// the first bracket that changes (a ratio of 20 over 6 steps leaves 0.05 % of the value).
// Absent when the pick wins over the whole span.
std::optional<Sensitivity> Analysis::break_even(const Input& input, double bound) const {
    const int steps = 6;
    const bool geometric = input.current > 0 && bound > 0;
    const auto at = [&](double a, double b, double t) { return geometric ? a * std::pow(b / a, t) : a + (b - a) * t; };
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

void Analysis::sensitivities(RoleUncertainty& result) {
    const Member& pick = m_members[m_pick];
    // Re-priced at the inputs as given, the pool must still pick the pick; where the
    // cost model's re-pricing does not reproduce the plan, a break-even would be noise.
    if (winner_under(Scenario{m_workload, {}, 1, 1, false}) != m_pick) {
        return;
    }
    for (const Member& member : m_members) {
        m_given.push_back(exact(member, Scenario{m_workload, {}, 1, 1, false}));
    }
    // Every break-even and swing is independent of the others: computed in parallel, each into
    // its own slot, and collected in the order of the inputs.
    const std::vector<Input> list = inputs();
    std::vector<std::optional<Sensitivity>> found(list.size() * 2);
    std::vector<Swing> swings(list.size());
    parallel_for(list.size() * 3, [&](std::size_t task) {
        const Input& input = list[task / 3];
        if (task % 3 < 2) {
            const double bound = task % 3 == 0 ? input.lowest : input.highest;
            if (bound != input.current) {
                found[task / 3 * 2 + task % 3] = break_even(input, bound);
            }
            return;
        }
        Swing& swing = swings[task / 3];
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
    });
    for (std::size_t i = 0; i < list.size(); ++i) {
        for (std::size_t bound = 0; bound < 2; ++bound) {
            if (std::optional<Sensitivity>& sensitivity = found[i * 2 + bound]) {
                result.sensitivity.push_back(std::move(*sensitivity));
            }
        }
        result.tornado.push_back(std::move(swings[i]));
    }
    std::stable_sort(result.sensitivity.begin(), result.sensitivity.end(),
                     [](const Sensitivity& a, const Sensitivity& b) { return a.distance < b.distance; });
    std::stable_sort(result.tornado.begin(), result.tornado.end(), [](const Swing& a, const Swing& b) {
        return std::fabs(a.high_score - a.low_score) > std::fabs(b.high_score - b.low_score);
    });
}

}  // namespace gpusel::robustness_detail
