#pragma once
// The planner's parts, shared by the files of src/plan/ and by nothing else:
//  - candidates.cpp: turning one GPU type into priced candidates under a CandidatePolicy;
//  - ranking.cpp:    ordering candidates by the objective, ties, the Pareto front;
//  - explain.cpp:    every sentence the planner writes (questions, reasons, misses, advice);
//  - planner.cpp:    the catalog-wide ranking of `make_plan`;
//  - fixed.cpp:      the one fixed line that `gpusel check` evaluates;
//  - procurement.cpp: the order line of a role's pick.

#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/money.hpp"
#include "plan/plan.hpp"
#include "plan/robustness.hpp"
#include "search/training_search.hpp"

namespace gpusel::plan_detail {

// The workload's currency (deployment.currency): the planner's sentences print their USD amounts
// in it (explain.cpp).
Money money_in(const Workload& workload);

inline constexpr double infinity = std::numeric_limits<double>::infinity();

// planner.cpp: one role over the whole catalog (make_plan's unit of work), the `top` ranked.
RolePlan plan_role(const Workload& workload, const Catalog& catalog, const EfficiencyTable& uncalibrated,
                   Objective objective, std::size_t top, bool reference);

// phases.cpp: the cheapest fleet of one GPU type, bought, that every phase of `phases` runs on
// in turn (each role's pick on that type, the busiest month's sum in whole units), against the
// phases' own picks; none when fewer than two phases or a phase's role has no pick. When the
// fleet is chosen, `line` receives its procurement line (in place of the phases' own).
std::optional<SharedFleet> plan_shared_fleet(const std::vector<ProjectPhase>& phases,
                                             const std::vector<RolePlan>& roles, const Catalog& catalog,
                                             const EfficiencyTable& efficiency, std::optional<ProcurementLine>& line);

// relaxation.cpp: for a role where nothing is feasible, each constraint the workload sets that,
// relaxed alone, gives a pick — with the least value among the options then ranked (GPU count,
// deadline, budget, SLO target) or "any" (GPU filters) — in the order tried: max_gpus, deadline,
// budget, SLO targets, GPU filters.
// `tried` receives every field relaxed, whether or not it gave a pick.
std::vector<Relaxation> find_relaxations(const Workload& workload, const Catalog& catalog,
                                         const EfficiencyTable& efficiency, Objective objective, bool reference,
                                         std::vector<std::string>& tried);

// The closest a GPU type came to being feasible, and why it was not: `rejection.closeness` is
// infinite until a miss is noted; `gpu` is left to the caller.
struct Miss {
    Rejection rejection = initial();
    static Rejection initial() {
        Rejection none;
        none.kind = RejectionKind::no_offer;
        none.closeness = infinity;
        return none;
    }
};
// Keeps the nearer of the two misses (rejection_closeness of `rejection`'s kind and figures).
void note_miss(Miss& miss, Rejection rejection);
// A miss with no figures behind it (an offer that cannot be had): kept only when none is noted.
void note_reason(Miss& miss, std::string why_not);

// ---------------------------------------------------------------------------------------
// Filters that need no estimate (candidates.cpp)

// Why `gpu` is excluded by the workload's lists and limits; empty when it is not.
std::string static_exclusion(const Workload& workload, const GpuSpec& gpu);
// The acquisitions the workload allows, in the order they are priced.
std::vector<Acquisition> acquisitions_for(const Workload& workload);

// What a candidate may be. `make_plan` searches GPU counts, prices every allowed acquisition
// and rejects what breaks the budget or SLO; `gpusel check` evaluates one proposal line at its
// count and acquisition and judges the budget and SLO itself.
struct CandidatePolicy {
    std::optional<int> exact_count;           // GPUs per seat of a proposal line; none = search the counts
    std::vector<Acquisition> acquisitions;    // priced, in order
    std::optional<double> unit_price_usd;     // a proposal's price instead of the offer's
    const Offer* offer = nullptr;             // the offer a proposal line names; none = every offer allowed
    bool enforce_budget = true;               // over-budget options are rejected here
    bool require_slo = true;                  // options that miss the SLO are rejected here
    bool record_closest_memory_miss = false;  // remember the layout that came closest to fitting
    // An exact count sized as the planner sizes its picks (the micro-batch whose memory fits at
    // the band's confidence quantile); false: judged at the estimate, as `check` does.
    bool size_for_confidence = false;
    // Only the candidates' sizes and prices are read, not their capacities (the mixed fleet's
    // part sizings): the estimates after the first replica's ask only whether the fleet carries
    // the load at the speed band's slow end (PerfQuery::capacity_needed_rps), the question
    // holds_at_confidence asks of them, so a candidate's max_requests_per_s_meeting_slo is on
    // the same side of that threshold as the full figure, not the figure.
    bool sizing_only = false;

