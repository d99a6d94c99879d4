// How firmly a role's pick stands (robustness.hpp): the bands of speed and price, the pool of
// configurations the analysis re-ranks, each with what re-pricing it needs, and the planner's
// ranking rule mirrored over the light outcome of a scenario. The Monte Carlo is in
// robustness_sampling.cpp, the break-evens in robustness_break_even.cpp.

#include "plan/robustness.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/parallel.hpp"

#include "plan/internal.hpp"
#include "plan/robustness_analysis.hpp"

namespace gpusel {

namespace robustness_detail {

namespace {

// The planner's speed measure (ranking.cpp), which its tie rule uses.
double speed_of(const Candidate& candidate) {
    return plan_detail::speed(candidate);
}

bool same_configuration(const Candidate& a, const Candidate& b) {
    return a.gpu == b.gpu && a.count == b.count && a.acquisition == b.acquisition && a.cost.offer.id == b.cost.offer.id;
}

}  // namespace

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

namespace {

plan_detail::RankKey rank_key_of(Objective objective, const Outcome& outcome) {
    return plan_detail::RankKey{
        score_of(objective, outcome),      outcome.tco_usd,   outcome.count,       outcome.speed,
        outcome.count + outcome.idle_gpus, outcome.idle_gpus, outcome.marketplace, outcome.single_source};
}

}  // namespace

bool pick_wins_pair(const Outcome& pick, const Outcome& other, Objective objective) {
    if (!pick.feasible || !other.feasible) {
        return pick.feasible;
    }
    const plan_detail::RankKey pick_key = rank_key_of(objective, pick);
    const plan_detail::RankKey other_key = rank_key_of(objective, other);
    // winner_of's stable sort puts `other` first only when it ranks strictly before.
    const bool other_first = plan_detail::ranks_before(other_key, pick_key);
    if (objective != Objective::tco || pick.gpu == other.gpu) {
        return !other_first;
    }
    // Two GPU types: the second in order wins only within the tie tolerance of the first and
    // by the tie rule.
    const Outcome& first = other_first ? other : pick;
    const Outcome& second = other_first ? pick : other;
    const plan_detail::RankKey& first_key = other_first ? other_key : pick_key;
    const plan_detail::RankKey& second_key = other_first ? pick_key : other_key;
    std::size_t winner = 0;  // 0: first, 1: second
    if (!(second.tco_usd - first.tco_usd > plan_detail::tie_tolerance(first.tco_usd)) &&
        plan_detail::wins_tie(second_key, first_key)) {
        winner = 1;
    }
    return (winner == 0) != other_first;
}

std::size_t winner_of(const std::vector<Outcome>& outcomes, Objective objective) {
    // ranks_before compares exact values lexicographically (a strict weak order), so the front of
    // a stable sort by it is the first feasible outcome that none ranks strictly before: one pass,
    // no sort (the Monte Carlo ranks 400 scenarios, the break-evens hundreds more).
    std::size_t first = none;
    plan_detail::RankKey first_key;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].feasible) {
            continue;
        }
        const plan_detail::RankKey key = rank_key_of(objective, outcomes[i]);
        if (first == none || plan_detail::ranks_before(key, first_key)) {
            first = i;
            first_key = key;
        }
    }
    if (first == none || objective != Objective::tco) {
        return first;
    }
    // Under TCO the score is the TCO, so the outcomes within the tie tolerance of the cheapest
    // come first in that order, before every one past it: only they are sorted (stably, as the
    // whole list would be), and the first of each GPU type stands for it.
    const double cheapest = outcomes[first].tco_usd;
    const double tolerance = plan_detail::tie_tolerance(cheapest);
    std::vector<std::pair<std::size_t, plan_detail::RankKey>> tied;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (outcomes[i].feasible && !(outcomes[i].tco_usd - cheapest > tolerance)) {
            tied.emplace_back(i, rank_key_of(objective, outcomes[i]));
        }
    }
    if (tied.empty()) {
        return first;  // never: `first` itself is within the tolerance of its own TCO
    }
    std::stable_sort(tied.begin(), tied.end(),
                     [](const auto& a, const auto& b) { return plan_detail::ranks_before(a.second, b.second); });
    std::vector<std::size_t> seen_gpus;
    std::size_t pick = 0;  // into `tied`; its front is `first`
    for (std::size_t at = 0; at < tied.size(); ++at) {
        const std::size_t index = tied[at].first;
        if (std::find(seen_gpus.begin(), seen_gpus.end(), outcomes[index].gpu) != seen_gpus.end()) {
            continue;
        }
        seen_gpus.push_back(outcomes[index].gpu);
        if (plan_detail::wins_tie(tied[at].second, tied[pick].second)) {
            pick = at;
        }
    }
    return tied[pick].first;
}

RoleUncertainty Analysis::run() {
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
    result.confidence = m_workload.confidence;
    const Member& pick = m_members[m_pick];
    result.speed_phase = pick.speed.phase;
    result.speed_band_fraction = pick.speed.fraction;
    result.speed_band_measured = pick.speed.measured;
    result.price_band_fraction = pick.price_band;
    result.score = score_of(m_objective, pick.base);
    result.score_unit = score_unit();
    sample(result);
    warnings(result);
    sensitivities(result);
    return result;
}

