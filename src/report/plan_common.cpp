#include "report/plan_common.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "cost/offer_selection.hpp"

namespace gpusel::plan_text {

namespace {

std::optional<double> positive(double value) {
    if (std::isfinite(value) && value > 0) {
        return value;
    }
    return std::nullopt;
}

// Decimal GB without a unit: "80", "41.2", "141" (the unit goes once after the pair).
std::string gb_number(double bytes) {
    const double gb = bytes / 1e9;
    if (!std::isfinite(gb)) {
        return "?";
    }
    std::string text = std::fabs(gb) >= 100 ? fmt::format("{:.0f}", gb) : fmt::format("{:.1f}", gb);
    if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) {
        text.resize(text.size() - 2);
    }
    return text;
}

}  // namespace

Money money_of(const CurrencySpec& currency) {
    return Money{currency.code, currency.per_usd, currency.as_of};
}

Money money_of(const PlanReport& report) {
    return report.roles.empty() ? Money{} : money_of(report.roles.front().workload.deployment.currency);
}

bool is_rental(Acquisition acquisition) {
    return !is_purchase(acquisition);
}

std::string_view acquisition_words(Acquisition acquisition) {
    return describe(acquisition);
}

std::string_view acquisition_short(Acquisition acquisition) {
    switch (acquisition) {
        case Acquisition::buy_new:
            return "buy new";
        case Acquisition::buy_used:
            return "buy used";
        case Acquisition::cloud_on_demand:
            return "cloud od";
        case Acquisition::cloud_spot:
            return "spot";
        case Acquisition::cloud_reserved:
            return "reserved";
        case Acquisition::cloud_reserved_3y:
            return "reserved 3y";
        case Acquisition::cloud_capacity_block:
            return "cap block";
    }
    return to_string(acquisition);
}

std::string_view resource_words(Resource resource) {
    // Short words for narrow table cells; any resource not named here keeps its JSON name.
    if (resource == Resource::compute) {
        return "compute";
    }
    if (resource == Resource::memory_bandwidth) {
        return "memory bw";
    }
    if (resource == Resource::memory_capacity) {
        return "memory cap";
    }
    if (resource == Resource::interconnect) {
        return "interconnect";
    }
    if (resource == Resource::host_link) {
        return "host link";
    }
    if (resource == Resource::input_pipeline) {
        return "input";
    }
    return to_string(resource);
}

std::string bottleneck_cell(const Bottleneck& bottleneck) {
    std::string text(resource_words(bottleneck.resource));
    if (std::isfinite(bottleneck.share) && bottleneck.share > 0) {
        text += " " + format_percent(bottleneck.share);
    }
    return text;
}

std::string memory_cell(const MemoryEstimate& memory) {
    return gb_number(memory.per_gpu.total_bytes) + "/" + gb_number(memory.capacity_bytes) + " GB";
}

SpeedMetric speed_metric(const RolePlan& plan) {
    if (!plan.workload.is_training()) {
        switch (plan.workload.task()) {
            case InferenceTask::generation:
                return {"speed", "tok/s"};
            case InferenceTask::diffusion:
                return {"speed", "images/s"};
            default:
                return {"speed", "req/s"};
        }
    }
    const bool tokens = std::any_of(plan.ranked.begin(), plan.ranked.end(), [](const Candidate& candidate) {
        return candidate.perf.training && candidate.perf.training->tokens_per_s > 0;
    });
    return tokens ? SpeedMetric{"speed", "tok/s"} : SpeedMetric{"speed", "samples/s"};
}

std::optional<double> speed_value(const SpeedMetric& metric, const Candidate& candidate) {
    if (const auto& training = candidate.perf.training) {
        return positive(metric.unit == "tok/s" ? training->tokens_per_s : training->samples_per_s);
    }
    if (const auto& inference = candidate.perf.inference) {
        return positive(metric.unit == "tok/s" ? inference->output_tokens_per_s : inference->requests_per_s);
    }
    return std::nullopt;
}

std::string speed_cell(const SpeedMetric& metric, const Candidate& candidate) {
    const std::optional<double> value = speed_value(metric, candidate);
    return value ? format_rate(*value, metric.unit) : "—";
}