    static CandidatePolicy search(const Workload& workload);
    static CandidatePolicy fixed_line(int count, Acquisition acquisition, std::optional<double> unit_price_usd,
                                      const Offer* offer);
};

// The layout that came closest to fitting when none did (a fixed line shows its breakdown).
struct MemoryMiss {
    MemoryQuery query;
    double total_bytes = 0;
};

// Turns layouts of one GPU type into priced candidates, one per acquisition and offer. Holds
// per-GPU bookkeeping (offer exclusions, the closest memory miss, reference rents); call
// `begin_gpu` before each GPU type.
class CandidateEvaluator {
public:
    // `calibration`: the workload's speed calibration, whose measured GPU and size get the
    // measurement's narrower band (speed_band); none: every candidate the group's band.
    CandidateEvaluator(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
                       CandidatePolicy policy, const SpeedCalibration* calibration = nullptr);

    void begin_gpu();
    // The planner's confidence margins, judged for a candidate as given (FixedEvaluation).
    bool holds_at_confidence(const GpuSpec& gpu, const Candidate& candidate) const;
    // Prices the fastest point of each GPU count the search found; the search's nearest miss
    // becomes `miss` when none is left.
    void evaluate_training(const GpuSpec& gpu, const TrainingSearchResult& search, std::vector<Candidate>& out,
                           Miss& miss);
    // Every tensor-parallel layout of one precision: fit, batch, replicas for the load, SLO, price.
    void evaluate_inference(const GpuSpec& gpu, const PrecisionChoice& precision, std::vector<Candidate>& out,
                            Miss& miss, std::size_t& evaluated);
    // Why no offer priced a GPU: the first exclusion the constraints made, or that none exists.
    std::string no_offer_reason(const GpuSpec& gpu, int gpus) const;

