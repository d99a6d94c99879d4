#pragma once
// `gpusel check`: the CI gate for purchase proposals. A proposal names hardware per role; the
// check says whether each line holds up against its workload and the proposal's policy, as
// findings with a severity, a stable rule id, the numbers behind it, the position of the
// proposal field it concerns and a suggested fix.
//
// Two stages, so that the judgement can be tested without the estimators:
//  - assess_proposal() runs the planner for each hardware line (evaluate_fixed at the proposed
//    count and at other counts, make_plan for the cheapest feasible alternative);
//  - judge_proposal() is a pure function from those assessments, the proposal and its policy
//    to a CheckReport.
// Renderers turn a CheckReport into text, JSON (format 1, ../docs/ci.md), GitHub workflow
// commands or JUnit XML, and never recompute.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "catalog/catalog.hpp"
#include "inputs/workload.hpp"
#include "plan/plan.hpp"

namespace gpusel {

enum class FindingSeverity { error, warning, note };
std::string_view to_string(FindingSeverity severity);  // "error", "warning", "note"

// Rule ids: stable, kebab-case. CI configurations, tests and docs/ci.md refer to them.
namespace check_rule {
inline constexpr std::string_view unknown_role = "unknown-role";        // hardware for a role without workload
inline constexpr std::string_view missing_role = "missing-role";        // workload without hardware
inline constexpr std::string_view duplicate_role = "duplicate-role";    // two hardware lines for one role
inline constexpr std::string_view price_missing = "price-missing";      // no price to evaluate the line with
inline constexpr std::string_view not_purchasable = "not-purchasable";  // the count is not whole units of a real offer
inline constexpr std::string_view not_evaluable = "not-evaluable";      // the planner gave no estimate (reason given)
inline constexpr std::string_view constraint_violated = "constraint-violated";  // the workload's constraints exclude it
inline constexpr std::string_view does_not_fit = "does-not-fit";
inline constexpr std::string_view headroom_below_policy = "headroom-below-policy";
inline constexpr std::string_view precision_not_native = "precision-not-native";
inline constexpr std::string_view deadline_missed = "deadline-missed";
inline constexpr std::string_view slo_missed = "slo-missed";
inline constexpr std::string_view over_budget = "over-budget";
inline constexpr std::string_view overspend = "overspend";
inline constexpr std::string_view oversized = "oversized";
inline constexpr std::string_view acquisition_mismatch = "acquisition-mismatch";
inline constexpr std::string_view price_far_from_catalog = "price-far-from-catalog";
inline constexpr std::string_view layout = "layout";
}  // namespace check_rule

// Every rule id, in the order reports list them.
const std::vector<std::string_view>& check_rules();

// Thresholds of the rules that are not policy settings (sources in docs/ci.md).
inline constexpr double quote_low_ratio = 0.5;   // a quote below half the catalog price
inline constexpr double quote_high_ratio = 2.0;  // or above twice it: typo or stale quote
inline constexpr double rent_below_months =
    6.0;  // buying for a shorter horizon: rent instead (docs/reference/formulas.md)

// One number or word behind a finding. `key` is snake_case and carries the unit of a number
// (`_bytes`, `_s`, `_usd`, `_usd_per_hour`, `_fraction`, `_months`, `_per_s`, `_flops_per_s`,
// `_ratio`, `_watts`; none for counts).
struct EvidenceItem {
    std::string key;
    std::optional<double> number;  // finite when set
    std::string text;              // used when number is empty
};

struct Finding {
    FindingSeverity severity = FindingSeverity::error;
    std::string rule;     // a check_rule id
    std::string role;     // "development" | "training" | "inference"
    std::string field;    // the proposal field it concerns, e.g. "hardware[0].count"
    Position position;    // of that field in the proposal file; line 0 = no position
    std::string message;  // one sentence with the key numbers, no trailing period
    std::vector<EvidenceItem> evidence;
    std::string fix;  // what to change, with the number to change it to when known
};

// A rule that was not evaluated for a role, and why (JUnit reports it as skipped).
struct SkippedCheck {
    std::string role;
    std::string rule;
    std::string reason;
};

struct CheckReport {
    std::string proposal;  // the proposal's name
    std::string file;      // the proposal file, as given on the command line
    ProposalPolicy policy;
    std::vector<std::string> roles;    // every role checked, workloads' roles first
    std::vector<std::string> summary;  // one line per hardware line: what was evaluated, in numbers
    std::vector<Finding> findings;     // errors, then warnings, then notes; file order within each
    std::vector<SkippedCheck> skipped;
    CurrencySpec currency;  // the proposal's workloads': what the renderers print money in

