#pragma once
// The planner: from a project (one workload per role) to a ranked decision per role and a
// procurement table. Pure: the Report it returns holds everything any renderer prints.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cost/cost.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "memory/memory.hpp"
#include "perf/calibration.hpp"
#include "perf/perf.hpp"
#include "plan/disaggregation.hpp"
#include "plan/fleet.hpp"
#include "plan/mix.hpp"
#include "plan/phases.hpp"
#include "plan/uncertainty.hpp"

namespace gpusel {

// Two TCOs closer than the larger of these are a tie (docs/cost-model.md): the cost model's
// inputs (prices, utilisation, failure rates) are not known to better than a few per cent.
inline constexpr double tie_tolerance_fraction = 0.02;
inline constexpr double tie_tolerance_usd = 50;

// The four classes practitioners use to set priorities.
enum class WorkloadClass { large_training, medium_training, high_concurrency_inference, edge_inference };
std::string_view to_string(WorkloadClass workload_class);         // "large-model training", ...
std::string_view class_priorities(WorkloadClass workload_class);  // "memory capacity first, then ..."

// One evaluated option: GPU × count × layout × precision × acquisition.
struct Candidate {
    std::string gpu;  // catalog id
    std::string gpu_name;
    int count = 1;               // GPUs in total (all replicas)
    int replicas = 1;            // inference: copies of the model, spares included
    int spare_replicas = 0;      // inference: of which kept for redundancy (deployment.redundancy), carrying no load
    int unit_fill_replicas = 0;  // inference: serving replicas beyond the fewest meeting the SLO, on GPUs of
                                 // whole units bought anyway (plan_detail::CandidateEvaluator::fill_units)
    int margin_replicas = 0;     // inference: serving replicas beyond the fewest meeting the SLO at the estimate,
                                 // so that the SLO holds at the slow quantile of the speed band (objective.confidence)
    bool tied = false;           // its cost is within the tie tolerance of the pick's (plan.hpp, tie_tolerance)
    bool single_source = false;  // its GPU type is sold or rented by one provider of the catalog only (a scarce part)
    Layout layout;  // tensor and pipeline parallel per replica; inference: data_parallel = serving replicas
    Precision precision = Precision::bf16;
    bool precision_fallback = false;  // the workload's precision is not native; this one is used
    Acquisition acquisition = Acquisition::buy_new;
    int micro_batch = 0;                                // training
    Checkpointing checkpointing = Checkpointing::none;  // training: the recompute level
    int batch = 0;                                      // inference, per replica
    MemoryEstimate memory;
    PerfEstimate perf;
    CostEstimate cost;
    UsageProfile usage;  // what it was priced for (re-priced by plan/robustness.hpp)
    double score = 0;    // by the objective; lower is better
    std::string reason;  // why it ranks where it does, in numbers

    // Inference: the replicas that carry the load (at least 1).
    int serving_replicas() const { return std::max(1, replicas - spare_replicas); }
};

// A catalog entry that no candidate of survived, and the closest miss.
// The constraint a rejected GPU type missed nearest to feasibility.
enum class RejectionKind {
    excluded,    // the workload's own lists and limits (allow/deny, segment, power, form factor)
    precision,   // the GPU lacks the workload's precision
    memory,      // no layout tried fits in the GPU's usable memory
    deadline,    // training: every count allowed misses training.deadline
    slo,         // serving: every layout misses inference.slo
    max_gpus,    // the load needs more GPUs than constraints.max_gpus
    budget,      // capex or monthly cost over budget
    no_offer,    // nothing to buy or rent that matches the constraints
    confidence,  // meets every constraint at the estimate, in fewer scenarios than objective.confidence
};

// "excluded", "precision", "memory", "deadline", "slo", "max-gpus", "budget", "no-offer",
// "confidence": the
// names of the JSON output's rejected[].kind.
std::string_view to_string(RejectionKind kind);

struct Rejection {
    std::string gpu;
    RejectionKind kind = RejectionKind::excluded;
    std::string limit;     // the field that set the limit ("constraints.max_gpus", "budget.capex_usd", ...)
    double needed = 0;     // what the nearest point needed, in the limit's unit (bytes per GPU, seconds,
                           // GPUs, USD); 0 where nothing was estimated
    double available = 0;  // what the limit allows, same unit; 0 where nothing was estimated
    int count = 0;         // GPUs of the nearest point; 0 where nothing was estimated
    std::string why_not;
    double closeness = 0;  // how far from feasible (rejection_closeness); sorts the list
};

// How far a miss is from feasible, to list the near misses first. Within a kind, needed /
// available orders them; across kinds a budget miss (the ratio) comes before too many GPUs or a
// missed deadline (1 + ratio), a missed SLO (2), a model that does not fit (10 + ratio), a
// missing precision and, last, an exclusion the user chose. The tiers are a presentation order,
// not a measurement.
double rejection_closeness(RejectionKind kind, double needed, double available);

// One constraint that, relaxed alone, yields a pick where nothing met them all: the field, its
// value as given, the least value among the options then ranked, and the pick at that value.
struct Relaxation {
    std::string field;  // e.g. "constraints.max_gpus", "training.deadline", "inference.slo.tpot"
    std::string from;   // as the workload gives it, e.g. "24", "3.0 d", "[amd]"
    std::string to;     // e.g. "28", "3.6 d", "any"
    std::string pick;   // e.g. "28 × H100-SXM5, cloud on-demand, $1,234,567 over 24 months"
};

// A role's pick in a few figures, to compare two plans of it.
struct PickSummary {
    std::string gpu;  // catalog id
    int count = 0;    // GPUs ordered for the role (spares included)
    Acquisition acquisition = Acquisition::buy_new;
    double tco_usd = 0;  // over the workload's horizon
};

// What a role's measured speed changed (make_plan plans the role again without its
// calibration.speed points, and compares the picks). Only where the calibration is applied.
struct CalibrationDelta {
    Role role = Role::training;
    std::string measured_gpu;  // the GPU type the points measured ("A, B" when several)
    // Measured / predicted speed before calibration (times inverted, so that below 1 is slower),
    // the geometric mean over the points: 0.82 is "18 % slower than predicted".
    double measured_vs_predicted = 1;
    std::optional<PickSummary> uncalibrated;  // none: nothing was feasible without the measurement
    std::optional<PickSummary> calibrated;    // none: nothing is feasible with it
    double tco_delta_usd = 0;                 // calibrated − uncalibrated TCO; 0 unless both have a pick
    double horizon_months = 0;                // the workload's, over which both TCOs count