TimeMetric time_metric(const RolePlan& plan) {
    using Kind = TimeMetric::Kind;
    if (plan.workload.is_training()) {
        const bool any_time = std::any_of(plan.ranked.begin(), plan.ranked.end(), [](const Candidate& candidate) {
            return candidate.perf.training && time_to_train_s(*candidate.perf.training);
        });
        return any_time ? TimeMetric{Kind::time_to_train, "time"} : TimeMetric{Kind::step_time, "step"};
    }
    // The latency the SLO names is the one the reader cares about; without an SLO, end-to-end
    // for workloads that generate no tokens, TPOT for those that do.
    // The perf model's p99_* fields hold the SLO's percentile.
    const SloSpec& slo = plan.workload.inference.slo;
    const std::string percentile = fmt::format("P{:g}", slo.percentile);
    if (slo.tpot_seconds > 0) {
        return {Kind::p99_tpot, percentile + " TPOT"};
    }
    if (slo.ttft_seconds > 0) {
        return {Kind::p99_ttft, percentile + " TTFT"};
    }
    if (slo.e2e_seconds > 0 || plan.workload.task() != InferenceTask::generation) {
        return {Kind::p99_e2e, percentile + " e2e"};
    }
    return {Kind::p99_tpot, percentile + " TPOT"};
}

std::optional<double> time_value(const TimeMetric& metric, const Candidate& candidate) {
    using Kind = TimeMetric::Kind;
    if (const auto& training = candidate.perf.training) {
        if (metric.kind == Kind::time_to_train) {
            return time_to_train_s(*training);
        }
        return positive(training->step_time_s);
    }
    if (const auto& inference = candidate.perf.inference) {
        switch (metric.kind) {
            case Kind::p99_ttft:
                return p99_ttft_s(*inference);
            case Kind::p99_tpot:
                return p99_tpot_s(*inference);
            case Kind::p99_e2e:
                return p99_e2e_s(*inference);
            case Kind::time_to_train:
            case Kind::step_time:
                break;
        }
    }
    return std::nullopt;
}

std::string time_cell(const TimeMetric& metric, const Candidate& candidate) {
    const std::optional<double> value = time_value(metric, candidate);
    return value ? format_duration(*value) : "—";
}

std::string unit_price_cell(const Money& money, Acquisition acquisition, double unit_price_usd, bool estimated) {
    if (!std::isfinite(unit_price_usd)) {
        return "—";
    }
    const std::string marker = estimated ? "~" : "";
    if (is_rental(acquisition)) {
        return marker + money.cents(unit_price_usd) + "/h";
    }
    return marker + money.whole(unit_price_usd);
}

std::string order_note(const Money& money, const OfferUse& offer, int spare_units) {
    if (offer.id.empty()) {
        return {};
    }
    std::string text = offer.order;
    if (!money.is_usd() && offer.kind == OfferKind::rental) {
        // The cost model writes a rental's price and zone range into the order in USD
        // (price_text, zone_range_text); the same figures, converted, take their place.
        PricePoint price;
        price.usd = offer.price_usd;
        price.kind = offer.price_kind;
        price.zones_usd = offer.zones_usd;
        const std::string in_usd = price_text(price, OfferKind::rental) + zone_range_text(price);
        std::string converted =
            (offer.price_kind == PriceKind::estimate ? "~" : "") + money.cents(offer.price_usd) + "/h";
        if (offer.zones_usd.size() >= 2) {
            converted += fmt::format(" median of {} zones, {}–{}", offer.zones_usd.size(),
                                     money.cents(offer.zones_usd.front()), money.cents(offer.zones_usd.back()));
        }
        if (const std::size_t at = text.find(in_usd); at != std::string::npos) {
            text.replace(at, in_usd.size(), converted);
        }
    }
    if (offer.kind == OfferKind::rental) {
        text += fmt::format(" ({} {})", to_string(offer.price_kind), offer.as_of);
    }
    if (spare_units > 0) {
        text += fmt::format(" + {} spare", spare_units);
    }
    if (offer.hosts > 0) {
        text += fmt::format(" + {} × {} at {}{} ({})", offer.hosts, offer.host_name,
                            offer.host_price_kind == PriceKind::estimate ? "~" : "", money.whole(offer.host_price_usd),
                            to_string(offer.host_price_kind));
    }
    if (offer.idle_gpus > 0) {
        text += fmt::format("; {} GPU{} of the unit{} idle", offer.idle_gpus, offer.idle_gpus == 1 ? "" : "s",
                            offer.units == 1 ? "" : "s");
    }
    if (offer.price_kind == PriceKind::estimate) {
        text += "; price estimated (~), not published";
    }
    return text + " [" + offer.id + "]";
}

