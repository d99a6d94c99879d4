#pragma once
// The robustness analysis of a role's pick (plan/robustness.hpp), shared by its files and by
// nothing else: robustness.cpp (the pool of configurations, each priced and timed as the
// planner left it, and the planner's ranking rule over them), robustness_sampling.cpp (the
// seeded Monte Carlo over the speed, price and memory bands: p_best, p_feasible, bands, ties,
// warnings) and robustness_break_even.cpp (exact re-pricing with one input moved: break-evens
// and the tornado).

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cost/offer_selection.hpp"
#include "plan/robustness.hpp"

namespace gpusel::robustness_detail {

inline constexpr double infinity = std::numeric_limits<double>::infinity();
inline constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

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
    // The tie rule's terms (plan_detail::RankKey): GPUs ordered beyond those used stay as planned.
    int idle_gpus = 0;
    bool marketplace = false;
    bool single_source = false;
};

// The objective's score of an outcome: smaller is better.
double score_of(Objective objective, const Outcome& outcome);

// The planner's rule (ranking.cpp: sort_by_score, order_ties; planner.cpp: one row per GPU type),
// mirrored over the light Outcome of a sampled scenario: configurations by score, then TCO, then
// fewer GPUs; the first of each GPU type stands for it; under the TCO objective those within
// the tie tolerance of the cheapest go to the fastest, then the fewest GPUs. `none` when
// nothing is feasible.
std::size_t winner_of(const std::vector<Outcome>& outcomes, Objective objective);
// winner_of({pick, other}, objective) == 0, without its lists (the Monte Carlo asks it of every
// ranked candidate in every scenario).
bool pick_wins_pair(const Outcome& pick, const Outcome& other, Objective objective);

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
    double usable_bytes = infinity;   // memory a GPU may use (set for ranked candidates)
    double single_capacity = 0;       // one replica's, as the perf model gives it (see serving_replicas_under)
    std::string configuration;        // GPU, tensor parallel, batch and precision: its latency cache's key
};

// One input moved: the workload as changed, and factors the workload does not hold.
struct Scenario {
    Workload workload;
    std::string price_key;
    double price_factor = 1;
    double dataset_factor = 1;
    bool slo_changed = false;
};

// The analysis of one role's pick over the pool of configurations (analyse_uncertainty).
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
        add_members(pool);
    }

    RoleUncertainty run();

private:
    // robustness.cpp
    // The pool's members, in its order; a configuration whose GPU or offer is unknown is left out.
    void add_members(const std::vector<Candidate>& pool);
    std::optional<Member> member_of(const Candidate& candidate) const;
    static std::size_t slot(std::vector<std::string>& slots, const std::string& key);
    std::size_t find(const Candidate& candidate) const;
    static Outcome base_outcome(const Candidate& candidate);
    std::string score_unit() const;
    bool within_budget(double capex_usd, double monthly_usd) const;
    static int replicas_for(double rate, double capacity);

    // robustness_sampling.cpp
    Outcome sampled(const Member& member, double speed, double price) const;
    bool holds(const Member& member, const Candidate& ranked, double speed, double price, double memory_z) const;
    static double speed_factor(const Member& member, double z);
    void sample(RoleUncertainty& result);
    static double member_time_factor(const Member& member, const Outcome& outcome);
    void warnings(RoleUncertainty& result) const;

    // robustness_break_even.cpp
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
    // One replica's P99 latencies at one load (req/s), as the perf model gives them; `usable`
    // false where the replica is unstable at that load or its batch does not fit.
    struct LoadLatency {
        bool usable = false;
        double ttft_s = 0;
        std::optional<double> tpot_s;
        double e2e_s = 0;
        bool meets(const SloSpec& slo) const;
    };
    double single_replica_capacity(const Member& member, const Workload& workload) const;
    const LoadLatency& single_replica_latency(const Member& member, double load) const;
    int serving_replicas_under(const Member& member, const Scenario& scenario) const;
    Outcome exact(const Member& member, const Scenario& scenario) const;
    std::size_t winner_under(const Scenario& scenario) const;
    std::vector<Input> inputs() const;
    void price_inputs(std::vector<Input>& list) const;
    void training_inputs(std::vector<Input>& list) const;
    void inference_inputs(std::vector<Input>& list) const;
    Scenario scenario_at(const Input& input, double value) const;
    std::optional<Sensitivity> break_even(const Input& input, double bound) const;
    void sensitivities(RoleUncertainty& result);

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
    std::vector<Outcome> m_given;  // each configuration re-priced at the inputs as given
    // single_replica_latency's results by configuration (GPU, tensor parallel, batch, precision)
    // and load: the SLO break-evens probe the same loads at every SLO value they try.
    // The break-evens run in parallel (sensitivities): m_latency_mutex guards the cache.
    mutable std::map<std::string, std::map<double, LoadLatency>> m_latency_cache;
    mutable std::mutex m_latency_mutex;
};

}  // namespace gpusel::robustness_detail