    std::size_t feasible() const { return m_feasible; }
    // The speed factor at the (1 − objective.confidence) quantile of the band of `gpu` at
    // `layout`: what the planner's margin replicas survive (plan/fleet.cpp sizes hours with it).
    double slow_speed(const GpuSpec& gpu, const Layout& layout) const { return speed_at(gpu, layout).slow; }
    const std::optional<MemoryMiss>& closest_memory_miss() const { return m_closest_miss; }

private:
    struct Replicas {
        int serving = 0;  // carry the load
        int spares = 0;   // deployment.redundancy
    };
    std::vector<OfferQuote> quotes(const GpuSpec& gpu, Acquisition acquisition, int gpus, int together);
    void price(const GpuSpec& gpu, const Candidate& candidate, UsageProfile usage, std::vector<Candidate>& out,
               Miss& miss);
    double reference_rent(const GpuSpec& gpu);
    void note_memory_miss(const MemoryQuery& query, double total_bytes);
    UsageProfile training_usage(const TrainingPerf& perf, int gpus) const;
    // `requests_per_s`: the load served (served_requests_per_s).
    UsageProfile inference_usage(int gpus, int gpus_per_replica, double requests_per_s) const;
    // The requests/s a serving candidate serves: the workload's rate, or what its closed-loop
    // clients drive on it (inference.concurrency: perf's rate at those clients).
    double served_requests_per_s(const Candidate& candidate) const;
    // "A whole unit bought is used": a serving candidate priced in units with room for
    // `extra_replicas` more replicas of `replica_gpus` GPUs gets them as serving replicas (perf
    // re-estimated over the larger fleet), unless the line's count is fixed or max_gpus caps it.
    // True when it changed `candidate`.
    bool fill_units(const GpuSpec& gpu, int extra_replicas, int replica_gpus, Candidate& candidate) const;
    // One replica at the workload's batch, or at the largest automatic batch that fits next to
    // the weights and KV cache (`perf_query.batch` is set to it); none without an estimate.
    // `query` and `perf_query` carry the candidate's precision.
    std::optional<PerfEstimate> single_replica(const GpuSpec& gpu, const MemoryQuery& query, double usable_bytes,
                                               PerfQuery& perf_query) const;
    // Replicas for the offered load, from one replica's estimate `single`: the fewest that meet the
    // SLO by perf's queueing model over the whole fleet (InferencePerf::replicas_needed), plus the
    // spares (a fixed line: its count); none, with the miss noted, when they need more than
    // `max_gpus`.
    int confident_batch(const GpuSpec& gpu, const MemoryQuery& query, double usable_bytes, int batch) const;
    PerfEstimate serving_estimate(const GpuSpec& gpu, const PerfQuery& query, bool& decided) const;
    int margin_replicas(const GpuSpec& gpu, PerfQuery& query, PerfEstimate& perf, bool decided, int serving, int spares,
                        int per_replica, int max_gpus, Miss& miss) const;
    int confident_micro_batch(const GpuSpec& gpu, const TrainingChoice& choice, Miss& miss) const;
    bool meets_deadline_confidently(const GpuSpec& gpu, const TrainingPerf& training, const Layout& layout,
                                    Miss& miss) const;
    std::optional<Replicas> replicas_for(const InferencePerf& single, int gpus_per_replica, int max_gpus,
                                         Miss& miss) const;
    // estimate_perf of this evaluator's workload and efficiency, remembered by GPU and query.
    const PerfEstimate& estimate(const GpuSpec& gpu, const PerfQuery& query) const;