    std::size_t count(FindingSeverity severity) const;
    bool passed() const { return count(FindingSeverity::error) == 0; }
};

// Why a hardware line has no evaluation at its count.
enum class Obstacle {
    none,
    memory,           // it does not fit, even with the layout that needs the least memory
    precision,        // the GPU runs neither the workload's precision nor a wider fallback
    price,            // no offer to acquire the GPU this way
    not_purchasable,  // the count is not whole units of any offer (1 × GB200: racks of 72)
    spot_serving,     // spot capacity for an always-on service
    layout,           // count is not a multiple of the tensor × pipeline parallel the workload fixes
    other,            // anything else; `why_not` says what
};

// What the estimators and the planner say about one hardware line. Built by
// assess_proposal(); tests build it by hand.
struct HardwareAssessment {
    std::size_t line = 0;                     // index into Proposal::hardware
    std::optional<std::size_t> workload;      // index into Proposal::project.workloads (none: no workload has the role)
    GpuSpec gpu;                              // the catalog entry of the line's GPU
    std::string excluded_by;                  // why the workload's constraints exclude the GPU ("" = they do not)
    bool offers_available = false;            // an offer acquires the GPU the line's way
    bool whole_units = false;                 // the line's count is whole units of one of them
    int smallest_unit_gpus = 0;               // GPUs in the smallest such unit (0: none)
    std::string smallest_unit;                // that unit, in words, for the fix
    std::optional<PricePoint> catalog_price;  // the catalog's price per unit of the offer the line's units are of
    std::string catalog_offer;                // that offer's id
    // The line at its count, acquisition and quote, with the layout that suits it best. Present
    // when it fits the GPUs at all; `meets_headroom` says whether it leaves the policy's share free.
    std::optional<Candidate> proposed;
    bool meets_headroom = true;
    Obstacle obstacle = Obstacle::none;          // when `proposed` is absent
    std::string why_not;                         // the planner's reason, when `proposed` is absent
    std::optional<MemoryEstimate> closest_miss;  // Obstacle::memory: the layout needing the least memory
    Layout closest_layout;
    int max_count_searched = 0;  // the largest count tried for the fixes below
    // Same GPU type, acquisition and quote at other counts:
    std::optional<Candidate> fewest_meeting_all;  // fewer GPUs than proposed meeting every constraint
    std::optional<Candidate> fewest_fitting;  // more GPUs than proposed: the fewest that fit with the policy's headroom
    std::optional<Candidate> fewest_meeting_target;  // more GPUs: the fewest that also meet the deadline / SLO
    // The same GPUs and count, acquired the other way (for acquisition-mismatch):
    std::optional<Candidate> same_count_on_demand;  // when the line buys
    std::optional<Candidate> same_count_bought;     // when the line rents (bought new)
    // The planner's lowest-TCO candidate meeting every constraint, any GPU in the catalog.
    std::optional<Candidate> cheapest_feasible;
};

// True when `candidate` meets every constraint of `workload` under `policy` that depends on the
// estimate: fits with the policy's headroom, native precision, deadline or SLO met, count within
// constraints.max_gpus, within the capex and monthly budget. (The GPU's own exclusion by the
// workload's lists is constraint_exclusion(), plan.hpp.)
bool meets_every_constraint(const Workload& workload, const ProposalPolicy& policy, const Candidate& candidate);

// The precision the planner runs `workload` in on `gpu`: its own when native, else the first of
// bf16, fp16, fp32 the GPU runs natively with at least the same element size (how bf16 recipes
// run on Volta and Turing: fp16 with loss scaling); none when there is no such format.
std::optional<Precision> runnable_precision(const Workload& workload, const GpuSpec& gpu);

// Runs the planner for every hardware line whose role has a workload. `catalog` must hold
// every GPU the proposal names (the loader checks that).
std::vector<HardwareAssessment> assess_proposal(const Proposal& proposal, const Catalog& catalog,
                                                const EfficiencyTable& efficiency);

// The pure judgement: findings from the assessments (one per hardware line, any order).
CheckReport judge_proposal(const Proposal& proposal, const std::vector<HardwareAssessment>& assessments);

// The renderers of a CheckReport are in report/check_render.hpp.

}  // namespace gpusel