    // The GPU type or the acquisition differs (or one side has no pick).
    bool pick_changed() const {
        if (!uncalibrated || !calibrated) {
            return uncalibrated.has_value() != calibrated.has_value();
        }
        return uncalibrated->gpu != calibrated->gpu || uncalibrated->acquisition != calibrated->acquisition;
    }
    bool count_changed() const { return uncalibrated && calibrated && uncalibrated->count != calibrated->count; }
};

struct RolePlan {
    Role role = Role::training;
    Workload workload;
    std::string question;  // the workload restated in one line
    WorkloadClass workload_class = WorkloadClass::medium_training;
    std::vector<Candidate> ranked;  // feasible, best first (top N)
    std::optional<Candidate> winner;
    std::optional<Candidate> alternative;  // best of a different GPU type
    std::string alternative_why_not;       // when the alternative would win
    std::vector<Rejection> rejected;
    std::vector<std::size_t> pareto;  // indices into `ranked`: time vs cost (training) or latency vs throughput
    std::vector<std::string> advice;  // e.g. "input-bound: fix the pipeline before upgrading the GPU"
    // Only when nothing is feasible: each constraint whose relaxation alone gives a pick.
    std::vector<Relaxation> relaxations;
    std::vector<std::string> relaxations_tried;  // the fields relaxed in turn, e.g. "training.deadline"
    // Training counts layout points (GPU × count × tp × pp × dp × ZeRO × micro-batch × recompute ×
    // precision), inference tensor-parallel layouts; each point is priced for every acquisition
    // afterwards (the fastest point per GPU count: see training_search.hpp).
    std::size_t space = 0;         // points in the search space
    std::size_t evaluated = 0;     // points estimated (space − evaluated were pruned, provably safely)
    std::size_t feasible = 0;      // evaluated points that fit and meet the deadline or SLO
    RoleUncertainty uncertainty;   // bands, robustness of the pick, what flips it (plan/robustness.hpp)
    SpeedCalibration calibration;  // the workload's measured speeds and the stack factor they set
    std::string speed_band_group;  // speed_band_group(workload)
    SpeedBandFactors speed_band;   // its out-of-sample band (data/efficiency.yaml speed_bands)
    // Only where the calibration is applied: the pick against the plan without the measurement.
    std::optional<CalibrationDelta> calibration_delta;
    // Serving roles with inference.load: owned base plus rented peak (plan/fleet.hpp).
    std::optional<FleetPlan> fleet;
    // Serving roles with an input length distribution: the best two-type mix (plan/mix.hpp).
    std::optional<MixPlan> mix;
    // Serving roles with deployment.disaggregated: prefill/decode workers (plan/disaggregation.hpp).
    std::optional<DisaggregatedPlan> disaggregated;
    // What the procurement orders in the pick's place (a chosen prefill/decode split, mixed fleet
    // or owned base + rented peak), in words for the headline: "8× RTX-PRO-6000 + 8× B200, buy
    // new: a mixed fleet (…), TCO $644,097 over 24 months; the best single type is the pick".
    // Empty when the pick itself is ordered. The advice then speaks of the order (its resale, its
    // estimated prices).
    std::string ordered_in_place;
};

// The delta between a role's plan without and with its speed calibration: `calibrated` is the
// plan with it (calibration applied), `uncalibrated` the same workload planned without its
// calibration.speed points.
CalibrationDelta calibration_delta(const RolePlan& calibrated, const RolePlan& uncalibrated);

struct ProcurementLine {
    Role role = Role::training;
    std::string gpu;
    std::string gpu_name;
    int quantity = 0;  // units of the offer, incl. spare units when bought
    int gpus = 0;      // GPUs in those units (incl. idle and spare)
    OfferUse offer;    // what is ordered, from whom, at what price
    Acquisition acquisition = Acquisition::buy_new;
    double unit_price_usd = 0;  // per unit, or per unit-hour when rented
    double total_usd = 0;       // purchase total (0 when rented): quantity × unit_price_usd + host_usd
    double host_usd = 0;        // hosts that cards and baseboards need (in total_usd)
    double resale_usd = 0;      // expected resale at the horizon's end (in tco_usd only when counted)
    bool resale_counted = false;
    double depreciation_usd_per_month = 0;  // straight-line over the asset life (purchases)
    double depreciation_months = 0;         // purchases: the asset life
    double monthly_opex_usd = 0;            // bought: power, operations, failures; rented: rent / horizon
    double rental_extras_usd = 0;           // rented: start-up minutes and data transfer
    double billed_months = 0;               // rented: months billed (reserved: whole terms, may pass the horizon)
    double tco_usd = 0;
    double horizon_months = 0;
    std::string reason;
    std::string alternative;
    std::string alternative_reason;
    Precision precision = Precision::bf16;  // the compute precision the estimate ran at (what deploy launches)
    // Rented lines whose rent moves month by month (a fleet's rented peak, plan/fleet.hpp):
    // [m − 1] = month m's rent, start-ups included; they sum to tco_usd. Empty: the rent is
    // spread evenly over the billed months.
    std::vector<double> rent_usd_by_month;
    // Purchases with deployment.deliver_by (CostEstimate's): weeks to delivery, the weeks past
    // deliver_by and their bridging rent (in tco_usd; the cash flow bills it in the first
    // months, the order line's rent_usd carries it).
    double lead_time_weeks = 0;
    double wait_weeks = 0;
    double wait_usd = 0;
    std::string lead_time_basis;
};

struct PlanOptions {
    std::optional<Objective> objective;  // overrides each workload's
    std::size_t top = 5;                 // ranked candidates kept per role
    // Evaluate every training point with the full estimators and prune nothing: the reference
    // the fast path is tested against (slow; tests only).
    bool reference_search = false;
};

struct PlanReport {
    std::string project;
    std::string objective;  // what ranked the candidates, in words
    std::vector<RolePlan> roles;
    std::vector<ProcurementLine> procurement;
    std::vector<Assumption>
        assumptions;  // defaults applied, across workloads (field prefixed by workload when several)
    double total_capex_usd = 0;
    double total_monthly_opex_usd = 0;
    double total_tco_usd = 0;
    double horizon_months = 0;
    // Projects with phases: one fleet the phases share, against each buying its own
    // (plan/phases.hpp). When chosen, the procurement holds its one line in place of theirs.
    std::optional<SharedFleet> shared_fleet;
};

// One fixed piece of hardware (for `gpusel check`): `count` GPUs of `gpu` acquired as
// `acquisition`, at `unit_price_usd` if given. The best layout at exactly that count is chosen;
// a missed deadline or SLO and the budget do not exclude it (the caller judges them), only not
// fitting does, with the reason in why_not.
struct FixedEvaluation {
    std::optional<Candidate> candidate;
    std::string why_not;
    // When no layout fits: the memory of the one that needs the least per GPU (its `fits` judged
    // with the workload's headroom), so that the caller can show the breakdown.
    std::optional<MemoryEstimate> closest_memory;
    Layout closest_layout;
    // The candidate as ordered still holds at objective.confidence: the margins the planner sizes
    // for (serving capacity and training time at the speed band's slow quantile, memory at the
    // band's quantile) — what a smaller line `check` suggests must meet, as a plan's pick does.
    bool holds_at_confidence = false;
};

// Why the workload's lists and limits exclude `gpu` (constraints.allow / deny / vendor / segment /
// form_factor / max_power_per_device), e.g. "segment datacenter not allowed"; empty when they
// do not. The first reason found.
std::string constraint_exclusion(const Workload& workload, const GpuSpec& gpu);

// `offer`, when given, is the offer the line names; otherwise the cheapest offer of which
// `count` is whole units prices it (none: why_not says the smallest unit there is). `efficiency`
// carries the workload's speed calibration (calibrated_efficiency), fitted once by the caller;
// `calibration`, that calibration, narrows the speed band on the GPU and size it measured as the
// planner does (measured_speed_band).
// `prefer_confident`: among the layouts that meet the target, one that holds at
// objective.confidence first (the shared fleet of plan/phases.hpp sizes for it as the planner
// does); otherwise the objective's best, as `check` judges a proposal at the estimate.
FixedEvaluation evaluate_fixed(const Workload& workload, const Catalog& catalog, const GpuSpec& gpu, int count,
                               Acquisition acquisition, std::optional<double> unit_price_usd, const Offer* offer,
                               const EfficiencyTable& efficiency, const SpeedCalibration* calibration = nullptr,
                               bool prefer_confident = false);

// The procurement line of a role's pick (an empty line when the role has none).
ProcurementLine procurement_line(const RolePlan& plan);

// One line of an order, one unit per column (docs/spec/plan-output.md, "Order lines"): the GPU
// units of a role's pick (spares included), or the hosts those cards or baseboards need, each
// with its own price and price kind. Over a role's lines capex_usd, opex and rent add up to the
// role's TCO: tco_usd = capex_usd + opex_usd_per_month × horizon_months + rent_usd −
// resale_subtracted_usd on every line.
enum class OrderItem { gpus, host };
std::string_view to_string(OrderItem item);  // "gpus" | "host"

struct OrderLine {
    Role role = Role::training;
    OrderItem item = OrderItem::gpus;
    Acquisition acquisition = Acquisition::buy_new;
    std::string id;          // the offer's id, or the host's
    std::string name;        // the unit as the order names it (a rental: the instance type), or the host's name
    std::string provider;    // the offer's provider id; empty on a host line (the catalog names none)
    int quantity_units = 0;  // units of the offer (spares included), or hosts
    int spare_units = 0;
    int gpus_per_unit = 0;  // 0 on a host line
    int gpus = 0;           // GPUs in those units (idle and spare included); 0 on a host line
    double unit_price_usd = 0;
    std::string_view price_per;  // "unit" (bought) or "unit-hour" (rented)
    PriceKind price_kind = PriceKind::estimate;
    std::string price_as_of;
    double capex_usd = 0;                   // bought up front: quantity_units × unit_price_usd; 0 when rented
    double opex_usd_per_month = 0;          // owned: power, operations, failures, averaged over the horizon
    double rent_usd = 0;                    // rented: everything billed (reserved: whole terms), start-up, transfer
    double resale_usd = 0;                  // expected resale of bought GPU units at the horizon (a memo)
    double resale_subtracted_usd = 0;       // resale_usd when the workload counts it, else 0
    double depreciation_usd_per_month = 0;  // capex_usd straight-line over the asset life
    double tco_usd = 0;
    double horizon_months = 0;
};

// The lines of `line`: the GPU units, then the hosts when the units need any.
std::vector<OrderLine> order_lines(const ProcurementLine& line);

// The column sums of every order line of `procurement`: the totals row of each export.
struct OrderLineTotals {
    int gpus = 0;
    double capex_usd = 0;
    double opex_usd_per_month = 0;
    double rent_usd = 0;
    double resale_usd = 0;
    double resale_subtracted_usd = 0;
    double tco_usd = 0;
};
OrderLineTotals order_line_totals(const std::vector<ProcurementLine>& procurement);

// One month of a role's cash flow (docs/cost-model.md, "Cash flow"): month 0 is delivery (the
// capex, hosts and spares included); months 1..N carry the opex (owned) or the rent (rented)
// the cost model spreads evenly over the horizon (a reserved term over its billed months, which
// may pass the horizon; a fractional last month its share; a capacity block in month 0, paid at
// booking; a fleet's rented peak month by month, ProcurementLine::rent_usd_by_month; a purchase
// late for deployment.deliver_by its bridging rent in the first months); the expected resale
// comes back in
// the horizon's last month, subtracted only when counted, else shown as a memo.
struct CashFlowMonth {
    int month = 0;
    double capex_usd = 0;
    double opex_usd = 0;
    double rent_usd = 0;
    double resale_usd = 0;              // subtracted from net_usd (counted resale only)
    double net_usd = 0;                 // capex + opex + rent − resale
    double resale_not_counted_usd = 0;  // memo: expected resale the TCO does not subtract
};

// The months of `line`'s cash flow, 0 to the last billed month; their net_usd sums to tco_usd.
std::vector<CashFlowMonth> cash_flow(const ProcurementLine& line);

PlanReport make_plan(const Project& project, const Catalog& catalog, const EfficiencyTable& efficiency,
                     const PlanOptions& options = {});

}  // namespace gpusel