namespace {

// "p5.48xlarge (8 GPUs)": a line's unit with the GPUs in it.
std::string unit_words(const OrderLine& line) {
    return fmt::format("{} ({} GPU{})", line.name, line.gpus_per_unit, line.gpus_per_unit == 1 ? "" : "s");
}

// Appends `text` to `list` unless it is there already (several roles may order the same unit).
void add_once(std::vector<std::string>& list, const std::string& text) {
    if (std::find(list.begin(), list.end(), text) == list.end()) {
        list.push_back(text);
    }
}

std::string joined(const std::vector<std::string>& list) {
    return fmt::format("{}", fmt::join(list, "; "));
}

}  // namespace

std::vector<std::string> procurement_footnotes(const PlanReport& report) {
    const Money money = money_of(report);
    std::vector<std::string> bought_units;
    std::vector<std::string> rented_units;
    std::vector<std::string> hosts;
    std::vector<std::string> estimates;
    int spare_units = 0;
    double resale_counted_usd = 0;
    double resale_not_counted_usd = 0;
    bool any_bought = false;
    bool any_rented = false;
    bool any_counted = false;
    std::vector<std::string> past_horizon;
    for (const ProcurementLine& procured : report.procurement) {
        if (is_purchase(procured.acquisition)) {
            any_bought = true;
            any_counted = any_counted || procured.resale_counted;
        } else {
            any_rented = true;
            if (procured.billed_months > procured.horizon_months) {
                past_horizon.push_back(fmt::format("{}: the reservation bills {} months, past the {}-month horizon",
                                                   to_string(procured.role), months_text(procured.billed_months),
                                                   months_text(procured.horizon_months)));
            }
        }
        for (const OrderLine& line : order_lines(procured)) {
            if (line.item == OrderItem::host) {
                add_once(hosts, line.name);
            } else if (line.price_per == "unit-hour") {
                add_once(rented_units, unit_words(line));
            } else {
                add_once(bought_units, unit_words(line));
            }
            if (line.price_kind == PriceKind::estimate) {
                add_once(estimates, line.name);
            }
            spare_units += line.spare_units;
            resale_counted_usd += line.resale_subtracted_usd;
            resale_not_counted_usd += line.resale_usd - line.resale_subtracted_usd;
        }
    }
    std::vector<std::string> notes;
    std::string quantities = "Units count what the offer sells, GPUs the GPUs in them";
    if (spare_units > 0) {
        quantities += fmt::format(" ({} spare unit{} included)", spare_units, spare_units == 1 ? "" : "s");
    }
    if (!hosts.empty()) {
        quantities += fmt::format("; a host line counts the servers the cards or baseboards need ({})", joined(hosts));
    }
    notes.push_back(quantities + ".");
    if (!bought_units.empty() || !hosts.empty()) {
        std::vector<std::string> per_unit = bought_units;
        for (const std::string& host : hosts) {
            per_unit.push_back(host);
        }
        notes.push_back(fmt::format("Unit price is per unit bought: {}.", joined(per_unit)));
    }
    if (!rented_units.empty()) {
        notes.push_back(fmt::format("Unit price is per instance-hour rented (unit-hour): {}.", joined(rented_units)));
    }
    if (!estimates.empty()) {
        notes.push_back(fmt::format("~ marks an estimated price, not published: {}.", joined(estimates)));
    }
    std::string tco = "TCO = capex";
    if (any_bought) {
        tco += " + opex per month × months (power, operations, failures after warranty)";
    }
    if (any_rented) {
        tco += " + rent (every hour billed, start-up and data transfer)";
    }
    if (any_counted) {
        tco += " − counted resale";
    }
    const std::optional<double> horizon = common_horizon(report);
    tco += horizon ? fmt::format(", over {} months.", months_text(*horizon)) : ", each role over its horizon.";
    notes.push_back(tco);
    if (any_counted) {
        notes.push_back(
            fmt::format("The expected resale at the horizon's end, {}, is subtracted from the TCO "
                        "(deployment.count_resale: true).",
                        money.whole(resale_counted_usd)));
    }
    if (any_bought && resale_not_counted_usd > 0) {
        notes.push_back(
            fmt::format("The expected resale at the horizon's end, {}, is not subtracted from the TCO "
                        "(deployment.count_resale: false).",
                        money.whole(resale_not_counted_usd)));
    }
    for (const std::string& line : past_horizon) {
        notes.push_back(line + "; the rent includes them.");
    }
    if (!money.is_usd()) {
        notes.push_back(
            fmt::format("Amounts in {}; the catalogs' USD prices are converted at the given rate.", money.rate_note()));
    }
    return notes;
}

