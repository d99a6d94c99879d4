#include "plan/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cost/offer_selection.hpp"
#include "plan/robustness.hpp"
#include "search/training_search.hpp"

namespace gpusel {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------
// Classification and the restated question

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
        if (workload.model.is_transformer()) {
            parts.push_back(fmt::format("{} in / {} out", inference.input_tokens, inference.output_tokens));
        }
        parts.push_back(fmt::format("{:g} req/s", inference.requests_per_s));
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

// ---------------------------------------------------------------------------------------
// Filters that need no estimate

// Why `gpu` is excluded by the workload's lists and limits; empty when it is not.
std::string static_exclusion(const Workload& workload, const GpuSpec& gpu) {
    const ConstraintSpec& constraints = workload.constraints;
    const auto listed = [&](const std::vector<std::string>& ids) {
        return std::any_of(ids.begin(), ids.end(),
                           [&](const std::string& id) { return equals_ignore_case(id, gpu.id); });
    };
    if (!constraints.allow.empty() && !listed(constraints.allow)) {
        return "not in constraints.allow";
    }
    if (listed(constraints.deny)) {
        return "in constraints.deny";
    }
    if (!constraints.vendors.empty() &&
        std::none_of(constraints.vendors.begin(), constraints.vendors.end(),
                     [&](const std::string& vendor) { return equals_ignore_case(vendor, gpu.vendor); })) {
        return fmt::format("vendor {} not in constraints.vendor", gpu.vendor);
    }
    if (!constraints.segments.empty() && std::find(constraints.segments.begin(), constraints.segments.end(),
                                                   gpu.segment) == constraints.segments.end()) {
        return fmt::format("segment {} not allowed", to_string(gpu.segment));
    }
    if (!constraints.form_factors.empty() && std::find(constraints.form_factors.begin(), constraints.form_factors.end(),
                                                       gpu.form_factor) == constraints.form_factors.end()) {
        return fmt::format("form factor {} not allowed", to_string(gpu.form_factor));
    }
    if (constraints.max_power_per_device_watts > 0 && gpu.power_watts > constraints.max_power_per_device_watts) {
        return fmt::format("{:.0f} W > {:.0f} W per device", gpu.power_watts, constraints.max_power_per_device_watts);
    }
    return {};
}

std::vector<Acquisition> acquisitions_for(const Workload& workload) {
    std::vector<Acquisition> options;
    const DeploymentTarget target = workload.deployment.target;
    const bool may_buy = target != DeploymentTarget::cloud;
    const bool may_rent = target != DeploymentTarget::on_prem && target != DeploymentTarget::edge;
    if (may_buy) {
        options.push_back(Acquisition::buy_new);
        if (workload.deployment.used_market) {
            options.push_back(Acquisition::buy_used);
        }
    }
    if (may_rent) {
        options.push_back(Acquisition::cloud_on_demand);
        if (workload.is_training()) {
            options.push_back(Acquisition::cloud_spot);
        }
        options.push_back(Acquisition::cloud_reserved);
    }
    return options;
}

// Runs `worker` on every hardware thread (at most one per item), or inline for one item.
// The first exception a thread throws is rethrown here once all have stopped.
template <typename Worker>
void run_in_parallel(const Worker& worker, std::size_t items) {
    const std::size_t threads = std::min<std::size_t>(std::max(1U, std::thread::hardware_concurrency()), items);
    if (threads <= 1) {
        worker();
        return;
    }
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    const auto guarded = [&]() {
        try {
            worker();
        } catch (...) {
            if (!failed.exchange(true)) {
                failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t thread = 1; thread < threads; ++thread) {
        pool.emplace_back(guarded);
    }
    guarded();
    for (std::thread& thread : pool) {
        thread.join();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

// ---------------------------------------------------------------------------------------
// Layouts

std::vector<Layout> inference_layouts(const Workload& workload, const GpuSpec& gpu, int max_gpus) {
    const int node = std::max(1, workload.constraints.gpus_per_node);
    // A replica's tensor parallel stays within one NVLink domain. PCIe-only cards split inside one
    // host (2, 4, 8 cards: the usual L40S / RTX 6000 Ada / RTX PRO 6000 servers), the all-reduce
    // priced over PCIe by the perf model (link_for_group); edge modules are one per device.
    const int domain = gpu.has_gpu_interconnect()     ? gpu.interconnect.domain_size
                       : gpu.segment == Segment::edge ? 1
                                                      : node;
    std::vector<Layout> layouts;
    for (int t = 1; t <= std::min({domain, node, max_gpus, 8}); t *= 2) {
        Layout layout;
        layout.tensor_parallel = t;
        layouts.push_back(layout);
    }
    return layouts;
}

// ---------------------------------------------------------------------------------------
// Scoring

double objective_score(Objective objective, const Candidate& candidate) {
    switch (objective) {
        case Objective::tco:
            return candidate.cost.tco_usd;
        case Objective::time:
            if (candidate.perf.training) {
                return candidate.perf.training->time_to_train_s.value_or(candidate.perf.training->step_time_s);
            }
            return candidate.perf.inference ? candidate.perf.inference->p99_e2e_s.value_or(infinity) : infinity;
        case Objective::latency:
            if (candidate.perf.inference) {
                const InferencePerf& inference = *candidate.perf.inference;
                return inference.p99_tpot_s.value_or(0) > 0 ? *inference.p99_tpot_s
                                                            : inference.p99_e2e_s.value_or(infinity);
            }
            return candidate.perf.training ? candidate.perf.training->step_time_s : infinity;
        case Objective::throughput_per_usd:
            return candidate.cost.usd_per_unit > 0 ? candidate.cost.usd_per_unit : candidate.cost.tco_usd;
        case Objective::energy:
            return candidate.cost.energy_kwh;
    }
    return candidate.cost.tco_usd;
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

// The speed figure of a candidate where larger is better (for comparisons in words).
double speed(const Candidate& candidate) {
    if (candidate.perf.training) {
        return candidate.perf.training->tokens_per_s > 0 ? candidate.perf.training->tokens_per_s
                                                         : candidate.perf.training->samples_per_s;
    }
    if (candidate.perf.inference && candidate.perf.inference->p99_tpot_s.value_or(0) > 0) {
        return 1.0 / *candidate.perf.inference->p99_tpot_s;
    }
    if (candidate.perf.inference && candidate.perf.inference->p99_e2e_s.value_or(0) > 0) {
        return 1.0 / *candidate.perf.inference->p99_e2e_s;
    }
    return 0;
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
        const int serving = candidate.replicas - candidate.spare_replicas;
        parts.push_back(fmt::format("{} replica{} at {:g} req/s{}", serving, serving == 1 ? "" : "s",
                                    workload.inference.requests_per_s,
                                    candidate.spare_replicas > 0
                                        ? fmt::format(" + {} spare (deployment.redundancy)", candidate.spare_replicas)
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
        parts.push_back(fmt::format("tied on TCO (within {} or {:.0f} %), ranked by speed, then fewer devices",
                                    format_usd(tie_tolerance_usd), tie_tolerance_fraction * 100));
    } else if (difference > 0) {
        parts.push_back(fmt::format("{} more over {:.0f} months", format_usd(difference),
                                    workload.deployment.horizon_months));
    } else if (difference < 0) {
        parts.push_back(
            fmt::format("{} less over {:.0f} months", format_usd(-difference), workload.deployment.horizon_months));
    }
    // A purchase with lower running cost wins once the horizon is long enough.
    const double capex_gap = alternative.cost.capex_usd - winner.cost.capex_usd;
    const double monthly_gap = winner.cost.monthly_opex_usd - alternative.cost.monthly_opex_usd;
    if (difference > 0 && capex_gap > 0 && monthly_gap > 0) {
        parts.push_back(fmt::format("pays back only if the horizon exceeds {:.0f} months", capex_gap / monthly_gap));
    }
    if (!alternative.memory.fits) {
        parts.push_back("does not fit");
    }
    return fmt::format("{} ×{} {}: {}", alternative.gpu, alternative.count, describe(alternative.acquisition),
                       parts.empty() ? std::string("close second") : fmt::format("{}", fmt::join(parts, ", ")));
}

// ---------------------------------------------------------------------------------------
// Evaluation of one role

struct Miss {
    double severity = infinity;  // smaller = closer to feasible
    std::string why;
};

// Rejections the user chose (lists, segments, power) sort after every near miss.
constexpr double excluded_by_choice = 1e9;
constexpr double unsupported = 1e8;

class RolePlanner {
public:
    RolePlanner(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
                Objective objective, bool reference = false)
        : m_workload(workload),
          m_catalog(catalog),
          m_efficiency(efficiency),
          m_objective(objective),
          m_reference(reference) {}

    // Fixed mode: one GPU type, one count, one acquisition; constraints other than memory are
    // left to the caller.
    FixedEvaluation evaluate_fixed(const GpuSpec& gpu, int count, Acquisition acquisition,
                                   std::optional<double> unit_price_usd, const Offer* offer) {
        FixedEvaluation result;
        // A development role of several seats buys one box per engineer: the line's count is
        // seats × the GPUs of one box.
        const int seats = m_workload.role == Role::development ? std::max(1, m_workload.deployment.seats) : 1;
        if (count % seats != 0) {
            result.why_not = fmt::format("{} GPUs are not the same box for each of the {} deployment.seats", count, seats);
            return result;
        }
        count /= seats;
        m_fixed = Fixed{count, acquisition, unit_price_usd, offer};
        const std::vector<PrecisionChoice> precisions = precision_choices(m_workload, gpu);
        if (precisions.empty()) {
            result.why_not = fmt::format("no {} support", to_string(m_workload.precision));
            return result;
        }
        std::vector<Candidate> found;
        Miss miss;
        std::size_t evaluated = 0;
        if (m_workload.is_training()) {
            TrainingSearchOptions options;
            options.fixed_count = count;
            options.require_deadline = false;
            const TrainingSearchResult search = search_training(m_workload, gpu, m_efficiency, options);
            evaluate_training(gpu, search, found, miss);
            if (found.empty() && search.least_memory) {
                const TrainingChoice& least = *search.least_memory;
                MemoryQuery query;
                query.layout = least.layout;
                query.micro_batch = least.micro_batch;
                result.closest_memory =
                    estimate_memory(variant(least.precision.precision, least.checkpointing), gpu, query);
                result.closest_layout = least.layout;
            }
        } else {
            for (const PrecisionChoice& precision : precisions) {
                evaluate_inference(gpu, precision, found, miss, evaluated);
            }
            if (found.empty() && m_closest_miss) {
                result.closest_memory =
                    estimate_memory(variant(precisions.front().precision, m_workload.training.checkpointing), gpu,
                                    m_closest_miss->query);
                result.closest_layout = m_closest_miss->query.layout;
            }
        }
        if (found.empty()) {
            result.why_not = miss.why.empty() ? no_offer_reason(gpu, count) : miss.why;
            return result;
        }
        // Prefer layouts that meet the deadline or SLO, then the objective.
        const auto meets = [](const Candidate& candidate) {
            return candidate.perf.training ? candidate.perf.training->meets_deadline
                                           : (candidate.perf.inference && candidate.perf.inference->meets_slo);
        };
        for (Candidate& candidate : found) {
            candidate.score = objective_score(m_objective, candidate);
        }
        std::stable_sort(found.begin(), found.end(), [&](const Candidate& a, const Candidate& b) {
            if (meets(a) != meets(b)) {
                return meets(a);
            }
            return a.score < b.score;
        });
        Candidate& best = found.front();
        best.memory = estimate_memory(variant(best.precision, best.checkpointing), gpu, memory_query(best));
        best.reason = winner_reason(m_workload, best, m_objective);
        result.candidate = std::move(best);
        return result;
    }

    RolePlan run(std::size_t top) {
        RolePlan plan;
        plan.role = m_workload.role;
        plan.workload = m_workload;
        plan.question = question(m_workload);
        plan.workload_class = classify(m_workload);
        std::vector<Candidate> best_per_configuration;
        const std::vector<TrainingSearchResult> searches =
            m_workload.is_training() ? search_catalog() : std::vector<TrainingSearchResult>{};
        std::size_t index = 0;
        for (const GpuSpec& gpu : m_catalog.gpus()) {
            const std::size_t position = index++;
            Miss miss;
            const std::string excluded = static_exclusion(m_workload, gpu);
            if (!excluded.empty()) {
                plan.rejected.push_back({gpu.id, 0, excluded, excluded_by_choice});
                continue;
            }
            const std::vector<PrecisionChoice> precisions = precision_choices(m_workload, gpu);
            if (precisions.empty()) {
                plan.rejected.push_back(
                    {gpu.id, 0, fmt::format("no {} support", to_string(m_workload.precision)), unsupported});
                continue;
            }
            const std::size_t before = best_per_configuration.size();
            m_offer_exclusions.clear();
            if (m_workload.is_training()) {
                const TrainingSearchResult& search = searches[position];
                plan.space += search.space;
                plan.evaluated += search.evaluated;
                plan.feasible += search.feasible;
                evaluate_training(gpu, search, best_per_configuration, miss);
            } else {
                for (const PrecisionChoice& precision : precisions) {
                    evaluate_inference(gpu, precision, best_per_configuration, miss, plan.evaluated);
                }
            }
            if (best_per_configuration.size() == before) {
                std::string why = miss.why.empty() ? no_offer_reason(gpu, 0) : miss.why;
                if (precisions.size() == 1 && precisions.front().fallback) {
                    why = fmt::format("no {} ({} fallback); {}", to_string(m_workload.precision),
                                      to_string(precisions.front().precision), why);
                }
                plan.rejected.push_back({gpu.id, 0, why, miss.severity});
            }
        }
        if (!m_workload.is_training()) {
            plan.space = plan.evaluated;
            plan.feasible = m_feasible;
        }
        // The near misses first: they are the ones worth a second look.
        std::stable_sort(plan.rejected.begin(), plan.rejected.end(),
                         [](const Rejection& a, const Rejection& b) { return a.closeness < b.closeness; });
        for (Candidate& candidate : best_per_configuration) {
            candidate.score = objective_score(m_objective, candidate);
        }
        std::stable_sort(best_per_configuration.begin(), best_per_configuration.end(),
                         [](const Candidate& a, const Candidate& b) {
                             if (a.score != b.score) {
                                 return a.score < b.score;
                             }
                             if (a.cost.tco_usd != b.cost.tco_usd) {
                                 return a.cost.tco_usd < b.cost.tco_usd;
                             }
                             return a.count < b.count;
                         });
        const std::vector<Candidate> pool = robustness_pool(best_per_configuration);
        // One row per GPU type in the ranking: the best configuration of each.
        std::vector<Candidate> ranked;
        for (Candidate& candidate : best_per_configuration) {
            const bool seen = std::any_of(ranked.begin(), ranked.end(),
                                          [&](const Candidate& other) { return other.gpu == candidate.gpu; });
            if (!seen) {
                ranked.push_back(std::move(candidate));
            }
        }
        order_ties(ranked);
        for (Candidate& candidate : ranked) {
            candidate.memory = estimate_memory(variant(candidate.precision, candidate.checkpointing),
                                               *m_catalog.find(candidate.gpu), memory_query(candidate));
            candidate.reason = winner_reason(m_workload, candidate, m_objective);
        }
        if (!ranked.empty()) {
            plan.winner = ranked.front();
            // The alternative is a Pareto neighbour of the pick: faster, or cheaper; never one the
            // pick beats on both.
            const auto neighbour = std::find_if(ranked.begin() + 1, ranked.end(), [&](const Candidate& other) {
                return speed(other) > speed(ranked.front()) || other.cost.tco_usd < ranked.front().cost.tco_usd ||
                       other.tied;
            });
            if (neighbour != ranked.end()) {
                plan.alternative = *neighbour;
                plan.alternative_why_not = alternative_condition(m_workload, ranked.front(), *neighbour);
            }
        }
        if (ranked.size() > top) {
            ranked.resize(top);
        }
        plan.ranked = std::move(ranked);
        plan.pareto = pareto_indices(plan.ranked);
        plan.advice = advice(plan);
        plan.uncertainty = analyse_uncertainty(plan, m_workload, m_catalog, m_efficiency, m_objective, pool);
        return plan;
    }

private:
    // Candidates whose cost is within the tie tolerance of the best are tied with it: among
    // them the faster ranks first, then the one with fewer devices (docs/cost-model.md).
    void order_ties(std::vector<Candidate>& ranked) const {
        if (ranked.size() < 2 || m_objective != Objective::tco) {
            return;
        }
        const double best = ranked.front().cost.tco_usd;
        const double tolerance = std::max(tie_tolerance_usd, tie_tolerance_fraction * std::fabs(best));
        const auto end = std::find_if(ranked.begin(), ranked.end(), [&](const Candidate& candidate) {
            return candidate.cost.tco_usd - best > tolerance;
        });
        if (end - ranked.begin() < 2) {
            return;
        }
        std::stable_sort(ranked.begin(), end, [](const Candidate& a, const Candidate& b) {
            if (speed(a) != speed(b)) {
                return speed(a) > speed(b);
            }
            return a.count < b.count;
        });
        for (auto it = ranked.begin() + 1; it != end; ++it) {
            it->tied = true;
        }
    }

    MemoryQuery memory_query(const Candidate& candidate) const {
        MemoryQuery query;
        query.layout = candidate.layout;
        query.micro_batch = candidate.micro_batch;
        query.batch = candidate.batch;
        return query;
    }

    // The workload as one candidate runs it: its precision and recompute level.
    Workload variant(Precision precision, Checkpointing checkpointing) const {
        Workload workload = m_workload;
        workload.precision = precision;
        workload.training.checkpointing = checkpointing;
        return workload;
    }

    // The training search of every GPU type the constraints leave, on up to two threads (each
    // search is independent and pure; results are merged in catalog order, so the plan does not
    // depend on the scheduling).
    std::vector<TrainingSearchResult> search_catalog() const {
        const std::vector<GpuSpec>& gpus = m_catalog.gpus();
        std::vector<TrainingSearchResult> results(gpus.size());
        std::vector<std::size_t> work;
        for (std::size_t index = 0; index < gpus.size(); ++index) {
            if (static_exclusion(m_workload, gpus[index]).empty() &&
                !precision_choices(m_workload, gpus[index]).empty()) {
                work.push_back(index);
            }
        }
        TrainingSearchOptions options;
        options.reference = m_reference;
        std::atomic<std::size_t> next{0};
        const auto worker = [&]() {
            for (std::size_t item = next++; item < work.size(); item = next++) {
                results[work[item]] = search_training(m_workload, gpus[work[item]], m_efficiency, options);
            }
        };
        run_in_parallel(worker, work.size());
        return results;
    }

    // The quotes a candidate of `gpu` may be priced with for `acquisition`: every offer the
    // constraints leave (a fixed line: only whole units of the named offer, or of any offer).
    // `together`: GPUs that one job or replica spreads over (training: all; serving: a replica).
    std::vector<OfferQuote> quotes(const GpuSpec& gpu, Acquisition acquisition, int gpus, int together) {
        std::vector<std::string> excluded;
        std::vector<OfferQuote> found;
        if (m_fixed && m_fixed->offer != nullptr) {
            if (std::optional<OfferQuote> quote = quote_offer(m_catalog, m_workload, *m_fixed->offer, acquisition)) {
                found.push_back(std::move(*quote));
            }
        } else {
            found = quotes_for(m_catalog, m_workload, gpu, acquisition, &excluded);
        }
        // A job spread over several units talks between them over the network: more than one
        // unit only when each unit is a whole node (p5.48xlarge, an HGX server), as the perf
        // model assumes — never 8 × p5.4xlarge, or 512 one-GPU VMs, for one job. Cards bought
        // singly are installed together in hosts, so they are exempt.
        const bool switched = gpu.has_gpu_interconnect() && gpu.interconnect.domain_size >= 8;
        const int node_gpus = std::max(1, m_workload.constraints.gpus_per_node);
        const int node = switched ? std::min(gpu.interconnect.domain_size, node_gpus) : node_gpus;
        std::erase_if(found, [&](const OfferQuote& quote) {
            const Offer& offer = *quote.offer;
            const bool applies = offer.kind == OfferKind::rental || (switched && offer.form != UnitForm::card);
            const bool split = applies && together > offer.gpus_per_unit && offer.gpus_per_unit < node;
            if (split && m_offer_exclusions.size() < 8) {
                m_offer_exclusions.push_back(fmt::format("{}: {} GPUs would span {} units of {}, not whole nodes",
                                                         offer.id, together, units_for(offer, together),
                                                         offer.gpus_per_unit));
            }
            return split;
        });
        if (m_fixed && !found.empty()) {
            std::erase_if(found, [&](const OfferQuote& quote) { return gpus % quote.offer->gpus_per_unit != 0; });
            m_fixed_units_missed = found.empty();
        }
        if (found.empty() && !excluded.empty()) {
            m_offer_exclusions.insert(m_offer_exclusions.begin(), excluded.begin(), excluded.end());
        }
        return found;
    }

    // Adds a feasible (gpu, count, layout) as candidates, once per acquisition and offer.
    void price(const GpuSpec& gpu, Candidate candidate, UsageProfile usage, std::vector<Candidate>& out, Miss& miss) {
        bool any = false;
        const std::vector<Acquisition> acquisitions =
            m_fixed ? std::vector<Acquisition>{m_fixed->acquisition} : acquisitions_for(m_workload);
        usage.reference_rent_usd_per_gpu_hour = reference_rent(gpu);
        const int together = m_workload.is_training()
                                 ? usage.gpus
                                 : candidate.layout.tensor_parallel * std::max(1, candidate.layout.pipeline_parallel);
        for (const Acquisition acquisition : acquisitions) {
            for (const OfferQuote& quote : quotes(gpu, acquisition, usage.gpus, together)) {
                CostEstimate cost =
                    estimate_cost(m_workload, gpu, quote, usage, m_fixed ? m_fixed->unit_price_usd : std::nullopt);
                if (!cost.available) {
                    if (m_fixed) {
                        miss.why = cost.unavailable_reason;
                    }
                    continue;
                }
                // In fixed mode the budget is judged by the caller.
                const BudgetSpec& budget = m_workload.budget;
                if (!m_fixed && budget.capex_usd > 0 && cost.capex_usd > budget.capex_usd) {
                    note_miss(miss, cost.capex_usd / budget.capex_usd,
                              fmt::format("{}×: capex {} > budget {}", usage.gpus, format_usd(cost.capex_usd),
                                          format_usd(budget.capex_usd)));
                    continue;
                }
                if (!m_fixed && budget.monthly_usd > 0 && cost.monthly_opex_usd > budget.monthly_usd) {
                    note_miss(miss, cost.monthly_opex_usd / budget.monthly_usd,
                              fmt::format("{}×: {} per month > budget {}", usage.gpus,
                                          format_usd(cost.monthly_opex_usd), format_usd(budget.monthly_usd)));
                    continue;
                }
                candidate.acquisition = acquisition;
                candidate.cost = std::move(cost);
                candidate.usage = usage;
                any = true;
                out.push_back(candidate);
            }
        }
        if (!any && miss.why.empty()) {
            miss.why = no_offer_reason(gpu, usage.gpus);
        }
    }

    // Why no offer priced a GPU: the first exclusion the constraints made, or that none exists.
    std::string no_offer_reason(const GpuSpec& gpu, int gpus) const {
        if (m_fixed && !m_fixed_units_missed && !m_offer_exclusions.empty()) {
            return "no offer within the constraints: " + m_offer_exclusions.front();
        }
        if (m_fixed) {
            std::string smallest;
            for (const Offer* offer : m_catalog.offers_for(gpu.id)) {
                if ((offer->kind == OfferKind::purchase) == is_purchase(m_fixed->acquisition)) {
                    smallest = smallest.empty() ? fmt::format("{} ({} GPUs per unit)", offer->id, offer->gpus_per_unit)
                                                : smallest;
                }
            }
            return smallest.empty() ? fmt::format("no offer to {} {}", describe(m_fixed->acquisition), gpu.id)
                                    : fmt::format("{} × {} is not whole units of an offer: {}", gpus, gpu.id, smallest);
        }
        if (!m_offer_exclusions.empty()) {
            return "no offer within the constraints: " + m_offer_exclusions.front();
        }
        return m_catalog.offers_for(gpu.id).empty() ? "nobody sells or rents it (no offer in the catalog)"
                                                    : "no offer for the acquisitions allowed";
    }

    double reference_rent(const GpuSpec& gpu) {
        const auto cached = m_reference_rent.find(gpu.id);
        if (cached != m_reference_rent.end()) {
            return cached->second;
        }
        const double rate = reference_rent_usd_per_gpu_hour(m_catalog, m_workload, gpu).value_or(0);
        m_reference_rent.emplace(gpu.id, rate);
        return rate;
    }

    // Fixed mode: remembers the layout that came closest to fitting.
    void note_memory_miss(const MemoryQuery& query, double total_bytes) {
        if (m_fixed && (!m_closest_miss || total_bytes < m_closest_miss->total_bytes)) {
            m_closest_miss = MemoryMiss{query, total_bytes};
        }
    }

    static void note_miss(Miss& miss, double severity, std::string why) {
        if (severity < miss.severity) {
            miss.severity = severity;
            miss.why = std::move(why);
        }
    }

    UsageProfile training_usage(const TrainingPerf& perf, int gpus) const {
        const TrainingSpec& training = m_workload.training;
        UsageProfile usage;
        usage.gpus = gpus;
        usage.average_utilization = m_workload.deployment.utilization;
        usage.launches = training.runs;
        usage.seats = m_workload.role == Role::development ? m_workload.deployment.seats : 1;
        if (perf.time_to_train_s) {
            usage.job_seconds = *perf.time_to_train_s * training.runs;
        } else {
            // No dataset size: the GPUs serve the team for the horizon (e.g. development).
            usage.service = true;
        }
        if (training.dataset_tokens > 0) {
            usage.work_units = training.dataset_tokens * training.epochs * training.runs / 1e6;
            usage.unit = "1M tokens";
        } else if (training.dataset_samples > 0) {
            usage.work_units = training.epochs * training.runs;
            usage.unit = "epoch";
            usage.transfer_bytes = m_workload.data.sample_bytes * training.dataset_samples * training.runs;
        }
        return usage;
    }

    // Prices the fastest point of each GPU count the search found; the search's nearest miss
    // becomes the rejection message when none is left.
    void evaluate_training(const GpuSpec& gpu, const TrainingSearchResult& search, std::vector<Candidate>& out,
                           Miss& miss) {
        const TrainingMiss& nearest = search.miss;
        if (nearest.kind == TrainingMiss::Kind::memory) {
            note_miss(miss, nearest.severity,
                      fmt::format("needs {} per GPU at {} GPU{}, has {} ({} usable)",
                                  format_gb(nearest.memory_total_bytes), nearest.count, nearest.count == 1 ? "" : "s",
                                  format_gb(gpu.memory_bytes), format_gb(nearest.usable_bytes)));
        } else if (nearest.kind == TrainingMiss::Kind::deadline) {
            note_miss(miss, nearest.severity,
                      fmt::format("{} > {} deadline at {} GPUs", format_duration(nearest.time_to_train_s),
                                  format_duration(m_workload.training.deadline_seconds), nearest.count));
        }
        for (const TrainingChoice& choice : search.best_per_count) {
            const Workload workload = variant(choice.precision.precision, choice.checkpointing);
            PerfQuery perf_query;
            perf_query.layout = choice.layout;
            perf_query.micro_batch = choice.micro_batch;
            PerfEstimate perf = estimate_perf(workload, gpu, perf_query, m_efficiency);
            if (!perf.training) {
                continue;
            }
            Candidate candidate;
            candidate.gpu = gpu.id;
            candidate.gpu_name = gpu.name;
            candidate.count = choice.layout.gpu_count();
            candidate.layout = choice.layout;
            candidate.precision = choice.precision.precision;
            candidate.precision_fallback = choice.precision.fallback;
            candidate.checkpointing = choice.checkpointing;
            candidate.micro_batch = choice.micro_batch;
            candidate.perf = std::move(perf);
            const UsageProfile usage = training_usage(*candidate.perf.training, candidate.count);
            price(gpu, std::move(candidate), usage, out, miss);
        }
    }

    void evaluate_inference(const GpuSpec& gpu, const PrecisionChoice& precision, std::vector<Candidate>& out,
                            Miss& miss, std::size_t& evaluated) {
        const Workload workload = variant(precision.precision, m_workload.training.checkpointing);
        const int max_gpus = m_fixed ? m_fixed->count : m_workload.constraints.max_gpus;
        for (const Layout& layout : inference_layouts(workload, gpu, max_gpus)) {
            if (m_fixed && m_fixed->count % layout.tensor_parallel != 0) {
                continue;
            }
            ++evaluated;
            MemoryQuery query;
            query.layout = layout;
            query.batch = 1;
            const MemoryBreakdown memory = memory_breakdown(workload, gpu, query);
            const double usable =
                memory_usable_bytes(workload, gpu, layout, m_workload.constraints.memory_headroom_fraction);
            if (memory.total_bytes > usable) {
                note_memory_miss(query, memory.total_bytes);
                const std::optional<ServingMemory> engine = serving_memory(workload, gpu, layout);
                note_miss(miss, 10.0 + memory.total_bytes / usable,
                          engine ? fmt::format("{} at {} GPU{} per replica: {}", to_string(engine->engine),
                                               layout.gpu_count(), layout.gpu_count() == 1 ? "" : "s", engine->refusal)
                                 : fmt::format("needs {} per GPU at {} GPU{} per replica, has {} ({} usable)",
                                               format_gb(memory.total_bytes), layout.tensor_parallel,
                                               layout.tensor_parallel == 1 ? "" : "s", format_gb(gpu.memory_bytes),
                                               format_gb(usable)));
                continue;
            }
            PerfQuery perf_query;
            perf_query.layout = layout;
            perf_query.batch = m_workload.inference.batch;
            PerfEstimate single = estimate_perf(workload, gpu, perf_query, m_efficiency);
            if (!single.inference) {
                continue;
            }
            if (m_workload.inference.batch == 0 && single.inference->batch > 1) {
                // An automatic batch larger than the memory holds: serve the largest that fits.
                MemoryQuery at_batch = query;
                at_batch.batch = single.inference->batch;
                if (memory_breakdown(workload, gpu, at_batch).total_bytes > usable) {
                    const MemoryEstimate limits = estimate_memory(workload, gpu, query);
                    if (limits.max_batch >= 1) {
                        perf_query.batch = limits.max_batch;
                        single = estimate_perf(workload, gpu, perf_query, m_efficiency);
                        if (!single.inference) {
                            continue;
                        }
                    }
                }
            }
            if (!single.inference->fits) {
                continue;
            }
            const double capacity = single.inference->max_requests_per_s_meeting_slo;
            if (capacity <= 0 && !m_fixed) {
                note_miss(miss, 2.0, slo_miss(*single.inference, layout.tensor_parallel));
                continue;
            }
            // Replicas that carry the load, plus the spare ones deployment.redundancy asks for
            // (a fixed line: its replicas minus the spares, which carry no load).
            int replicas = 0;
            int spares = 0;
            if (m_fixed) {
                const int total = m_fixed->count / layout.tensor_parallel;
                spares = total > 1 ? std::min(total - 1, spare_replicas(total, true)) : 0;
                replicas = total - spares;
            } else {
                replicas = std::max(1, static_cast<int>(std::ceil(m_workload.inference.requests_per_s / capacity - 1e-9)));
                spares = spare_replicas(replicas, false);
            }
            const int gpus = (replicas + spares) * layout.tensor_parallel;
            if (gpus > max_gpus && !m_fixed) {
                note_miss(miss, 1.0 + static_cast<double>(gpus) / max_gpus,
                          fmt::format("needs {} GPUs for {:g} req/s > constraints.max_gpus {}", gpus,
                                      m_workload.inference.requests_per_s, max_gpus));
                continue;
            }
            // Replicas are the data-parallel dimension of an inference layout; the perf model
            // spreads the offered load over them.
            perf_query.layout.data_parallel = replicas;
            PerfEstimate perf = estimate_perf(workload, gpu, perf_query, m_efficiency);
            if (perf.inference) {
                // The batch served must fit next to the weights and KV cache.
                MemoryQuery at_batch = query;
                at_batch.layout = perf_query.layout;
                at_batch.batch = perf.inference->batch;
                const MemoryBreakdown used = memory_breakdown(workload, gpu, at_batch);
                if (used.total_bytes > usable) {
                    note_memory_miss(at_batch, used.total_bytes);
                    note_miss(
                        miss, 10.0 + used.total_bytes / usable,
                        fmt::format("needs {} per GPU at batch {}, has {} ({} usable)", format_gb(used.total_bytes),
                                    perf.inference->batch, format_gb(gpu.memory_bytes), format_gb(usable)));
                    continue;
                }
            }
            if (!perf.inference || (!perf.inference->meets_slo && !m_fixed)) {
                note_miss(miss, 2.0,
                          perf.inference ? slo_miss(*perf.inference, layout.tensor_parallel) : "no estimate");
                continue;
            }
            Candidate candidate;
            candidate.gpu = gpu.id;
            candidate.gpu_name = gpu.name;
            candidate.count = gpus;
            candidate.replicas = replicas + spares;
            candidate.spare_replicas = spares;
            candidate.layout = perf_query.layout;
            candidate.precision = precision.precision;
            candidate.precision_fallback = precision.fallback;
            candidate.batch = perf.inference->batch;
            candidate.perf = std::move(perf);
            ++m_feasible;
            UsageProfile usage;
            usage.gpus = gpus;
            usage.service = true;
            usage.average_utilization = m_workload.deployment.utilization;
            usage.min_gpus = std::min(gpus, m_workload.deployment.min_replicas * layout.tensor_parallel);
            const double served_requests =
                m_workload.inference.requests_per_s * m_workload.deployment.utilization *
                m_workload.deployment.horizon_months * seconds_per_month;
            if (m_workload.model.is_transformer()) {
                // Encoders and prefill-only scoring are priced per 1M input tokens (nothing is generated).
                const int priced_tokens = m_workload.inference.output_tokens > 0 ? m_workload.inference.output_tokens
                                                                                 : m_workload.inference.input_tokens;
                usage.work_units = served_requests * priced_tokens / 1e6;
                usage.unit = "1M tokens";
            } else {
                usage.work_units = served_requests / 1e3;
                usage.unit = "1k requests";
            }
            price(gpu, std::move(candidate), usage, out, miss);
        }
    }

    // Spare replicas deployment.redundancy asks for, given the replicas that carry the load
    // (`of_total`: given the total instead, for a fixed line).
    int spare_replicas(int replicas, bool of_total) const {
        const DeploymentSpec& deployment = m_workload.deployment;
        switch (deployment.redundancy) {
        case DeploymentSpec::Redundancy::none:
            return 0;
        case DeploymentSpec::Redundancy::n_plus_one:
            return 1;
        case DeploymentSpec::Redundancy::fraction: {
            const double fraction = deployment.redundancy_fraction;
            const double needed = of_total ? replicas / (1.0 + fraction) : replicas;
            return std::max(1, static_cast<int>(std::ceil(needed * fraction - 1e-9)));
        }
        }
        return 0;
    }

    std::string slo_miss(const InferencePerf& perf, int tensor_parallel) const {
        const SloSpec& slo = m_workload.inference.slo;
        const auto over = [](const std::optional<double>& value, double limit) {
            return limit > 0 && (!value || *value > limit);
        };
        // Under load the percentile; when even one request alone misses, its unloaded time.
        const auto describe = [&](const char* what, const std::optional<double>& loaded, double alone, double limit) {
            if (loaded) {
                return fmt::format("P{:g} {} {} > {} SLO at TP{}", slo.percentile, what, format_duration(*loaded),
                                   format_duration(limit), tensor_parallel);
            }
            if (alone > limit) {
                return fmt::format("{} {} for one request alone > {} SLO at TP{}", what, format_duration(alone),
                                   format_duration(limit), tensor_parallel);
            }
            return fmt::format("{:g} req/s exceeds what TP{} replicas serve within the {} SLO",
                               m_workload.inference.requests_per_s, tensor_parallel, what);
        };
        if (over(perf.p99_tpot_s, slo.tpot_seconds)) {
            return describe("TPOT", perf.p99_tpot_s, perf.tpot_s, slo.tpot_seconds);
        }
        if (over(perf.p99_ttft_s, slo.ttft_seconds)) {
            return describe("TTFT", perf.p99_ttft_s, perf.ttft_s, slo.ttft_seconds);
        }
        if (over(perf.p99_e2e_s, slo.e2e_seconds)) {
            return describe("latency", perf.p99_e2e_s, perf.ttft_s + perf.tpot_s * m_workload.inference.output_tokens,
                            slo.e2e_seconds);
        }
        return fmt::format("cannot meet the SLO at TP{}", tensor_parallel);
    }

    std::vector<std::size_t> pareto_indices(const std::vector<Candidate>& ranked) const {
        // Training: time vs cost, both minimised. Inference: latency vs cost per unit at the
        // candidates' own batch.
        const auto x = [](const Candidate& candidate) {
            if (candidate.perf.training) {
                return candidate.perf.training->time_to_train_s.value_or(candidate.perf.training->step_time_s);
            }
            return candidate.perf.inference ? candidate.perf.inference->p99_e2e_s.value_or(infinity) : infinity;
        };
        std::vector<std::size_t> front;
        for (std::size_t i = 0; i < ranked.size(); ++i) {
            bool dominated = false;
            for (std::size_t j = 0; j < ranked.size() && !dominated; ++j) {
                dominated = j != i && x(ranked[j]) <= x(ranked[i]) &&
                            ranked[j].cost.tco_usd <= ranked[i].cost.tco_usd &&
                            (x(ranked[j]) < x(ranked[i]) || ranked[j].cost.tco_usd < ranked[i].cost.tco_usd);
            }
            if (!dominated) {
                front.push_back(i);
            }
        }
        return front;
    }

    std::vector<std::string> advice(const RolePlan& plan) const {
        std::vector<std::string> lines;
        if (!plan.winner) {
            lines.push_back("nothing meets every constraint: relax the deadline, SLO or budget, or allow more GPUs");
            return lines;
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
                                        to_string(m_workload.precision), to_string(plan.winner->precision)));
        }
        const OfferUse& offer = plan.winner->cost.offer;
        if (offer.price_kind == PriceKind::estimate) {
            lines.push_back(
                fmt::format("the pick rests on an estimated price (~): {} is not a published price; get a "
                            "quote and add it with --catalog before ordering",
                            offer.id));
        } else if (offer.hosts > 0 && offer.host_price_kind == PriceKind::estimate) {
            lines.push_back(
                fmt::format("the host of {} ({}) is priced by estimate (~); get a quote for it "
                            "before ordering",
                            offer.id, offer.host_name));
        }
        lines.push_back(strategy_line(plan));
        const Candidate& winner = *plan.winner;
        const double horizon = m_workload.deployment.horizon_months;
        if (is_purchase(winner.acquisition) && winner.cost.break_even_month && *winner.cost.break_even_month > horizon) {
            lines.push_back(fmt::format(
                "owning pays back against renting the same GPU-hours on demand only after {:.0f} months, beyond the "
                "{:g}-month horizon ({} rented vs TCO {}); it is picked because no rental within the constraints "
                "costs less",
                *winner.cost.break_even_month, horizon, format_usd(winner.cost.cloud_equivalent_usd),
                format_usd(winner.cost.tco_usd)));
        }
        if (is_purchase(winner.acquisition) && !winner.cost.resale_counted && winner.cost.breakdown.resale_usd > 0) {
            lines.push_back(fmt::format("expected resale {} at the horizon's end is not subtracted "
                                        "(deployment.count_resale: true to rank with it)",
                                        format_usd(winner.cost.breakdown.resale_usd)));
        } else if (is_purchase(winner.acquisition) && winner.cost.resale_counted) {
            lines.push_back(fmt::format("the TCO counts an expected resale of {} (deployment.count_resale); without it "
                                        "the TCO is {}",
                                        format_usd(winner.cost.breakdown.resale_usd),
                                        format_usd(winner.cost.tco_usd + winner.cost.breakdown.resale_usd)));
        }
        return lines;
    }

    // The practitioners' strategy by horizon, and why the pick follows it or not.
    std::string strategy_line(const RolePlan& plan) const {
        const double horizon = m_workload.deployment.horizon_months;
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
                                    rents ? "rents" : "buys",
                                    format_usd(other->cost.tco_usd - winner.cost.tco_usd), rents ? "buys" : "rents",
                                    other->gpu, other->count);
            }
        }
        return line;
    }

    struct Fixed {
        int count = 0;
        Acquisition acquisition = Acquisition::buy_new;
        std::optional<double> unit_price_usd;
        const Offer* offer = nullptr;
    };

    const Workload& m_workload;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    Objective m_objective;
    bool m_reference = false;
    std::size_t m_feasible = 0;
    std::optional<Fixed> m_fixed;
    struct MemoryMiss {
        MemoryQuery query;
        double total_bytes = 0;
    };
    std::optional<MemoryMiss> m_closest_miss;
    std::vector<std::string> m_offer_exclusions;  // of the GPU being priced
    bool m_fixed_units_missed = false;            // fixed mode: offers exist, but not in whole units of the count
    std::map<std::string, double> m_reference_rent;
};

std::string procurement_reason(const RolePlan& plan) {
    return plan.winner ? plan.winner->reason : "";
}

}  // namespace

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

std::string constraint_exclusion(const Workload& workload, const GpuSpec& gpu) {
    return static_exclusion(workload, gpu);
}

FixedEvaluation evaluate_fixed(const Workload& workload, const Catalog& catalog, const GpuSpec& gpu, int count,
                               Acquisition acquisition, std::optional<double> unit_price_usd, const Offer* offer,
                               const EfficiencyTable& efficiency) {
    RolePlanner planner(workload, catalog, efficiency, workload.objective);
    return planner.evaluate_fixed(gpu, count, acquisition, unit_price_usd, offer);
}

PlanReport make_plan(const Project& project, const Catalog& catalog, const EfficiencyTable& efficiency,
                     const PlanOptions& options) {
    PlanReport report;
    report.project = project.name;
    const bool several = project.workloads.size() > 1;
    for (const Workload& workload : project.workloads) {
        const Objective objective = options.objective.value_or(workload.objective);
        if (report.objective.empty()) {
            report.objective = objective_words(objective);
        } else if (report.objective != objective_words(objective)) {
            report.objective = "per role (see each role)";
        }
        RolePlanner planner(workload, catalog, efficiency, objective, options.reference_search);
        RolePlan plan = planner.run(options.top);
        report.horizon_months = std::max(report.horizon_months, workload.deployment.horizon_months);
        for (const Assumption& assumption : workload.assumptions) {
            Assumption copy = assumption;
            if (several) {
                copy.field = workload.name + ": " + copy.field;
            }
            report.assumptions.push_back(std::move(copy));
        }
        if (plan.winner) {
            const Candidate& winner = *plan.winner;
            ProcurementLine line;
            line.role = plan.role;
            line.gpu = winner.gpu;
            line.gpu_name = winner.gpu_name;
            line.quantity = winner.cost.offer.units + winner.cost.spare_units;
            line.gpus = winner.cost.offer.units * winner.cost.offer.gpus_per_unit + winner.cost.spare_gpus;
            line.offer = winner.cost.offer;
            line.acquisition = winner.acquisition;
            line.unit_price_usd = winner.cost.unit_price_usd;
            line.total_usd = winner.cost.capex_usd;
            line.host_usd = winner.cost.breakdown.servers_usd;
            line.resale_usd = winner.cost.breakdown.resale_usd;
            line.resale_counted = winner.cost.resale_counted;
            line.depreciation_usd_per_month = winner.cost.depreciation_usd_per_month;
            line.monthly_opex_usd = winner.cost.monthly_opex_usd;
            line.tco_usd = winner.cost.tco_usd;
            line.horizon_months = workload.deployment.horizon_months;
            line.reason = procurement_reason(plan);
            if (plan.alternative) {
                line.alternative =
                    fmt::format("{} ×{} ({}, {})", plan.alternative->gpu, plan.alternative->count,
                                describe(plan.alternative->acquisition), plan.alternative->cost.offer.id);
                line.alternative_reason = plan.alternative_why_not;
            }
            report.total_capex_usd += line.total_usd;
            report.total_monthly_opex_usd += line.monthly_opex_usd;
            report.total_tco_usd += line.tco_usd;
            report.procurement.push_back(std::move(line));
        }
        report.roles.push_back(std::move(plan));
    }
    return report;
}

}  // namespace gpusel