void Analysis::add_members(const std::vector<Candidate>& pool) {
    // Each configuration's member is independent of the others (its capacity search is most of
    // the work): built in parallel, then given their slots in the pool's order.
    std::vector<std::optional<Member>> built(pool.size());
    parallel_for(pool.size(), [&](std::size_t index) { built[index] = member_of(pool[index]); });
    for (std::optional<Member>& member : built) {
        if (!member) {
            continue;
        }
        const Candidate& candidate = *member->candidate;
        member->gpu_slot = slot(m_gpu_slots, candidate.gpu);
        // An input-bound candidate runs as fast as the host feeds it: one error for all of them
        // (the data pipeline's), not its GPU's.
        member->speed_slot = slot(m_speed_slots, candidate.perf.bottleneck.resource == Resource::input_pipeline
                                                     ? std::string("input pipeline")
                                                     : candidate.gpu);
        member->price_slot = slot(m_price_slots, member->price_key);
        member->base.gpu = member->gpu_slot;
        m_members.push_back(std::move(*member));
    }
}

std::optional<Member> Analysis::member_of(const Candidate& candidate) const {
    Member member;
    member.candidate = &candidate;
    member.gpu = m_catalog.find(candidate.gpu);
    if (member.gpu == nullptr) {
        return std::nullopt;
    }
    for (OfferQuote& quote : quotes_for(m_catalog, m_workload, *member.gpu, candidate.acquisition)) {
        if (quote.offer != nullptr && quote.offer->id == candidate.cost.offer.id) {
            member.quote = std::move(quote);
            break;
        }
    }
    if (!member.quote) {
        return std::nullopt;
    }
    member.price_key = fmt::format("{}:{}", candidate.cost.offer.id, to_string(candidate.acquisition));
    member.price_usd = member.quote->price.usd;
    member.price_band = price_band_fraction(member.quote->price.kind);
    member.speed = speed_band(m_workload, m_efficiency, m_plan.calibration, candidate.gpu, candidate.layout);
    member.base = base_outcome(candidate);
    if (candidate.perf.inference) {
        member.spares = candidate.spare_replicas;
        member.serving = candidate.serving_replicas();
        member.replica_gpus = std::max(1, candidate.count / std::max(1, candidate.replicas));
        member.capacity_per_replica =
            candidate.perf.inference->max_requests_per_s_meeting_slo / std::max(1, candidate.layout.data_parallel);
        // The planner sized replicas with perf's search over the whole fleet (the queueing model
        // is not additive); where the candidate's figure per replica gives another count, take
        // the middle of the capacities that give the planner's count, so that the scenario at
        // the estimate is the plan.
        // Replicas filling units bought anyway are beyond the fewest needed: any count from that
        // fewest up to the fleet is the plan.
        const double rate = m_workload.inference.requests_per_s;
        const int fewest = member.serving - candidate.unit_fill_replicas - candidate.margin_replicas;
        const int needed = replicas_for(rate, member.capacity_per_replica);
        if (rate > 0 && (needed > member.serving || needed < fewest)) {
            member.capacity_per_replica = rate / (fewest - 0.5);
        }
    }
    if (candidate.perf.inference && m_workload.inference.requests_per_s > 0) {
        member.configuration = fmt::format("{}/{}/{}/{}", candidate.gpu, candidate.layout.tensor_parallel,
                                           candidate.batch, to_string(candidate.precision));
        member.single_capacity = single_replica_capacity(member, m_workload);
    }
    // Slopes from the cost model itself: re-priced at +10 % price and +10 % time.
    const CostEstimate at_price = estimate_cost(m_workload, *member.gpu, *member.quote, candidate.usage,
                                                member.price_usd * 1.1, CostDetail::figures);
    member.price_slope_usd = at_price.available ? (at_price.tco_usd - candidate.cost.tco_usd) / 0.1 : 0;
    if (candidate.perf.training && candidate.usage.job_seconds > 0) {
        UsageProfile slower = candidate.usage;
        slower.job_seconds *= 1.1;
        const CostEstimate at_time =
            estimate_cost(m_workload, *member.gpu, *member.quote, slower, std::nullopt, CostDetail::figures);
        member.time_slope_usd = at_time.available ? (at_time.tco_usd - candidate.cost.tco_usd) / 0.1 : 0;
    }
    return member;
}

std::size_t Analysis::slot(std::vector<std::string>& slots, const std::string& key) {
    const auto found = std::find(slots.begin(), slots.end(), key);
    if (found != slots.end()) {
        return static_cast<std::size_t>(found - slots.begin());
    }
    slots.push_back(key);
    return slots.size() - 1;
}

std::size_t Analysis::find(const Candidate& candidate) const {
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        if (same_configuration(*m_members[i].candidate, candidate)) {
            return i;
        }
    }
    return none;
}