std::string purchase_total_cell(const Money& money, Acquisition acquisition, double total_usd) {
    if (is_rental(acquisition) && total_usd == 0) {
        return "—";
    }
    return money.whole(total_usd);
}

std::string usd_per_unit_cell(const Money& money, double usd) {
    if (!std::isfinite(usd)) {
        return "—";
    }
    return std::fabs(money.of(usd)) < 100 ? money.cents(usd) : money.whole(usd);
}

std::string months_text(double months) {
    if (!std::isfinite(months)) {
        return "?";
    }
    std::string text = fmt::format("{:.1f}", months);
    if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) {
        text.resize(text.size() - 2);
    }
    return text;
}

std::optional<double> common_horizon(const PlanReport& report) {
    if (report.procurement.empty()) {
        return report.horizon_months;
    }
    const double first = report.procurement.front().horizon_months;
    for (const ProcurementLine& line : report.procurement) {
        if (line.horizon_months != first) {
            return std::nullopt;
        }
    }
    return first;
}

std::string candidate_summary(const Candidate& candidate) {
    return fmt::format("{}× {}, {}", candidate.count, candidate.gpu, acquisition_words(candidate.acquisition));
}

std::vector<std::string> disaggregated_lines(const Money& money, const DisaggregatedPlan& split) {
    const double percentile = split.percentile;
    if (!split.meets_slo) {
        return {split.why};
    }
    const auto phase = [](const DisaggregatedPhase& side, std::string_view name) {
        return fmt::format("{} {} × {} TP{}{}", side.workers, name, side.gpu_name, side.tensor_parallel,
                           side.expert_parallel > 1 ? fmt::format(" EP{}", side.expert_parallel) : "");
    };
    const int spares = split.prefill.spare_workers + split.decode.spare_workers;
    std::vector<std::string> lines;
    lines.push_back(fmt::format(
        "{} + {} per group, {} group{}{}: {} GPUs ({} co-located); prefill {:.0f} % busy, "
        "decode batch up to {}",
        phase(split.prefill, "prefill"), phase(split.decode, "decode"), split.replicas, split.replicas == 1 ? "" : "s",
        spares > 0 ? fmt::format(", {} spare worker{}", spares, spares == 1 ? "" : "s") : "",
        split.prefill.gpus + split.decode.gpus, split.colocated_gpus, split.prefill.utilisation * 100,
        split.decode.batch));
    lines.push_back(fmt::format(
        "KV transfer {} per request ({} of prompt KV) over {}; P{:g} TTFT {}, TPOT {} "
        "at {:.3g} req/s{}",
        format_duration(split.kv_transfer_s), format_bytes_difference(split.kv_bytes), split.kv_link, percentile,
        format_duration(split.ttft_s), format_duration(split.tpot_s), split.requests_per_s / split.speed_margin,
        split.speed_margin < 1 ? fmt::format(" (sized for {:.3g} req/s offered at the speed band's slow "
                                             "end, as the co-located margin replicas)",
                                             split.requests_per_s)
                               : ""));
    lines.push_back(
        fmt::format("{} per 1M output tokens vs {} co-located: {} — {}", money.cents(split.usd_per_million_tokens),
                    money.cents(split.colocated_usd_per_million_tokens),
                    split.chosen      ? "chosen"
                    : split.requested ? "not chosen, but fixed by the workload (gpusel deploy --target sglang emits it)"
                                      : "not chosen",
                    split.why));
    return lines;
}

