#pragma once
// Wording and cell formats shared by the plan renderers (terminal, Markdown, XLSX). Private to
// src/report/. Everything here formats a value the planner computed; nothing is derived.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/money.hpp"
#include "plan/plan.hpp"

namespace gpusel::plan_text {

// The money format of a currency (deployment.currency), and of a report's (its workloads share
// one: the project loader refuses two): every amount below is given in USD and printed in it.
Money money_of(const CurrencySpec& currency);
Money money_of(const PlanReport& report);

bool is_rental(Acquisition acquisition);

// "buy new", "buy used", "cloud on-demand", "cloud spot", "cloud reserved 1y" (cost.hpp's describe).
std::string_view acquisition_words(Acquisition acquisition);
// The same in at most 10 columns, for tables: "buy new", "cloud od", "reserved".
std::string_view acquisition_short(Acquisition acquisition);

// "compute", "memory bw", "memory cap", "interconnect", "host link", "input".
std::string_view resource_words(Resource resource);
// "compute 71 %".
std::string bottleneck_cell(const Bottleneck& bottleneck);

// "41.2/80 GB": total per GPU against capacity.
std::string memory_cell(const MemoryEstimate& memory);

// The throughput shown for a role: generated tokens, requests, training tokens or samples.
struct SpeedMetric {
    std::string header;  // "speed"
    std::string unit;    // "tok/s", "req/s", "samples/s"
};
SpeedMetric speed_metric(const RolePlan& plan);
std::optional<double> speed_value(const SpeedMetric& metric, const Candidate& candidate);  // per second
std::string speed_cell(const SpeedMetric& metric, const Candidate& candidate);             // "11.8k tok/s"

// The time or latency shown for a role: time to train (or step time without a dataset) for
// training; for inference the P-percentile latency its SLO names (TPOT, TTFT, end-to-end).
struct TimeMetric {
    enum class Kind { time_to_train, step_time, p99_ttft, p99_tpot, p99_e2e };
    Kind kind = Kind::time_to_train;
    std::string header;  // "time", "step", "P99 TPOT" (the SLO's percentile)
};
TimeMetric time_metric(const RolePlan& plan);
std::optional<double> time_value(const TimeMetric& metric, const Candidate& candidate);  // seconds
std::string time_cell(const TimeMetric& metric, const Candidate& candidate);             // "1.96 d"

// "$55.04/h" when rented (price per unit-hour), "$317,000" when bought (per unit); "~" first
// when the price is an estimate.
std::string unit_price_cell(const Money& money, Acquisition acquisition, double unit_price_usd, bool estimated = false);
// The order behind a procurement line or pick: "2 × p5.48xlarge (16 × H100-SXM5), AWS
// us-east-1, on-demand $55.04/h (list 2026-11)", with the host a card needs, idle GPUs and
// spares.
std::string order_note(const Money& money, const OfferUse& offer, int spare_units);
// The columns of one order line in the finance exports, in order: the CSV's header and the XLSX
// procurement sheet's (docs/spec/plan-output.md).
inline constexpr const char* order_line_columns[] = {"role",
                                                     "item",
                                                     "gpu",
                                                     "gpu_name",
                                                     "acquisition",
                                                     "offer",
                                                     "offer_name",
                                                     "provider",
                                                     "quantity_units",
                                                     "spare_units",
                                                     "gpus_per_unit",
                                                     "gpus",
                                                     "unit_price_usd",
                                                     "price_per",
                                                     "price_kind",
                                                     "price_as_of",
                                                     "capex_usd",
                                                     "opex_usd_per_month",
                                                     "rent_usd",
                                                     "resale_usd",
                                                     "resale_subtracted_usd",
                                                     "tco_usd",
                                                     "horizon_months",
                                                     "depreciation_usd_per_month",
                                                     "precision",
                                                     "reason",
                                                     "alternative",
                                                     "alternative_reason"};

// The footnotes of a procurement table, generated from the order lines present (never fixed
// text): what quantities count, what each unit price is per (only the kinds of price present),
// which prices are estimates, what the TCO adds up, and whether the expected resale is subtracted
// (only where something is bought). Plain sentences; each renderer escapes them.
std::vector<std::string> procurement_footnotes(const PlanReport& report);
// "—" for a rental (nothing bought), else "$6,400".
std::string purchase_total_cell(const Money& money, Acquisition acquisition, double total_usd);
// "$1.97" below $100, "$1,234" above; "—" when not finite.
std::string usd_per_unit_cell(const Money& money, double usd);

// "24" or "18.5" (months).
std::string months_text(double months);
// The horizon all procurement lines share, if they share one.
std::optional<double> common_horizon(const PlanReport& report);

// "4× A100-80GB-SXM4, cloud on-demand".
std::string candidate_summary(const Candidate& candidate);

// What a role's measurement changed, in one sentence: "measured 18 % slower than predicted on
// A100-80GB-PCIE → 6 GPUs, not 5; +$11,400 over 24 months" (the count alone changed), "→ 7× L40S,
// cloud on-demand, not 6× RTX-PRO-6000, buy new; ..." (the GPU type or acquisition changed), or
// "→ no change to the pick (6× RTX-PRO-6000, buy new)".
std::string calibration_delta_text(const Money& money, const CalibrationDelta& delta);
// The "Disaggregated serving" lines of a role (plan/disaggregation.hpp): the workers, the KV
// transfer and latencies, the cost against co-located serving and the verdict.
std::vector<std::string> disaggregated_lines(const Money& money, const DisaggregatedPlan& split);
// The split against the co-located pick as table rows (Markdown, HTML): prefill, decode, the
// split as a whole, co-located. Empty when the split meets no SLO (disaggregated_lines says why)
// or the role has no pick.
struct DisaggregatedRow {
    std::string phase;                   // "prefill", "decode", "split", "co-located"
    std::string gpu;                     // catalog id
    std::string count;                   // "2 workers × 1 group", "3 workers + 1 spare", "8 replicas (1 spare)"
    int gpus = 0;                        // spares included
    std::string layout;                  // "TP8 EP8"
    std::string latency;                 // "TTFT 1.66 s", "TPOT 32.4 ms", "TTFT 1.66 s · TPOT 32.4 ms"
    std::string usd_per_million_tokens;  // split and co-located rows only
};
std::vector<DisaggregatedRow> disaggregated_rows(const Money& money, const RolePlan& plan);

// The alternative with its condition ("A — condition"), or the condition alone when it already
// starts with the alternative's GPU id `gpu`, so that the GPU is not named twice.
std::string alternative_text(const std::string& alternative, const std::string& condition, const std::string& gpu);

// The candidate's layout ("tp8 pp9 dp64 zero1"), followed by the micro-batch, recompute level and
// precision when the workload let the planner choose them.
std::string setting_text(const RolePlan& plan, const Candidate& candidate);

// The pick's line: its summary, setting, serving replicas and spares, then why it won
// ("64× B200, buy new, tp8 pp1 dp7, bf16, 7 replicas + 1 spare — …").
std::string pick_text(const RolePlan& plan, const Candidate& winner);

// "1 role", "3 roles".
std::string role_count_text(std::size_t roles);
// "5286 options evaluated, 1133 feasible", with "of N in the search space (the rest pruned)" when
// the search pruned points.
std::string search_summary(const RolePlan& plan);

// The perf values that may be absent (no dataset; load beyond capacity). The one place that
// reads them, so that every renderer agrees on "absent".
std::optional<double> time_to_train_s(const TrainingPerf& perf);
std::optional<double> p99_ttft_s(const InferencePerf& perf);
std::optional<double> p99_tpot_s(const InferencePerf& perf);
std::optional<double> p99_e2e_s(const InferencePerf& perf);

// A value of a sensitivity input in its unit: "31.2 months", "55 %", "$0.180/kWh", "$2.79/h",
// "$25,000", "12 req/s", "8.03B tokens", "3 runs", "41 ms".
std::string input_value_text(const Money& money, const std::string& unit, double value);
// "horizon 24 → 31.2 months (+30 %): H100-SXM5 ×8 buy new wins".
std::string sensitivity_text(const Money& money, const Sensitivity& sensitivity);
// The role's robustness, one line each (terminal and Markdown): the odds of the pick, the
// candidates tied with it, its band, the warnings, and the `top` most decisive break-evens.
// Empty when the analysis was not computed.
std::vector<std::string> robustness_lines(const RolePlan& plan, std::size_t top);
// "Fleet over the day" (RolePlan::fleet): the split with the cost of each part, all-owned and
// all-rented, the break-even of one more owned replica; empty without a fleet.
std::vector<std::string> fleet_lines(const RolePlan& plan);
// A bought line's delivery when the workload sets deployment.deliver_by: "~10 weeks after the
// order (…), by deployment.deliver_by", or the weeks late and their bridging rent; empty otherwise.
std::string delivery_text(const Money& money, const ProcurementLine& line);

}  // namespace gpusel::plan_text
