// Every sentence the planner writes: the restated question, why a pick ranks where it does,
// when the alternative would win, why a layout misses its SLO, and the advice under a plan.
// Numbers stay in the Candidate; these functions only put them into words.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/units.hpp"
#include "plan/internal.hpp"

namespace gpusel {

namespace plan_detail {

Money money_in(const Workload& workload) {
    const CurrencySpec& currency = workload.deployment.currency;
    return Money{currency.code, currency.per_usd, currency.as_of};
}

namespace {

// The practitioners' strategy by horizon, and why the pick follows it or not.
std::string strategy_line(const Workload& workload, const RolePlan& plan) {
    const Money money = money_in(workload);
    const double horizon = workload.deployment.horizon_months;
    std::string line = "strategy by horizon: " + horizon_strategy(horizon);
    const Candidate& winner = *plan.winner;
    const bool rents = !is_purchase(winner.acquisition);
    const bool advises_renting = horizon < 6;
    const bool advises_owning = horizon > 24;
    if ((rents && advises_owning) || (!rents && advises_renting)) {
        const auto other = std::find_if(plan.ranked.begin(), plan.ranked.end(), [&](const Candidate& candidate) {
            return is_purchase(candidate.acquisition) == rents;
        });
        if (other == plan.ranked.end()) {
            line += fmt::format("; this pick {} because no option that {} meets every constraint",
                                rents ? "rents" : "buys", rents ? "buys" : "rents");
        } else {
            line += fmt::format("; this pick {}: {} less than the best option that {} ({} ×{})",
                                rents ? "rents" : "buys", money.whole(other->cost.tco_usd - winner.cost.tco_usd),
                                rents ? "buys" : "rents", other->gpu, other->count);
        }
    }
    return line;
}

}  // namespace

WorkloadClass classify(const Workload& workload) {
    const ConstraintSpec& constraints = workload.constraints;
    const bool edge_only =
        !constraints.segments.empty() && std::all_of(constraints.segments.begin(), constraints.segments.end(),
                                                     [](Segment segment) { return segment == Segment::edge; });
    if (workload.kind == WorkloadKind::inference) {
        // Edge: deployed on devices with a power envelope (the Jetson class tops out at 60 W).
        if (workload.deployment.target == DeploymentTarget::edge || edge_only ||
            (constraints.max_power_per_device_watts > 0 && constraints.max_power_per_device_watts <= 75)) {
            return WorkloadClass::edge_inference;
        }
        return WorkloadClass::high_concurrency_inference;
    }
    // Full training of a model whose weights, gradients and AdamW states (16 B/param) exceed one
    // 80 GB GPU several times over needs multi-GPU sharding: the large-model class.
    const double state_bytes = workload.model.params * (workload.training.lora.enabled() ? 2.0 : 16.0);
    return state_bytes > 4 * 80e9 ? WorkloadClass::large_training : WorkloadClass::medium_training;
}

std::string question(const Workload& workload) {
    std::vector<std::string> parts;
    parts.push_back(workload.model_label.empty() ? workload.model.name : workload.model_label);
    if (workload.is_training()) {
        const TrainingSpec& training = workload.training;
        if (training.lora.enabled()) {
            parts.push_back(fmt::format("LoRA r{}", training.lora.rank));
        } else if (workload.kind == WorkloadKind::fine_tuning) {
            parts.push_back("full fine-tuning");
        }
        parts.emplace_back(to_string(workload.precision));
        if (training.seq_len > 0) {
            parts.push_back(fmt::format("seq {}", training.seq_len));
        }
        if (training.dataset_tokens > 0) {
            parts.push_back(format_count(training.dataset_tokens) + " tokens");
        } else if (training.dataset_samples > 0) {
            parts.push_back(
                fmt::format("{} samples × {:g} epochs", format_count(training.dataset_samples), training.epochs));
        }
        if (training.deadline_seconds > 0) {
            parts.push_back("deadline " + format_duration(training.deadline_seconds));
        }
    } else {
        const InferenceSpec& inference = workload.inference;
        parts.emplace_back(to_string(workload.weights));
        if (workload.task() == InferenceTask::generation) {
            parts.push_back(fmt::format("{} in / {} out", inference.input_tokens, inference.output_tokens));
        } else if (workload.model.is_transformer()) {
            parts.push_back(fmt::format("{} input tokens", inference.input_tokens));
        } else if (workload.task() == InferenceTask::diffusion) {
            parts.push_back(fmt::format("{} steps{}", inference.denoising_steps,
                                        inference.classifier_free_guidance ? " with guidance" : ""));
        }
        parts.push_back(inference.load_text());
        const std::string percentile = fmt::format("P{:g}", inference.slo.percentile);
        if (inference.slo.ttft_seconds > 0) {
            parts.push_back(fmt::format("{} TTFT ≤ {}", percentile, format_duration(inference.slo.ttft_seconds)));
        }
        if (inference.slo.tpot_seconds > 0) {
            parts.push_back(fmt::format("{} TPOT ≤ {}", percentile, format_duration(inference.slo.tpot_seconds)));
        }
        if (inference.slo.e2e_seconds > 0) {
            parts.push_back(fmt::format("{} e2e ≤ {}", percentile, format_duration(inference.slo.e2e_seconds)));
        }
    }
    return fmt::format("{}", fmt::join(parts, " · "));
}

std::string objective_words(Objective objective) {
    switch (objective) {
        case Objective::tco:
            return "lowest TCO meeting every constraint";
        case Objective::time:
            return "shortest time meeting every constraint";
        case Objective::latency:
            return "lowest latency meeting every constraint";
        case Objective::throughput_per_usd:
            return "lowest cost per unit of work meeting every constraint";
        case Objective::energy:
            return "least energy meeting every constraint";
    }
    return "";
}

std::string winner_reason(const Workload& workload, const Candidate& candidate, Objective objective) {
    std::vector<std::string> parts;
    if (candidate.perf.training) {
        const TrainingPerf& training = *candidate.perf.training;
        if (training.time_to_train_s) {
            parts.push_back(workload.training.deadline_seconds > 0
                                ? fmt::format("{} per run ≤ {} deadline", format_duration(*training.time_to_train_s),
                                              format_duration(workload.training.deadline_seconds))
                                : fmt::format("{} per run", format_duration(*training.time_to_train_s)));
        } else {
            parts.push_back(format_rate(speed(candidate), training.tokens_per_s > 0 ? "tok/s" : "samples/s"));
        }
    }
    if (candidate.perf.inference) {
        const InferencePerf& inference = *candidate.perf.inference;
        const SloSpec& slo = workload.inference.slo;
        const auto shown = [](const std::optional<double>& seconds) {
            return seconds ? format_duration(*seconds) : std::string("over capacity");
        };
        if (slo.tpot_seconds > 0) {
            parts.push_back(fmt::format("P{:g} TPOT {} ≤ {}", slo.percentile, shown(inference.p99_tpot_s),
                                        format_duration(slo.tpot_seconds)));
        } else if (slo.ttft_seconds > 0) {
            parts.push_back(fmt::format("P{:g} TTFT {} ≤ {}", slo.percentile, shown(inference.p99_ttft_s),
                                        format_duration(slo.ttft_seconds)));
        } else {
            parts.push_back(fmt::format("P{:g} latency {}", slo.percentile, shown(inference.p99_e2e_s)));
        }
        const int serving = candidate.serving_replicas() - candidate.margin_replicas;
        parts.push_back(fmt::format(
            "{} replica{} at {}{}{}", serving, serving == 1 ? "" : "s", workload.inference.load_text(),
            candidate.margin_replicas > 0
                ? fmt::format(" + {} for the speed band at {:g} % confidence (objective.confidence)",
                              candidate.margin_replicas, workload.confidence * 100)
                : std::string(),
            candidate.spare_replicas > 0 ? fmt::format(" + {} spare (deployment.redundancy)", candidate.spare_replicas)
                                         : std::string()));
    }
    parts.push_back(fmt::format("{}/{} per GPU", format_gb(candidate.memory.per_gpu.total_bytes),
                                format_gb(candidate.memory.capacity_bytes)));
    if (candidate.precision_fallback) {
        parts.push_back(
            fmt::format("no native {}: runs {}", to_string(workload.precision), to_string(candidate.precision)));
    }
    if (objective == Objective::tco && !is_purchase(candidate.acquisition) && candidate.perf.training &&
        candidate.cost.tco_usd > 0) {
        parts.push_back("renting beats owning for this much use");
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

// When would `alternative` beat `winner`? In numbers.
std::string alternative_condition(const Workload& workload, const Candidate& winner, const Candidate& alternative) {
    const Money money = money_in(workload);
    std::vector<std::string> parts;
    const double winner_speed = speed(winner);
    const double alternative_speed = speed(alternative);
    if (winner_speed > 0 && alternative_speed > 0) {
        const double ratio = alternative_speed / winner_speed;
        if (ratio >= 1.05) {
            parts.push_back(fmt::format("{:.1f}× faster", ratio));
        } else if (ratio <= 0.95) {
            parts.push_back(fmt::format("{:.1f}× slower", 1.0 / ratio));
        }
    }
    const double difference = alternative.cost.tco_usd - winner.cost.tco_usd;
    if (alternative.tied || std::fabs(difference) < 1) {
        const std::string rule = tie_rule(rank_key(winner), rank_key(alternative));
        parts.push_back(fmt::format("tied on TCO (within {} or {:.0f} %{}); the pick won the tie: {}",
                                    money.whole(tie_tolerance_usd), tie_tolerance_fraction * 100,
                                    difference >= 0.5    ? fmt::format("; {} more", money.whole(difference))
                                    : difference <= -0.5 ? fmt::format("; {} less", money.whole(-difference))
                                                         : std::string(),
                                    rule.empty() ? std::string("listed first") : rule));
    } else if (difference > 0) {
        parts.push_back(
            fmt::format("{} more over {:.0f} months", money.whole(difference), workload.deployment.horizon_months));
    } else if (difference < 0) {
        parts.push_back(
            fmt::format("{} less over {:.0f} months", money.whole(-difference), workload.deployment.horizon_months));
    }
    // A purchase with lower running cost wins once the horizon is long enough.
    const double capex_gap = alternative.cost.capex_usd - winner.cost.capex_usd;
    const double monthly_gap = winner.cost.monthly_opex_usd - alternative.cost.monthly_opex_usd;
    if (difference > 0 && capex_gap > 0 && monthly_gap > 0) {
        // Beyond the asset's book life a payback month is no horizon anyone plans for.
        const double payback_months = capex_gap / monthly_gap;
        const double life_months = alternative.cost.depreciation_months;
        parts.push_back(life_months > 0 && payback_months > life_months
                            ? fmt::format("does not pay back within its {:.0f}-month asset life", life_months)
                            : fmt::format("pays back only if the horizon exceeds {:.0f} months", payback_months));
    }
    if (!alternative.memory.fits) {
        parts.push_back("does not fit");
    }
    return fmt::format("{} ×{} {}: {}", alternative.gpu, alternative.count, describe(alternative.acquisition),
                       parts.empty() ? std::string("close second") : fmt::format("{}", fmt::join(parts, ", ")));
}

Rejection slo_miss(const Workload& workload, const InferencePerf& perf, const Layout& replica) {
    // "TP4", or "TP8 PP2" for a replica split over nodes by pipeline stages.
    const std::string split = replica.pipeline_parallel > 1
                                  ? fmt::format("TP{} PP{}", replica.tensor_parallel, replica.pipeline_parallel)
                                  : fmt::format("TP{}", replica.tensor_parallel);
    const SloSpec& slo = workload.inference.slo;
    const auto over = [](const std::optional<double>& value, double limit) {
        return limit > 0 && (!value || *value > limit);
    };
    // Under load the percentile; when even one request alone misses, its unloaded time.
    const auto describe = [&](const char* what, const char* field, const std::optional<double>& loaded, double alone,
                              double limit) {
        Rejection miss{"", RejectionKind::slo, fmt::format("inference.slo.{}", field), 0, limit, 0, "", 0};
        if (loaded) {
            miss.needed = *loaded;
            miss.why_not = fmt::format("P{:g} {} {} > {} SLO at {}", slo.percentile, what, format_duration(*loaded),
                                       format_duration(limit), split);
        } else if (alone > limit) {
            miss.needed = alone;
            miss.why_not = fmt::format("{} {} for one request alone > {} SLO at {}", what, format_duration(alone),
                                       format_duration(limit), split);
        } else {
            miss.why_not = fmt::format("{} {} what {} replicas serve within the {} SLO", workload.inference.load_text(),
                                       workload.inference.concurrency > 0 ? "exceed" : "exceeds", split, what);
        }
        return miss;
    };
    if (over(perf.p99_tpot_s, slo.tpot_seconds)) {
        return describe("TPOT", "tpot", perf.p99_tpot_s, perf.tpot_s, slo.tpot_seconds);
    }
    if (over(perf.p99_ttft_s, slo.ttft_seconds)) {
        return describe("TTFT", "ttft", perf.p99_ttft_s, perf.ttft_s, slo.ttft_seconds);
    }
    if (over(perf.p99_e2e_s, slo.e2e_seconds)) {
        return describe("latency", "e2e", perf.p99_e2e_s, perf.ttft_s + perf.tpot_s * workload.inference.output_tokens,
                        slo.e2e_seconds);
    }
    return {"", RejectionKind::slo, "inference.slo", 0, 0, 0, fmt::format("cannot meet the SLO at {}", split), 0};
}

std::vector<std::string> relaxation_advice(const RolePlan& plan) {
    std::vector<std::string> lines;
    for (const Relaxation& relaxation : plan.relaxations) {
        lines.push_back(fmt::format("relaxing one constraint gives a pick: {} {} → {}: {}", relaxation.field,
                                    relaxation.from, relaxation.to, relaxation.pick));
    }
    if (plan.relaxations.empty()) {
        lines.push_back(plan.relaxations_tried.empty()
                            ? std::string("no constraint to relax alone: the workload itself cannot run")
                            : fmt::format("no single constraint relaxed alone gives a pick (tried {})",
                                          fmt::join(plan.relaxations_tried, ", ")));
    }
    return lines;
}

std::string estimated_price_advice(std::string_view what, const std::vector<const OfferUse*>& offers) {
    std::vector<std::string> estimated;
    std::vector<std::string> hosts;
    for (const OfferUse* offer : offers) {
        if (offer->price_kind == PriceKind::estimate) {
            estimated.push_back(offer->id);
        } else if (offer->hosts > 0 && offer->host_price_kind == PriceKind::estimate) {
            hosts.push_back(fmt::format("{} ({})", offer->id, offer->host_name));
        }
    }
    if (!estimated.empty() && !hosts.empty()) {
        return fmt::format(
            "{} rests on estimated prices (~): {} {} not a published price and the host of {} is "
            "priced by estimate; get quotes and add them with --catalog before ordering",
            what, fmt::join(estimated, " and "), estimated.size() == 1 ? "is" : "are", fmt::join(hosts, " and of "));
    }
    if (!estimated.empty()) {
        return fmt::format(
            "{} rests on an estimated price (~): {} {} not a published price; get a quote and add it "
            "with --catalog before ordering",
            what, fmt::join(estimated, " and "), estimated.size() == 1 ? "is" : "are");
    }
    if (!hosts.empty()) {
        return fmt::format("the host of {} is priced by estimate (~); get a quote for it before ordering",
                           fmt::join(hosts, " and of "));
    }
    return {};
}

std::string resale_advice(const Money& money, double resale_usd, bool counted, double tco_usd) {
    if (counted) {
        return fmt::format(
            "the TCO counts an expected resale of {} (deployment.count_resale); without it the TCO is {}",
            money.whole(resale_usd), money.whole(tco_usd + resale_usd));
    }
    if (resale_usd > 0) {
        return fmt::format(
            "expected resale {} at the horizon's end is not subtracted (deployment.count_resale: true to rank with "
            "it)",
            money.whole(resale_usd));
    }
    return {};
}

std::vector<std::string> advice(const Workload& workload, const RolePlan& plan) {
    const Money money = money_in(workload);
    std::vector<std::string> lines;
    if (!plan.winner) {
        // The nearest miss names the constraint that binds (the rejections come nearest first).
        const auto nearest = std::find_if(plan.rejected.begin(), plan.rejected.end(), [](const Rejection& rejection) {
            return rejection.kind != RejectionKind::excluded && rejection.kind != RejectionKind::precision;
        });
        if (nearest != plan.rejected.end()) {
            lines.push_back(fmt::format("nothing meets every constraint; the nearest miss: {} — {}{}", nearest->gpu,
                                        nearest->why_not,
                                        nearest->limit.empty() ? std::string() : " (" + nearest->limit + ")"));
        } else {
            lines.push_back("nothing meets every constraint: every GPU is excluded by the workload's own lists");
        }
        return lines;
    }
    const Candidate& pick = *plan.winner;
    if (pick.perf.training && pick.perf.training->time_to_train_s) {
        // The method's first lesson: a job this small needs one GPU that holds it, not a cluster.
        const double gpu_hours = *pick.perf.training->time_to_train_s * pick.count * workload.training.runs / 3600;
        if (gpu_hours < 1) {
            lines.push_back(
                fmt::format("≈ {:.2g} GPU-hours of work in all: any GPU with at least {} of memory "
                            "does it; the pick {} costs {} over the horizon",
                            gpu_hours, format_gb(pick.memory.per_gpu.total_bytes),
                            pick.count == 1 ? "(one GPU)" : fmt::format("({} GPUs)", pick.count),
                            std::fabs(money.of(pick.cost.tco_usd)) < 100 ? money.cents(pick.cost.tco_usd)
                                                                         : money.whole(pick.cost.tco_usd)));
        }
    }
    const Bottleneck& bottleneck = plan.winner->perf.bottleneck;
    if (bottleneck.resource == Resource::input_pipeline) {
        std::string remedy = bottleneck.remedy;
        const std::string prefix = "input-bound: ";
        if (remedy.rfind(prefix, 0) == 0) {
            remedy.erase(0, prefix.size());
        }
        lines.push_back("input-bound: fix the data pipeline before buying a faster GPU — " + remedy);
    } else if (!bottleneck.remedy.empty()) {
        lines.push_back(bottleneck.remedy);
    }
    if (plan.winner->precision_fallback) {
        lines.push_back(fmt::format("{} has no native {}: it runs {} (check numerics)", plan.winner->gpu,
                                    to_string(workload.precision), to_string(plan.winner->precision)));
    }
    if (std::string estimated = estimated_price_advice("the pick", {&plan.winner->cost.offer}); !estimated.empty()) {
        lines.push_back(std::move(estimated));
    }
    lines.push_back(strategy_line(workload, plan));
    const Candidate& winner = *plan.winner;
    const double horizon = workload.deployment.horizon_months;
    if (is_purchase(winner.acquisition) && winner.cost.break_even_month && *winner.cost.break_even_month > horizon) {
        lines.push_back(fmt::format(
            "owning pays back against renting the same GPU-hours on demand only after {:.0f} months, beyond the "
            "{:g}-month horizon ({} rented vs TCO {}); it is picked because no rental within the constraints "
            "costs less",
            *winner.cost.break_even_month, horizon, money.whole(winner.cost.cloud_equivalent_usd),
            money.whole(winner.cost.tco_usd)));
    }
    if (is_purchase(winner.acquisition)) {
        if (std::string resale =
                resale_advice(money, winner.cost.breakdown.resale_usd, winner.cost.resale_counted, winner.cost.tco_usd);
            !resale.empty()) {
            lines.push_back(std::move(resale));
        }
    }
    if (winner.acquisition == Acquisition::cloud_spot) {
        // No provider publishes how often a running GPU spot instance is interrupted per hour
        // (docs/cost-model.md, "Renting"): the overhead is the user's figure or an estimate, and
        // the plan says which.
        const DeploymentSpec& deployment = workload.deployment;
        lines.push_back(
            deployment.spot_overhead_given
                ? fmt::format("spot runtime +{:g} % for interruptions (deployment.spot_overhead, user-given)",
                              deployment.spot_overhead_fraction * 100)
                : fmt::format("spot runtime +{:g} % for interruptions is the default estimate, not a provider "
                              "figure (none publishes an hourly interruption rate): set deployment.spot_overhead "
                              "from your own restarts",
                              deployment.spot_overhead_fraction * 100));
    }
    return lines;
}

}  // namespace plan_detail

std::string_view to_string(WorkloadClass workload_class) {
    switch (workload_class) {
        case WorkloadClass::large_training:
            return "large-model training";
        case WorkloadClass::medium_training:
            return "medium training/tuning";
        case WorkloadClass::high_concurrency_inference:
            return "high-concurrency inference";
        case WorkloadClass::edge_inference:
            return "edge inference";
    }
    return "";
}

std::string_view class_priorities(WorkloadClass workload_class) {
    switch (workload_class) {
        case WorkloadClass::large_training:
            return "memory capacity first, then bandwidth and NVLink";
        case WorkloadClass::medium_training:
            return "balance memory and bandwidth; stay on one node";
        case WorkloadClass::high_concurrency_inference:
            return "latency first: low-precision throughput, bandwidth, host link";
        case WorkloadClass::edge_inference:
            return "performance per watt, INT8/INT4, power envelope";
    }
    return "";
}

}  // namespace gpusel