std::vector<DisaggregatedRow> disaggregated_rows(const Money& money, const RolePlan& plan) {
    if (!plan.disaggregated || !plan.disaggregated->meets_slo || !plan.winner) {
        return {};
    }
    const DisaggregatedPlan& split = *plan.disaggregated;
    const Candidate& colocated = *plan.winner;
    const auto layout = [](int tensor_parallel, int expert_parallel) {
        return fmt::format("TP{}{}", tensor_parallel, expert_parallel > 1 ? fmt::format(" EP{}", expert_parallel) : "");
    };
    const auto workers = [&](const DisaggregatedPhase& side) {
        std::string text = fmt::format("{} worker{} × {} group{}", side.workers, side.workers == 1 ? "" : "s",
                                       split.replicas, split.replicas == 1 ? "" : "s");
        if (side.spare_workers > 0) {
            text += fmt::format(" + {} spare", side.spare_workers);
        }
        return text;
    };
    const double percentile = split.percentile;
    const auto at = [&](std::string_view what, double seconds) {
        return fmt::format("P{:g} {} {}", percentile, what, format_duration(seconds));
    };
    const auto both = [&](double ttft_s, double tpot_s) {
        return fmt::format("P{:g} TTFT {} · TPOT {}", percentile, format_duration(ttft_s), format_duration(tpot_s));
    };
    std::vector<DisaggregatedRow> rows;
    rows.push_back({"prefill", split.prefill.gpu, workers(split.prefill), split.prefill.gpus,
                    layout(split.prefill.tensor_parallel, split.prefill.expert_parallel),
                    at("TTFT", split.ttft_s) + fmt::format(" (KV transfer {})", format_duration(split.kv_transfer_s)),
                    ""});
    rows.push_back({"decode", split.decode.gpu, workers(split.decode), split.decode.gpus,
                    layout(split.decode.tensor_parallel, split.decode.expert_parallel), at("TPOT", split.tpot_s), ""});
    rows.push_back(
        {"split",
         split.prefill.gpu == split.decode.gpu ? split.prefill.gpu : split.prefill.gpu + " + " + split.decode.gpu, "",
         split.prefill.gpus + split.decode.gpus, "", both(split.ttft_s, split.tpot_s),
         money.cents(split.usd_per_million_tokens)});
    std::string replicas = fmt::format("{} replica{}", colocated.replicas, colocated.replicas == 1 ? "" : "s");
    if (colocated.spare_replicas > 0) {
        replicas += fmt::format(" ({} spare)", colocated.spare_replicas);
    }
    std::string latency;
    if (colocated.perf.inference && colocated.perf.inference->p99_ttft_s && colocated.perf.inference->p99_tpot_s) {
        latency = both(*colocated.perf.inference->p99_ttft_s, *colocated.perf.inference->p99_tpot_s);
    }
    rows.push_back({"co-located", colocated.gpu, replicas, colocated.count,
                    layout(colocated.layout.tensor_parallel,
                           colocated.perf.inference ? colocated.perf.inference->expert_parallel : 1),
                    latency, money.cents(split.colocated_usd_per_million_tokens)});
    return rows;
}

std::string calibration_delta_text(const Money& money, const CalibrationDelta& delta) {
    const double ratio = delta.measured_vs_predicted;
    // Within half a per cent the two speeds print alike ("0 % slower"): say so in words.
    const std::string measured =
        std::abs(ratio - 1) < 0.005
            ? fmt::format("measured as predicted on {}", delta.measured_gpu)
            : fmt::format("measured {:.0f} % {} than predicted on {}", std::abs(ratio - 1) * 100,
                          ratio < 1 ? "slower" : "faster", delta.measured_gpu);
    const auto pick = [](const PickSummary& summary) {
        return fmt::format("{}× {}, {}", summary.count, summary.gpu, acquisition_words(summary.acquisition));
    };
    const auto gpus = [](int count) { return fmt::format("{} GPU{}", count, count == 1 ? "" : "s"); };
    std::string change;
    if (!delta.uncalibrated && !delta.calibrated) {
        change = "still no option meets every constraint";
    } else if (!delta.calibrated) {
        change = fmt::format("no option meets every constraint, not {}", pick(*delta.uncalibrated));
    } else if (!delta.uncalibrated) {
        change = fmt::format("{}, where no option met every constraint", pick(*delta.calibrated));
    } else if (delta.pick_changed()) {
        change = fmt::format("{}, not {}", pick(*delta.calibrated), pick(*delta.uncalibrated));
    } else if (delta.count_changed()) {
        change = fmt::format("{}, not {}", gpus(delta.calibrated->count), delta.uncalibrated->count);
    } else {
        change = fmt::format("no change to the pick ({})", pick(*delta.calibrated));
    }
    std::string cost;
    if (delta.uncalibrated && delta.calibrated) {
        // Whole dollars, as every TCO prints: below a dollar is no change.
        if (std::abs(delta.tco_delta_usd) >= 0.5) {
            cost = fmt::format("; {}{} over {} months", delta.tco_delta_usd > 0 ? "+" : "",
                               money.whole(delta.tco_delta_usd), months_text(delta.horizon_months));
        } else if (delta.pick_changed() || delta.count_changed()) {
            cost = "; the same TCO";
        }
    }
    return fmt::format("{} → {}{}", measured, change, cost);
}