    const Workload& m_workload;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    CandidatePolicy m_policy;
    // The speed band as a distribution, and its (1 − objective.confidence) quantile: the slow
    // end every decision must survive (robustness.hpp). One per configuration class: the group's
    // band, or the measurement's where the calibration measured the GPU at that size.
    struct SpeedQuantile {
        PercentileBand band;
        double slow = 1;
    };
    SpeedQuantile quantile_of(const SpeedBand& band) const;
    // The band of `gpu` at `layout` (configuration_gpus decides the size).
    const SpeedQuantile& speed_at(const GpuSpec& gpu, const Layout& layout) const;
    const SpeedCalibration* m_calibration = nullptr;
    SpeedQuantile m_speed;     // the group's band
    SpeedQuantile m_measured;  // the measurement's noise
    std::size_t m_feasible = 0;
    std::optional<MemoryMiss> m_closest_miss;
    std::vector<std::string> m_offer_exclusions;  // of the GPU being priced
    std::map<std::string, bool> m_single_source;  // by GPU id: sold or rented by one provider only
    bool single_source(const GpuSpec& gpu);
    bool m_units_missed = false;  // exact count: offers exist, but not in whole units of it
    std::map<std::string, double> m_reference_rent;
    // quotes_for's answer by GPU id and acquisition, with the exclusions it gave: the same for
    // every count and layout priced (thousands per plan).
    struct OfferQuotes {
        std::vector<OfferQuote> found;
        std::vector<std::string> excluded;
    };
    std::map<std::pair<std::string, Acquisition>, OfferQuotes> m_quotes;
    // Estimates already made (estimate_perf is a pure function of the workload, GPU, query and
    // efficiency table, the first and last fixed here): the pricing of every offer with room in
    // its unit asks for the same larger fleet (fill_units), the margin search for counts it
    // tried. An evaluator is used by one thread.
    using EstimateKey =
        std::tuple<const GpuSpec*, int, int, int, int, int, Sharding, Offload, int, int, ServingStack, std::string,
                   std::optional<Precision>, std::optional<Checkpointing>, bool, double, double>;
    mutable std::map<EstimateKey, PerfEstimate> m_estimates;
};

// The memory query that reproduces a candidate's estimate: its layout, batch, precision and
// recompute level.
MemoryQuery memory_query(const Candidate& candidate);

// fleet.cpp: a serving role with inference.load, its pick split into an owned base and
// replicas rented on demand hour by hour; none without a pick, a load or an on-demand rental.
std::optional<FleetPlan> fleet_for(const RolePlan& plan, const Catalog& catalog, const EfficiencyTable& efficiency);

// ---------------------------------------------------------------------------------------
// Ranking (ranking.cpp)

double objective_score(Objective objective, const Candidate& candidate);
// The candidate's speed in its own unit (tokens/s, 1/latency): higher is faster.
double speed(const Candidate& candidate);
// The winner rule, once, for the planner's ranking and the robustness scenarios alike: what it
// reads of an option, the order by score, and the tie rule under the TCO objective.
struct RankKey {
    double score = 0;  // objective_score, smaller is better
    double tco_usd = 0;
    int count = 0;               // GPUs used
    double speed = 0;            // speed(), larger is faster
    int ordered_gpus = 0;        // GPUs bought or rented: whole units, idle ones included
    int idle_gpus = 0;           // of those, the ones the configuration leaves unused
    bool marketplace = false;    // rented from a marketplace host
    bool single_source = false;  // Candidate::single_source
};
RankKey rank_key(const Candidate& candidate);
// Score first, then TCO; at the same score and TCO exactly, wins_tie.
bool ranks_before(const RankKey& a, const RankKey& b);
// TCO within this many USD of the cheapest is a tie: max(tie_tolerance_usd, tie_tolerance_fraction
// × the cheapest TCO) (plan.hpp).
double tie_tolerance(double cheapest_tco_usd);
// Among tied options, "just right" (docs/cost-model.md, "Ties"): fewer GPUs ordered, then fewer
// of them idle, then a hyperscaler or neocloud over a marketplace host, then a part several
// providers offer over a single-source one, then the cheaper, then the faster, then fewer GPUs
// used.
bool wins_tie(const RankKey& a, const RankKey& b);
// The rule of wins_tie that separates a from b: "fewer GPUs", "fewer idle GPUs", "not a
// marketplace host", "a part several providers offer", "cheaper", "faster", "fewer GPUs used";
// empty when none does.
std::string tie_rule(const RankKey& a, const RankKey& b);
// Sorts by ranks_before (stable), each candidate's key computed once.
void sort_by_score(std::vector<Candidate*>& candidates);
// Candidates whose cost is within the tie tolerance of the best are tied with it: among them
// the faster ranks first, then the one with fewer devices (docs/cost-model.md).
void order_ties(std::vector<Candidate>& ranked, Objective objective);
// Indices of the candidates no other beats on both time (or latency) and cost.
std::vector<std::size_t> pareto_indices(const std::vector<Candidate>& ranked);

// ---------------------------------------------------------------------------------------
// Sentences (explain.cpp)

WorkloadClass classify(const Workload& workload);
std::string question(const Workload& workload);
std::string objective_words(Objective objective);
std::string winner_reason(const Workload& workload, const Candidate& candidate, Objective objective);
std::string alternative_condition(const Workload& workload, const Candidate& winner, const Candidate& alternative);
// The target a serving estimate misses, with the percentile (or unloaded) latency against its
// limit; kind slo, count left to the caller.
Rejection slo_miss(const Workload& workload, const InferencePerf& perf, const Layout& replica);
std::vector<std::string> advice(const Workload& workload, const RolePlan& plan);
// The advice that names estimated prices among `offers` ("`what` rests on an estimated price (~):
// …", else an estimated host's), empty when every price is published. `what`: "the pick", "the order".
std::string estimated_price_advice(std::string_view what, const std::vector<const OfferUse*>& offers);
// The advice on the expected resale of purchases (`counted`: in `tco_usd`); empty when none.
std::string resale_advice(const Money& money, double resale_usd, bool counted, double tco_usd);
// The lines that follow a plan with no pick: each relaxation, or that none alone gives one.
std::vector<std::string> relaxation_advice(const RolePlan& plan);

}  // namespace gpusel::plan_detail