Outcome Analysis::base_outcome(const Candidate& candidate) {
    Outcome outcome;
    outcome.tco_usd = candidate.cost.tco_usd;
    outcome.usd_per_unit = candidate.cost.usd_per_unit;
    outcome.energy_kwh = candidate.cost.energy_kwh;
    outcome.speed = speed_of(candidate);
    outcome.count = candidate.count;
    outcome.replicas = candidate.replicas;
    const plan_detail::RankKey key = plan_detail::rank_key(candidate);
    outcome.idle_gpus = key.idle_gpus;
    outcome.marketplace = key.marketplace;
    outcome.single_source = key.single_source;
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

std::string Analysis::score_unit() const {
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

bool Analysis::within_budget(double capex_usd, double monthly_usd) const {
    const BudgetSpec& budget = m_workload.budget;
    return (budget.capex_usd <= 0 || capex_usd <= budget.capex_usd) &&
           (budget.monthly_usd <= 0 || monthly_usd <= budget.monthly_usd);
}

// Replicas that carry `rate` at `capacity` req/s each; 0 when none can.
int Analysis::replicas_for(double rate, double capacity) {
    if (capacity <= 0) {
        return 0;
    }
    return std::max(1, static_cast<int>(std::ceil(rate / capacity - 1e-9)));
}

}  // namespace robustness_detail

using namespace robustness_detail;

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
    SpeedBand band{group == "non-llm" ? "non-LLM" : std::string(group), 0, {}};
    if (const auto found = efficiency.speed_bands.find(group); found != efficiency.speed_bands.end()) {
        band.fraction = std::max(1 - found->second.low, found->second.high - 1);
        band.percentiles = found->second;
    }
    return band;
}

SpeedBand speed_band(const Workload& workload, const EfficiencyTable& efficiency, const SpeedCalibration& calibration,
                     std::string_view gpu, const Layout& layout) {
    SpeedBand band = speed_band(workload, efficiency);
    if (const std::optional<SpeedBandFactors> measured =
            measured_speed_band(calibration, gpu, configuration_gpus(workload, layout))) {
        band.fraction = std::max(1 - measured->low, measured->high - 1);
        band.percentiles = *measured;
        band.measured = true;
    }
    return band;
}

double ScenarioRandom::uniform() {
    m_state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = m_state;
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    z ^= z >> 31U;
    return static_cast<double>(z >> 11U) * 0x1.0p-53;
}

double ScenarioRandom::normal() {
    // 1 − uniform() keeps the logarithm finite.
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return radius * std::cos(2.0 * 3.14159265358979323846 * uniform());
}

PercentileBand speed_distribution(const SpeedBandFactors& band) {
    return {band.low, band.median, band.high, true};
}

PercentileBand price_distribution(double band_fraction) {
    return {1 - band_fraction, 1, 1 + band_fraction, true};
}

PercentileBand memory_distribution(const MemoryBreakdown& memory) {
    return {memory.total_low_bytes, memory.total_bytes, memory.total_high_bytes, false};
}

double band_value(const PercentileBand& band, double z) {
    if (band.log_scale) {
        const double median = std::log(band.p50);
        const double spread = z < 0 ? median - std::log(band.p10) : std::log(band.p90) - median;
        return std::exp(median + z * spread / normal_p90);
    }
    const double spread = z < 0 ? band.p50 - band.p10 : band.p90 - band.p50;
    return band.p50 + z * spread / normal_p90;
}

double band_share_below(const PercentileBand& band, double value) {
    double z = 0;
    if (band.log_scale) {
        if (value <= 0) {
            return 0;
        }
        const double offset = std::log(value) - std::log(band.p50);
        const double spread =
            offset < 0 ? std::log(band.p50) - std::log(band.p10) : std::log(band.p90) - std::log(band.p50);
        z = spread > 0 ? offset / spread * normal_p90 : (offset < 0 ? -infinity : infinity);
    } else {
        const double offset = value - band.p50;
        const double spread = offset < 0 ? band.p50 - band.p10 : band.p90 - band.p50;
        z = spread > 0 ? offset / spread * normal_p90 : (offset < 0 ? -infinity : infinity);
    }
    if (value == band.p50) {
        z = 0;
    }
    return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
    // P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
    // function" (2003): rational approximations in the central region and the two tails.
    static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                   1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                   6.680131188771972e+01, -1.328068155288572e+01};
    static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                   -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                   3.754408661907416e+00};
    const double low = 0.02425;
    if (p <= 0) {
        return -infinity;
    }
    if (p >= 1) {
        return infinity;
    }
    if (p < low || p > 1 - low) {
        const double q = std::sqrt(-2 * std::log(p < low ? p : 1 - p));
        const double tail = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        return p < low ? tail : -tail;
    }
    const double q = p - 0.5;
    const double r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

std::vector<Candidate> robustness_pool(const std::vector<const Candidate*>& sorted, std::size_t limit) {
    // Every GPU type's first configuration (what the planner ranks and ties), and the first of
    // each further acquisition up to `limit` of them (what a change of horizon or price brings).
    std::vector<Candidate> pool;
    std::size_t extra = 0;
    for (const Candidate* entry : sorted) {
        const Candidate& candidate = *entry;
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