std::string alternative_text(const std::string& alternative, const std::string& condition, const std::string& gpu) {
    if (condition.empty()) {
        return alternative;
    }
    if (alternative.empty() || (!gpu.empty() && condition.compare(0, gpu.size(), gpu) == 0)) {
        return condition;
    }
    return alternative + " — " + condition;
}

std::string role_count_text(std::size_t roles) {
    return fmt::format("{} role{}", roles, roles == 1 ? "" : "s");
}

std::string pick_text(const RolePlan& plan, const Candidate& winner) {
    std::string pick = candidate_summary(winner) + ", " + setting_text(plan, winner);
    if (winner.replicas > 1) {
        pick += winner.spare_replicas > 0
                    ? fmt::format(", {} replica{} + {} spare", winner.serving_replicas(),
                                  winner.serving_replicas() == 1 ? "" : "s", winner.spare_replicas)
                    : fmt::format(", {} replicas", winner.replicas);
    }
    return winner.reason.empty() ? pick : pick + " — " + winner.reason;
}

std::string setting_text(const RolePlan& plan, const Candidate& candidate) {
    std::string text = describe(candidate.layout);
    const Workload& workload = plan.workload;
    if (!candidate.perf.training) {
        // The compute precision the estimate ran at, which deploy launches (an fp8 pick of a
        // [bf16, fp8] search is not the bf16 the role's header names).
        return text + fmt::format(", {}", to_string(candidate.precision));
    }
    if (!workload.training.micro_batch_options.empty()) {
        text += fmt::format(", micro-batch {}", candidate.micro_batch);
    }
    if (!workload.training.checkpointing_options.empty()) {
        text += fmt::format(", recompute {}", to_string(candidate.checkpointing));
    }
    if (!workload.precision_options.empty()) {
        text += fmt::format(", {}", to_string(candidate.precision));
    }
    return text;
}

std::string search_summary(const RolePlan& plan) {
    if (plan.space > plan.evaluated) {
        return fmt::format("{} options evaluated of {} in the search space (the rest pruned), {} feasible",
                           plan.evaluated, plan.space, plan.feasible);
    }
    return fmt::format("{} options evaluated, {} feasible", plan.evaluated, plan.feasible);
}

std::optional<double> time_to_train_s(const TrainingPerf& perf) {
    return perf.time_to_train_s;
}
std::optional<double> p99_ttft_s(const InferencePerf& perf) {
    return perf.p99_ttft_s;
}
std::optional<double> p99_tpot_s(const InferencePerf& perf) {
    return perf.p99_tpot_s;
}
std::optional<double> p99_e2e_s(const InferencePerf& perf) {
    return perf.p99_e2e_s;
}

}  // namespace gpusel::plan_text

namespace gpusel::plan_text {

std::string input_value_text(const Money& money, const std::string& unit, double value) {
    if (unit == "months") {
        return fmt::format("{:.3g} months", value);
    }
    if (unit == "fraction") {
        return fmt::format("{:.0f} %", value * 100);
    }
    if (unit == "USD/kWh") {
        return money.is_usd() ? fmt::format("${:.3f}/kWh", value)
                              : fmt::format("{:.3f} {}/kWh", money.of(value), money.code);
    }
    if (unit == "USD per unit-hour") {
        return money.cents(value) + "/h";
    }
    if (unit == "USD per unit") {
        return money.whole(value);
    }
    if (unit == "req/s") {
        return fmt::format("{:.3g} req/s", value);
    }
    if (unit == "tokens" || unit == "samples") {
        return format_count(value) + " " + unit;
    }
    if (unit == "runs") {
        return fmt::format("{:.0f} run{}", value, std::lround(value) == 1 ? "" : "s");
    }
    if (unit == "s") {
        return format_duration(value);
    }
    return fmt::format("{:.4g} {}", value, unit);
}

std::string sensitivity_text(const Money& money, const Sensitivity& sensitivity) {
    const double change = sensitivity.current != 0 ? sensitivity.break_even / sensitivity.current - 1 : 0;
    const std::string winner = sensitivity.new_winner == "none feasible"
                                   ? "none of the configurations planned here is feasible"
                                   : sensitivity.new_winner + " wins";
    return fmt::format("{} {} → {} ({:+.0f} %): {}", sensitivity.label,
                       input_value_text(money, sensitivity.unit, sensitivity.current),
                       input_value_text(money, sensitivity.unit, sensitivity.break_even), change * 100, winner);
}

std::vector<std::string> robustness_lines(const RolePlan& plan, std::size_t top) {
    const RoleUncertainty& uncertainty = plan.uncertainty;
    const Money money = money_of(plan.workload.deployment.currency);
    std::vector<std::string> lines;
    if (!uncertainty.computed || !plan.winner) {
        return lines;
    }
    lines.push_back(fmt::format(
        "the pick ranks first in {:.0f} % of {} scenarios and meets every constraint as ordered in {:.0f} % (needs "
        "{:.0f} %, objective.confidence; speed ±{:.0f} % {}, price ±{:.0f} % by kind and memory drawn from their "
        "10th–90th percentile bands)",
        uncertainty.p_best * 100, uncertainty.samples, uncertainty.p_feasible * 100, uncertainty.confidence * 100,
        uncertainty.speed_band_fraction * 100,
        uncertainty.speed_band_measured ? uncertainty.speed_phase + ", measured on the pick's GPU"
                                        : uncertainty.speed_phase,
        uncertainty.price_band_fraction * 100));
    if (uncertainty.tied_with.empty()) {
        lines.emplace_back(
            "no single candidate statistically tied with it (it beats each in at least 90 % of scenarios)");
    } else {
        std::vector<std::string> tied;
        for (const int rank : uncertainty.tied_with) {
            const auto index = static_cast<std::size_t>(rank - 1);
            tied.push_back(index < plan.ranked.size()
                               ? fmt::format("#{} {}", rank, candidate_summary(plan.ranked[index]))
                               : fmt::format("#{}", rank));
        }
        lines.push_back(
            fmt::format("statistically tied with {} (the pick wins fewer than 90 % of scenarios against it)",
                        fmt::join(tied, "; ")));
    }
    if (!uncertainty.bands.empty()) {
        const EstimateBand& band = uncertainty.bands.front();
        const TimeMetric metric = time_metric(plan);
        std::string text = fmt::format("pick's band (5th–95th percentile): TCO {}–{}", money.whole(band.tco_low_usd),
                                       money.whole(band.tco_high_usd));
        if (const std::optional<double> time = time_value(metric, *plan.winner)) {
            text += fmt::format(", {} {}–{}", metric.header, format_duration(*time * band.time_low_factor),
                                format_duration(*time * band.time_high_factor));
        }
        if (band.replicas_high > 0) {
            text += band.replicas_low == band.replicas_high
                        ? fmt::format(", {} replica{}", band.replicas_low, band.replicas_low == 1 ? "" : "s")
                        : fmt::format(", {}–{} replicas", band.replicas_low, band.replicas_high);
        }
        lines.push_back(text);
    }
    for (const std::string& warning : uncertainty.warnings) {
        lines.push_back(warning);
    }
    if (uncertainty.sensitivity.empty()) {
        lines.emplace_back("no input within the searched spans changes the winner");
    }
    for (std::size_t i = 0; i < std::min(top, uncertainty.sensitivity.size()); ++i) {
        lines.push_back("flips if " + sensitivity_text(money, uncertainty.sensitivity[i]));
    }
    return lines;
}

std::vector<std::string> fleet_lines(const RolePlan& plan) {
    const Money money = money_of(plan.workload.deployment.currency);
    std::vector<std::string> lines;
    if (!plan.fleet) {
        return lines;
    }
    const FleetPlan& fleet = *plan.fleet;
    if (!fleet.not_priced_reason.empty()) {
        lines.push_back("not priced: " + fleet.not_priced_reason);
        return lines;
    }
    const FleetOption& chosen = fleet.chosen;
    const std::string months = months_text(fleet.horizon_months);
    const auto replicas = [](int count) { return fmt::format("{} replica{}", count, count == 1 ? "" : "s"); };
    const std::string replica_words =
        fleet.gpus_per_replica == 1 ? std::string("1 GPU") : fmt::format("{} GPUs", fleet.gpus_per_replica);
    lines.push_back(fmt::format(
        "split: {} owned{} + up to {} rented on demand at the peak (month {}, {:.3g} req/s): owned {}, rented {} "
        "({:.0f} replica-hours), TCO {} over {} mo",
        chosen.owned_replicas,
        chosen.owned_replicas > 0 && fleet.spare_replicas > 0 ? fmt::format(" (+ {} spare)", fleet.spare_replicas)
                                                              : std::string(),
        replicas(chosen.rented_replicas_at_peak), fleet.months.empty() ? 0 : fleet.months.back().month,
        fleet.months.empty() ? 0.0 : fleet.months.back().peak_requests_per_s, money.whole(chosen.owned_tco_usd),
        money.whole(chosen.rented_usd), chosen.rented_replica_hours, money.whole(chosen.tco_usd), months));
    const std::string spare_words =
        fleet.spare_replicas > 0 ? fmt::format(" + {} spare", fleet.spare_replicas) : std::string();
    lines.push_back(fmt::format(
        "all owned ({}{}): {} · all rented: {} · a replica: {} × {}, carries {:.3g} req/s "
        "alone at the SLO",
        replicas(fleet.all_owned.owned_replicas), spare_words, money.whole(fleet.all_owned.tco_usd),
        money.whole(fleet.all_rented.tco_usd), replica_words, fleet.gpu, fleet.replica_capacity_requests_per_s));
    lines.push_back(
        fmt::format("one more owned replica: {}{} over {} mo; it pays above {:.0f} rented replica-hours a month (above "
                    "the base now: "
                    "{:.0f}); the base carries {} of hours alone",
                    fleet.one_more_owned_delta_usd >= 0 ? "+" : "", money.whole(fleet.one_more_owned_delta_usd), months,
                    fleet.break_even_rented_hours_per_month, fleet.rented_hours_above_base_per_month,
                    format_percent(fleet.owned_load_percentile)));
    lines.push_back(
        fmt::format("rented: {}, {}/replica-hour + {:g} min start-up per launch "
                    "(data/cost.yaml rental.startup_minutes_per_launch); owned: {}",
                    fleet.rental_offer, money.cents(fleet.rental_usd_per_replica_hour), fleet.startup_lag_s / 60,
                    fleet.owned_offer));
    if (!fleet.ordered_why.empty()) {
        lines.push_back(fleet.ordered ? fmt::format("ordered: {} — the procurement buys the base and rents the peak "
                                                    "(pick owned whole: {})",
                                                    fleet.ordered_why, money.whole(fleet.pick_tco_usd))
                                      : "not ordered: " + fleet.ordered_why);
    }
    return lines;
}

std::string delivery_text(const Money& money, const ProcurementLine& line) {
    if (line.lead_time_weeks <= 0) {
        return {};
    }
    const std::string lead =
        fmt::format("~{:g} weeks after the order ({})", line.lead_time_weeks, line.lead_time_basis);
    if (line.wait_weeks <= 0) {
        return lead + ", by deployment.deliver_by";
    }
    return fmt::format(
        "{}: {:.1f} weeks late for deployment.deliver_by, bridged by renting the same GPUs on demand "
        "for {} (in the TCO)",
        lead, line.wait_weeks, money.whole(line.wait_usd));
}

}  // namespace gpusel::plan_text
