// Candidate evaluation: one GPU type's layouts become priced candidates, or a reason why not.
// The CandidatePolicy says what the caller fixed (count, acquisition, price, offer) and which
// constraints are judged here; `make_plan` and `gpusel check` differ only in their policy.

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cost/offer_selection.hpp"
#include "plan/internal.hpp"
#include "plan/redundancy.hpp"
#include "plan/robustness.hpp"

namespace gpusel::plan_detail {

namespace {

std::vector<Layout> inference_layouts(const Workload& workload, const GpuSpec& gpu, int max_gpus) {
    const int widest = widest_serving_tensor_parallel(workload, gpu);
    std::vector<Layout> layouts;
    for (int t = 1; t <= std::min(widest, max_gpus); t *= 2) {
        Layout layout;
        layout.tensor_parallel = t;
        layouts.push_back(layout);
    }
    // A replica too large for one node spans nodes by pipeline stages, tensor parallel inside each
    // (vLLM's "distributed serving" recipe: TP = GPUs per node, PP = nodes, e.g. Llama 3.1 405B
    // on two 8 × H100 nodes). Tried only after every one-node layout (evaluate_inference stops at
    // the first that fits a node), so small models never pay for the wider search.
    if (widest == std::max(1, workload.constraints.gpus_per_node) && gpu.segment != Segment::edge) {
        for (int p = 2; p <= 8 && widest * p <= max_gpus; p *= 2) {
            Layout layout;
            layout.tensor_parallel = widest;
            layout.pipeline_parallel = p;
            layouts.push_back(layout);
        }
    }
    return layouts;
}

// "15.5 GB usable", and, where the need prints as the same figure, how much it exceeds it by
// ("15.5 GB usable, 40 MB short"): the printed sentence never contradicts the comparison.
std::string usable_text(double needed_bytes, double usable_bytes) {
    const std::string hidden = hidden_difference(format_gb(needed_bytes), format_gb(usable_bytes),
                                                 format_bytes_difference(needed_bytes - usable_bytes));
    return format_gb(usable_bytes) + " usable" + (hidden.empty() ? "" : ", " + hidden + " short");
}

}  // namespace

void note_miss(Miss& miss, Rejection rejection) {
    rejection.closeness = rejection_closeness(rejection.kind, rejection.needed, rejection.available);
    if (rejection.closeness < miss.rejection.closeness) {
        miss.rejection = std::move(rejection);
    }
}

void note_reason(Miss& miss, std::string why_not) {
    if (miss.rejection.why_not.empty()) {
        miss.rejection.why_not = std::move(why_not);
    }
}

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
        // The commitments only a user catalog prices (the built-in one has no reserved_3y or
        // capacity_block price) come first: the reason shown when a GPU finds no offer is that of
        // the last acquisition tried (CandidateEvaluator::quotes), the long-standing ones below.
        options.push_back(Acquisition::cloud_reserved_3y);
        if (workload.is_training()) {
            options.push_back(Acquisition::cloud_capacity_block);
        }
        options.push_back(Acquisition::cloud_on_demand);
        if (workload.is_training()) {
            options.push_back(Acquisition::cloud_spot);
        }
        options.push_back(Acquisition::cloud_reserved);
    }
    return options;
}
CandidatePolicy CandidatePolicy::search(const Workload& workload) {
    CandidatePolicy policy;
    policy.acquisitions = acquisitions_for(workload);
    return policy;
}

CandidatePolicy CandidatePolicy::fixed_line(int count, Acquisition acquisition, std::optional<double> unit_price_usd,
                                            const Offer* offer) {
    CandidatePolicy policy;
    policy.exact_count = count;
    policy.acquisitions = {acquisition};
    policy.unit_price_usd = unit_price_usd;
    policy.offer = offer;
    policy.enforce_budget = false;
    policy.require_slo = false;
    policy.record_closest_memory_miss = true;
    return policy;
}

MemoryQuery memory_query(const Candidate& candidate) {
    MemoryQuery query;
    query.layout = candidate.layout;
    query.micro_batch = candidate.micro_batch;
    query.batch = candidate.batch;
    query.precision = candidate.precision;
    query.checkpointing = candidate.checkpointing;
    return query;
}

CandidateEvaluator::CandidateEvaluator(const Workload& workload, const Catalog& catalog,
                                       const EfficiencyTable& efficiency, CandidatePolicy policy,
                                       const SpeedCalibration* calibration)
    : m_workload(workload),
      m_catalog(catalog),
      m_efficiency(efficiency),
      m_policy(std::move(policy)),
      m_calibration(calibration),
      m_speed(quantile_of(speed_band(workload, efficiency))) {
    // The band measured_speed_band gives wherever it applies (the same for every measured point).
    SpeedBand measured;
    measured.percentiles = {1 - measured_speed_noise_fraction, 1, 1 + measured_speed_noise_fraction, ""};
    m_measured = quantile_of(measured);
}

CandidateEvaluator::SpeedQuantile CandidateEvaluator::quantile_of(const SpeedBand& band) const {
    SpeedQuantile quantile;
    quantile.band = speed_distribution(band.percentiles);
    quantile.slow = band_value(quantile.band, normal_quantile(1 - m_workload.confidence));
    return quantile;
}

const CandidateEvaluator::SpeedQuantile& CandidateEvaluator::speed_at(const GpuSpec& gpu, const Layout& layout) const {
    const bool measured =
        m_calibration != nullptr && measured_speed_band(*m_calibration, gpu.id, configuration_gpus(m_workload, layout));
    return measured ? m_measured : m_speed;
}

bool CandidateEvaluator::holds_at_confidence(const GpuSpec& gpu, const Candidate& candidate) const {
    const double slow_speed = speed_at(gpu, candidate.layout).slow;
    if (candidate.perf.inference) {
        return candidate.perf.inference->max_requests_per_s_meeting_slo * slow_speed >=
               m_workload.inference.requests_per_s * (1 - 1e-9);
    }
    if (!candidate.perf.training) {
        return false;
    }
    const double deadline = m_workload.training.deadline_seconds;
    const std::optional<double>& time = candidate.perf.training->time_to_train_s;
    if (deadline > 0 && time && *time / slow_speed > deadline) {
        return false;
    }
    const double usable = memory_usable_bytes(m_workload, gpu, candidate.layout,
                                              m_workload.constraints.memory_headroom_fraction, candidate.precision);
    return band_value(memory_distribution(memory_breakdown(m_workload, gpu, memory_query(candidate))),
                      normal_quantile(m_workload.confidence)) <= usable;
}

void CandidateEvaluator::begin_gpu() {
    m_offer_exclusions.clear();
}

bool CandidateEvaluator::single_source(const GpuSpec& gpu) {
    const auto found = m_single_source.find(gpu.id);
    if (found != m_single_source.end()) {
        return found->second;
    }
    std::vector<std::string> providers;
    for (const Offer* offer : m_catalog.offers_for(gpu.id)) {
        if (std::find(providers.begin(), providers.end(), offer->provider) == providers.end()) {
            providers.push_back(offer->provider);
        }
    }
    return m_single_source.emplace(gpu.id, providers.size() <= 1).first->second;
}

// The quotes a candidate of `gpu` may be priced with for `acquisition`: every offer the
// constraints leave (a fixed line: only whole units of the named offer, or of any offer).
// `together`: GPUs that one job or replica spreads over (training: all; serving: a replica).
std::vector<OfferQuote> CandidateEvaluator::quotes(const GpuSpec& gpu, Acquisition acquisition, int gpus,
                                                   int together) {
    std::vector<std::string> excluded;
    std::vector<OfferQuote> found;
    if (m_policy.offer != nullptr) {
        if (std::optional<OfferQuote> quote = quote_offer(m_catalog, m_workload, *m_policy.offer, acquisition)) {
            found.push_back(std::move(*quote));
        }
    } else {
        auto known = m_quotes.find({gpu.id, acquisition});
        if (known == m_quotes.end()) {
            OfferQuotes quoted;
            quoted.found = quotes_for(m_catalog, m_workload, gpu, acquisition, &quoted.excluded);
            known = m_quotes.emplace(std::make_pair(gpu.id, acquisition), std::move(quoted)).first;
        }
        found = known->second.found;
        excluded = known->second.excluded;
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
            m_offer_exclusions.push_back(fmt::format("{}: {} GPUs would span {} units of {}, not whole nodes", offer.id,
                                                     together, units_for(offer, together), offer.gpus_per_unit));
        }
        return split;
    });
    if (m_policy.exact_count && !found.empty()) {
        std::erase_if(found, [&](const OfferQuote& quote) { return gpus % quote.offer->gpus_per_unit != 0; });
        m_units_missed = found.empty();
    }
    if (found.empty() && !excluded.empty()) {
        // An acquisition the constraints leave out explains nothing about the ones they allow
        // (a stale spot price, say): its lines go last, so that the reason shown is theirs.
        const std::vector<Acquisition>& allowed = m_workload.constraints.acquisitions;
        const bool is_allowed =
            allowed.empty() || std::find(allowed.begin(), allowed.end(), acquisition) != allowed.end();
        m_offer_exclusions.insert(is_allowed ? m_offer_exclusions.begin() : m_offer_exclusions.end(), excluded.begin(),
                                  excluded.end());
    }
    return found;
}
// Adds a feasible (gpu, count, layout) as candidates, once per acquisition and offer.
void CandidateEvaluator::price(const GpuSpec& gpu, const Candidate& candidate, UsageProfile usage,
                               std::vector<Candidate>& out, Miss& miss) {
    bool any = false;
    std::string late;
    usage.reference_rent_usd_per_gpu_hour = reference_rent(gpu);
    const int together = m_workload.is_training()
                             ? usage.gpus
                             : candidate.layout.tensor_parallel * std::max(1, candidate.layout.pipeline_parallel);
    for (const Acquisition acquisition : m_policy.acquisitions) {
        for (const OfferQuote& quote : quotes(gpu, acquisition, usage.gpus, together)) {
            CostEstimate cost = estimate_cost(m_workload, gpu, quote, usage, m_policy.unit_price_usd);
            if (!cost.available) {
                if (m_policy.exact_count) {
                    miss.rejection.why_not = cost.unavailable_reason;
                }
                if (cost.wait_weeks > 0 && late.empty()) {
                    late = cost.unavailable_reason;  // deployment.deliver_by: nothing bridges the wait
                }
                continue;
            }
            Candidate priced = candidate;
            priced.single_source = single_source(gpu);
            UsageProfile priced_usage = usage;
            if (fill_units(gpu, cost.offer.idle_gpus / together, together, priced)) {
                priced_usage = inference_usage(
                    priced.count, candidate.layout.tensor_parallel * std::max(1, candidate.layout.pipeline_parallel),
                    served_requests_per_s(candidate));
                priced_usage.reference_rent_usd_per_gpu_hour = usage.reference_rent_usd_per_gpu_hour;
                cost = estimate_cost(m_workload, gpu, quote, priced_usage, m_policy.unit_price_usd);
                if (!cost.available) {
                    continue;
                }
            }
            const BudgetSpec& budget = m_workload.budget;
            if (m_policy.enforce_budget && budget.capex_usd > 0 && cost.capex_usd > budget.capex_usd) {
                note_miss(
                    miss,
                    {gpu.id, RejectionKind::budget, "budget.capex_usd", cost.capex_usd, budget.capex_usd, usage.gpus,
                     fmt::format("{}×: capex {} > budget {}", usage.gpus, money_in(m_workload).whole(cost.capex_usd),
                                 money_in(m_workload).whole(budget.capex_usd))});
                continue;
            }
            if (m_policy.enforce_budget && budget.monthly_usd > 0 && cost.monthly_opex_usd > budget.monthly_usd) {
                note_miss(miss, {gpu.id, RejectionKind::budget, "budget.monthly_usd", cost.monthly_opex_usd,
                                 budget.monthly_usd, usage.gpus,
                                 fmt::format("{}×: {} per month > budget {}", usage.gpus,
                                             money_in(m_workload).whole(cost.monthly_opex_usd),
                                             money_in(m_workload).whole(budget.monthly_usd))});
                continue;
            }
            priced.acquisition = acquisition;
            priced.cost = std::move(cost);
            priced.usage = priced_usage;
            any = true;
            out.push_back(std::move(priced));
        }
    }
    if (!any) {
        note_reason(miss, late.empty() ? no_offer_reason(gpu, usage.gpus) : late);
    }
}
bool CandidateEvaluator::fill_units(const GpuSpec& gpu, int extra_replicas, int replica_gpus,
                                    Candidate& candidate) const {
    if (m_policy.exact_count || !candidate.perf.inference || extra_replicas < 1 ||
        candidate.count + extra_replicas * replica_gpus > m_workload.constraints.max_gpus) {
        return false;
    }
    PerfQuery query;
    query.layout = candidate.layout;
    query.layout.data_parallel += extra_replicas;
    query.batch = candidate.batch;
    query.precision = candidate.precision;
    const double rate = m_workload.inference.requests_per_s;
    if (m_policy.sizing_only && rate > 0) {
        query.capacity_needed_rps = rate * (1 - 1e-9);
        query.capacity_factor = speed_at(gpu, query.layout).slow;
    }
    PerfEstimate perf = estimate(gpu, query);
    if (!perf.inference || !perf.inference->meets_slo) {
        return false;  // never: more replicas at the same batch only shorten the queues
    }
    candidate.layout = query.layout;
    candidate.count += extra_replicas * replica_gpus;
    candidate.replicas += extra_replicas;
    candidate.unit_fill_replicas += extra_replicas;
    candidate.perf = std::move(perf);
    return true;
}

std::string CandidateEvaluator::no_offer_reason(const GpuSpec& gpu, int gpus) const {
    if (m_policy.exact_count && !m_units_missed && !m_offer_exclusions.empty()) {
        return "no offer within the constraints: " + m_offer_exclusions.front();
    }
    if (m_policy.exact_count) {
        const Acquisition acquisition = m_policy.acquisitions.front();
        std::string smallest;
        for (const Offer* offer : m_catalog.offers_for(gpu.id)) {
            if ((offer->kind == OfferKind::purchase) == is_purchase(acquisition)) {
                smallest =
                    smallest.empty() ? fmt::format("{} ({} GPUs per unit)", offer->id, offer->gpus_per_unit) : smallest;
            }
        }
        return smallest.empty() ? fmt::format("no offer to {} {}", describe(acquisition), gpu.id)
                                : fmt::format("{} × {} is not whole units of an offer: {}", gpus, gpu.id, smallest);
    }
    if (!m_offer_exclusions.empty()) {
        return "no offer within the constraints: " + m_offer_exclusions.front();
    }
    return m_catalog.offers_for(gpu.id).empty() ? "nobody sells or rents it (no offer in the catalog)"
                                                : "no offer for the acquisitions allowed";
}
double CandidateEvaluator::reference_rent(const GpuSpec& gpu) {
    const auto cached = m_reference_rent.find(gpu.id);
    if (cached != m_reference_rent.end()) {
        return cached->second;
    }
    const double rate = reference_rent_usd_per_gpu_hour(m_catalog, m_workload, gpu).value_or(0);
    m_reference_rent.emplace(gpu.id, rate);
    return rate;
}

void CandidateEvaluator::note_memory_miss(const MemoryQuery& query, double total_bytes) {
    if (m_policy.record_closest_memory_miss && (!m_closest_miss || total_bytes < m_closest_miss->total_bytes)) {
        m_closest_miss = MemoryMiss{query, total_bytes};
    }
}

UsageProfile CandidateEvaluator::training_usage(const TrainingPerf& perf, int gpus) const {
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
void CandidateEvaluator::evaluate_training(const GpuSpec& gpu, const TrainingSearchResult& search,
                                           std::vector<Candidate>& out, Miss& miss) {
    if (const std::optional<NearMiss>& memory = search.miss.memory) {
        note_miss(miss,
                  {gpu.id, RejectionKind::memory, "memory per GPU", memory->needed, memory->available, memory->count,
                   fmt::format("needs {} per GPU at {} GPU{}, has {} ({})", format_gb(memory->needed), memory->count,
                               memory->count == 1 ? "" : "s", format_gb(gpu.memory_bytes),
                               usable_text(memory->needed, memory->available))});
    }
    if (const std::optional<NearMiss>& deadline = search.miss.deadline) {
        const std::string needed = format_duration(deadline->needed);
        const std::string limit = format_duration(deadline->available);
        const std::string hidden =
            hidden_difference(needed, limit, format_duration(deadline->needed - deadline->available));
        note_miss(miss, {gpu.id, RejectionKind::deadline, "training.deadline", deadline->needed, deadline->available,
                         deadline->count,
                         fmt::format("{} > {} deadline{} at {} GPUs", needed, limit,
                                     hidden.empty() ? "" : " (by " + hidden + ")", deadline->count)});
    }
    for (const TrainingChoice& choice : search.best_per_count) {
        PerfQuery perf_query;
        perf_query.layout = choice.layout;
        perf_query.micro_batch = confident_micro_batch(gpu, choice, miss);
        if (perf_query.micro_batch == 0) {
            continue;
        }
        perf_query.precision = choice.precision.precision;
        perf_query.checkpointing = choice.checkpointing;
        PerfEstimate perf = estimate_perf(m_workload, gpu, perf_query, m_efficiency);
        if (!perf.training || !meets_deadline_confidently(gpu, *perf.training, choice.layout, miss)) {
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
        candidate.micro_batch = perf_query.micro_batch;
        candidate.perf = std::move(perf);
        const UsageProfile usage = training_usage(*candidate.perf.training, candidate.count);
        price(gpu, candidate, usage, out, miss);
    }
}
// The search fills memory with the largest micro-batch whose estimate fits; the decision must
// hold at the confidence level, so the micro-batch is the largest (down from the search's, the
// global batch still dividing) whose memory at the band's confidence quantile fits. 0 (and a
// miss) when even the smallest does not.
int CandidateEvaluator::confident_micro_batch(const GpuSpec& gpu, const TrainingChoice& choice, Miss& miss) const {
    if (m_policy.exact_count && !m_policy.size_for_confidence) {
        return choice.micro_batch;  // check judges the hardware ordered at the estimate
    }
    const double z = normal_quantile(m_workload.confidence);
    const double usable = memory_usable_bytes(
        m_workload, gpu, choice.layout, m_workload.constraints.memory_headroom_fraction, choice.precision.precision);
    const int global = m_workload.training.global_batch;
    const int data_parallel = std::max(1, choice.layout.data_parallel);
    double bytes = 0;
    PercentileBand smallest;
    // The micro-batches the workload allows (its options, or the one it names), from the search's
    // down.
    std::vector<int> allowed = m_workload.training.micro_batch_options;
    if (allowed.empty()) {
        allowed.push_back(m_workload.training.micro_batch);
    }
    std::sort(allowed.begin(), allowed.end(), std::greater<>());
    for (const int micro_batch : allowed) {
        if (micro_batch > choice.micro_batch ||
            (global > 0 && global % (micro_batch * data_parallel) != 0 && micro_batch != choice.micro_batch)) {
            continue;
        }
        MemoryQuery query;
        query.layout = choice.layout;
        query.micro_batch = micro_batch;
        query.precision = choice.precision.precision;
        query.checkpointing = choice.checkpointing;
        smallest = memory_distribution(memory_breakdown(m_workload, gpu, query));
        bytes = band_value(smallest, z);
        if (bytes <= usable) {
            return micro_batch;
        }
    }
    note_miss(miss, {gpu.id, RejectionKind::memory, "memory per GPU", bytes, usable, choice.layout.gpu_count(),
                     fmt::format("fits in {:.0f} % of scenarios (needs {:.0f} %) at {} GPU{}, at the smallest "
                                 "micro-batch allowed: {} per GPU estimated, {} at the memory band's {:.0f}th "
                                 "percentile, {}",
                                 100 * band_share_below(smallest, usable), m_workload.confidence * 100,
                                 choice.layout.gpu_count(), choice.layout.gpu_count() == 1 ? "" : "s",
                                 format_gb(smallest.p50), format_gb(bytes), m_workload.confidence * 100,
                                 usable_text(bytes, usable))});
    return 0;
}

// The deadline at the confidence level: the run's time at the slow quantile of the speed band
// (speed_band: measured / predicted over the validation runs).
bool CandidateEvaluator::meets_deadline_confidently(const GpuSpec& gpu, const TrainingPerf& training,
                                                    const Layout& layout, Miss& miss) const {
    const double deadline = m_workload.training.deadline_seconds;
    if (deadline <= 0 || !training.time_to_train_s || m_policy.exact_count) {
        return true;
    }
    const int count = layout.gpu_count();
    const SpeedQuantile& speed = speed_at(gpu, layout);
    const double time = *training.time_to_train_s / speed.slow;
    if (time <= deadline) {
        return true;
    }
    // The run meets the deadline when the speed factor is at least estimate / deadline.
    const double share = 1 - band_share_below(speed.band, *training.time_to_train_s / deadline);
    note_miss(miss, {gpu.id, RejectionKind::deadline, "training.deadline", time, deadline, count,
                     fmt::format("meets the {} deadline in {:.0f} % of scenarios (needs {:.0f} %) at {} GPU{}: {} per "
                                 "run estimated, {} at the speed band's {:.0f}th percentile",
                                 format_duration(deadline), 100 * share, m_workload.confidence * 100, count,
                                 count == 1 ? "" : "s", format_duration(*training.time_to_train_s),
                                 format_duration(time), (1 - m_workload.confidence) * 100)});
    return false;
}

void CandidateEvaluator::evaluate_inference(const GpuSpec& gpu, const PrecisionChoice& precision,
                                            std::vector<Candidate>& out, Miss& miss, std::size_t& evaluated) {
    // The precision travels in the queries; the recompute level stays the workload's.
    const Precision chosen = precision.precision;
    const int max_gpus = m_policy.exact_count.value_or(m_workload.constraints.max_gpus);
    bool fits_one_node = false;
    for (const Layout& layout : inference_layouts(m_workload, gpu, max_gpus)) {
        const int per_replica = layout.gpu_count();
        if (layout.pipeline_parallel > 1 && fits_one_node) {
            break;
        }
        if (m_policy.exact_count && *m_policy.exact_count % per_replica != 0) {
            continue;
        }
        ++evaluated;
        MemoryQuery query;
        query.layout = layout;
        query.batch = 1;
        query.precision = chosen;
        const MemoryBreakdown memory = memory_breakdown(m_workload, gpu, query);
        const double usable =
            memory_usable_bytes(m_workload, gpu, layout, m_workload.constraints.memory_headroom_fraction, chosen);
        if (memory.total_bytes > usable) {
            note_memory_miss(query, memory.total_bytes);
            const std::optional<ServingMemory> engine = serving_memory(m_workload, gpu, layout, chosen);
            note_miss(miss,
                      {gpu.id, RejectionKind::memory, "memory per GPU", memory.total_bytes, usable, layout.gpu_count(),
                       engine ? fmt::format("{} at {} GPU{} per replica: {}", to_string(engine->engine),
                                            layout.gpu_count(), layout.gpu_count() == 1 ? "" : "s", engine->refusal)
                              : fmt::format("needs {} per GPU at {} GPU{} per replica, has {} ({})",
                                            format_gb(memory.total_bytes), per_replica, per_replica == 1 ? "" : "s",
                                            format_gb(gpu.memory_bytes), usable_text(memory.total_bytes, usable))});
            continue;
        }
        fits_one_node = fits_one_node || layout.pipeline_parallel == 1;
        PerfQuery perf_query;
        perf_query.layout = layout;
        perf_query.batch = m_workload.inference.batch;
        perf_query.precision = chosen;
        const std::optional<PerfEstimate> single = single_replica(gpu, query, usable, perf_query);
        if (!single || !single->inference->fits) {
            continue;
        }
        const double capacity = single->inference->max_requests_per_s_meeting_slo;
        if (capacity <= 0 && m_policy.require_slo) {
            Rejection slo = slo_miss(m_workload, *single->inference, layout);
            slo.gpu = gpu.id;
            slo.count = layout.gpu_count();
            note_miss(miss, std::move(slo));
            continue;
        }
        const std::optional<Replicas> replicas = replicas_for(*single->inference, per_replica, max_gpus, miss);
        if (!replicas) {
            continue;
        }
        const int gpus = (replicas->serving + replicas->spares) * per_replica;
        // Replicas are the data-parallel dimension of an inference layout; the perf model
        // spreads the offered load over them.
        // One replica is the estimate just made (the same query: estimates are pure).
        const bool one_replica = replicas->serving == perf_query.layout.data_parallel;
        perf_query.layout.data_parallel = replicas->serving;
        bool decided = false;
        PerfEstimate perf = one_replica ? *single : serving_estimate(gpu, perf_query, decided);
        if (perf.inference) {
            // The batch served must fit next to the weights and KV cache.
            MemoryQuery at_batch = query;
            at_batch.layout = perf_query.layout;
            at_batch.batch = perf.inference->batch;
            const MemoryBreakdown used = memory_breakdown(m_workload, gpu, at_batch);
            if (used.total_bytes > usable) {
                note_memory_miss(at_batch, used.total_bytes);
                note_miss(miss, {gpu.id, RejectionKind::memory, "memory per GPU", used.total_bytes, usable, gpus,
                                 fmt::format("needs {} per GPU at batch {}, has {} ({})", format_gb(used.total_bytes),
                                             perf.inference->batch, format_gb(gpu.memory_bytes),
                                             usable_text(used.total_bytes, usable))});
                continue;
            }
        }
        if (!perf.inference || (!perf.inference->meets_slo && m_policy.require_slo)) {
            if (decided) {
                perf = estimate(gpu, perf_query);  // the rejection reports it
            }
            Rejection slo = perf.inference
                                ? slo_miss(m_workload, *perf.inference, layout)
                                : Rejection{gpu.id, RejectionKind::slo, "inference.slo", 0, 0, 0, "no estimate", 0};
            slo.gpu = gpu.id;
            slo.count = gpus;
            note_miss(miss, std::move(slo));
            continue;
        }
        const int margin = margin_replicas(gpu, perf_query, perf, decided, replicas->serving, replicas->spares,
                                           per_replica, max_gpus, miss);
        if (margin < 0) {
            continue;
        }
        const int gpus_with_margin = gpus + margin * per_replica;
        Candidate candidate;
        candidate.gpu = gpu.id;
        candidate.gpu_name = gpu.name;
        candidate.count = gpus_with_margin;
        candidate.margin_replicas = margin;
        candidate.replicas = replicas->serving + margin + replicas->spares;
        candidate.spare_replicas = replicas->spares;
        candidate.layout = perf_query.layout;
        candidate.precision = precision.precision;
        candidate.precision_fallback = precision.fallback;
        candidate.batch = perf.inference->batch;
        candidate.perf = std::move(perf);
        ++m_feasible;
        price(gpu, candidate, inference_usage(gpus_with_margin, per_replica, served_requests_per_s(candidate)), out,
              miss);
    }
}

int CandidateEvaluator::confident_batch(const GpuSpec& gpu, const MemoryQuery& query, double usable_bytes,
                                        int batch) const {
    if (uses_serving_engine(m_workload)) {
        return batch;
    }
    const double z = normal_quantile(m_workload.confidence);
    const auto fits = [&](int candidate) {
        MemoryQuery at_batch = query;
        at_batch.batch = candidate;
        return band_value(memory_distribution(memory_breakdown(m_workload, gpu, at_batch)), z) <= usable_bytes;
    };
    if (fits(batch)) {
        return batch;
    }
    int low = 1;  // the batch of one was checked by the caller at the estimate; the band may still refuse it
    int high = batch;
    if (!fits(low)) {
        return batch;  // no batch fits at the quantile: the robustness analysis says how often it does
    }
    while (high - low > 1) {
        const int middle = low + (high - low) / 2;
        (fits(middle) ? low : high) = middle;
    }
    return low;
}

// The estimate of the serving replicas. Where margin_replicas will size a margin, it is first
// asked only whether they carry the load at the speed band's slow end (what margin_replicas
// decides on; PerfQuery::capacity_needed_rps, `decided` true): most do not, and the full
// estimate is then made at the count with the margin instead.
PerfEstimate CandidateEvaluator::serving_estimate(const GpuSpec& gpu, const PerfQuery& query, bool& decided) const {
    const double rate = m_workload.inference.requests_per_s;
    decided = !m_policy.exact_count && rate > 0;
    PerfQuery asked = query;
    if (decided) {
        asked.capacity_needed_rps = rate * (1 - 1e-9);
        asked.capacity_factor = speed_at(gpu, query.layout).slow;
    }
    return estimate(gpu, asked);
}

const PerfEstimate& CandidateEvaluator::estimate(const GpuSpec& gpu, const PerfQuery& query) const {
    const Layout& layout = query.layout;
    EstimateKey key{&gpu,
                    layout.tensor_parallel,
                    layout.pipeline_parallel,
                    layout.data_parallel,
                    layout.expert_parallel,
                    layout.context_parallel,
                    layout.sharding,
                    layout.offload,
                    query.micro_batch,
                    query.batch,
                    query.stack,
                    query.engine,
                    query.precision,
                    query.checkpointing,
                    query.search_capacity,
                    query.capacity_needed_rps,
                    query.capacity_factor};
    const auto known = m_estimates.find(key);
    if (known != m_estimates.end()) {
        return known->second;
    }
    return m_estimates.emplace(std::move(key), estimate_perf(m_workload, gpu, query, m_efficiency)).first->second;
}

// Replicas to add so that the fleet still carries the load within the SLO when the GPU runs at
// the slow quantile of the speed band (the robustness analysis's model: capacity scales with
// speed). `perf` is re-estimated at the count found, and in full where `decided` (it says only
// whether it carries: serving_estimate) and no margin is added. -1 (and a miss) when max_gpus is
// reached first.
int CandidateEvaluator::margin_replicas(const GpuSpec& gpu, PerfQuery& query, PerfEstimate& perf, bool decided,
                                        int serving, int spares, int per_replica, int max_gpus, Miss& miss) const {
    const double rate = m_workload.inference.requests_per_s;
    if (decided && perf.inference && !perf.inference->meets_slo) {
        perf = estimate(gpu, query);  // no SLO required: from the full figures
        decided = false;
    }
    if (m_policy.exact_count || rate <= 0 || !perf.inference) {
        return 0;
    }
    const SpeedQuantile& speed = speed_at(gpu, query.layout);
    const double capacity = perf.inference->max_requests_per_s_meeting_slo;
    if (capacity * speed.slow >= rate * (1 - 1e-9)) {
        if (decided && !m_policy.sizing_only) {
            perf = estimate(gpu, query);  // the candidate's own estimate
        }
        return 0;
    }
    // The fewest replicas that carry it, by doubling and halving (capacity grows with replicas):
    // one estimate per replica added made 2^20 GPUs' worth of replicas minutes of work (issue 38).
    const auto at = [&](int replicas) {
        PerfQuery wider = query;
        wider.layout.data_parallel = replicas;
        if (!m_policy.sizing_only) {
            return std::pair{wider, estimate(gpu, wider)};
        }
        PerfQuery asked = wider;
        asked.capacity_needed_rps = rate * (1 - 1e-9);
        asked.capacity_factor = speed_at(gpu, wider.layout).slow;
        return std::pair{wider, estimate(gpu, asked)};
    };
    // Each count tried asks only whether its capacity reaches the threshold: perf's search stops
    // as soon as that is decided (PerfQuery::capacity_needed_rps), the same answer in a fraction
    // of the bisection; the count found is then estimated in full.
    const auto carries = [&](int replicas) {
        PerfQuery wider = query;
        wider.layout.data_parallel = replicas;
        wider.capacity_needed_rps = rate * (1 - 1e-9);
        wider.capacity_factor = speed.slow;
        const PerfEstimate& found = estimate(gpu, wider);
        return found.inference && found.inference->meets_slo &&
               found.inference->max_requests_per_s_meeting_slo * speed.slow >= rate * (1 - 1e-9);
    };
    const int most = max_gpus / per_replica - spares;
    if (const std::optional<int> replicas = smallest_holding(serving + 1, most, carries);
        replicas && *replicas <= most) {
        std::tie(query, perf) = at(*replicas);
        return *replicas - serving;
    }
    // `perf` may say only whether it carried the load (PerfQuery::capacity_needed_rps): the
    // share is reported from the full figure.
    const PerfEstimate& full = estimate(gpu, query);
    const double full_capacity = full.inference ? full.inference->max_requests_per_s_meeting_slo : 0;
    const double share = full_capacity > 0 ? 1 - band_share_below(speed.band, rate / full_capacity) : 0;
    const int gpus = (serving + spares) * per_replica;
    note_miss(miss, {gpu.id, RejectionKind::max_gpus, "constraints.max_gpus", static_cast<double>(gpus + per_replica),
                     static_cast<double>(max_gpus), gpus,
                     fmt::format("meets the SLO in {:.0f} % of scenarios (needs {:.0f} %) at {} GPUs; a margin replica "
                                 "would exceed constraints.max_gpus {}",
                                 100 * share, m_workload.confidence * 100, gpus, max_gpus)});
    return -1;
}

std::optional<PerfEstimate> CandidateEvaluator::single_replica(const GpuSpec& gpu, const MemoryQuery& query,
                                                               double usable_bytes, PerfQuery& perf_query) const {
    PerfEstimate single = estimate(gpu, perf_query);
    if (!single.inference) {
        return std::nullopt;
    }
    if (m_workload.inference.batch == 0 && single.inference->batch > 1) {
        // An automatic batch larger than the memory holds: serve the largest that fits.
        MemoryQuery at_batch = query;
        at_batch.batch = single.inference->batch;
        if (memory_breakdown(m_workload, gpu, at_batch).total_bytes > usable_bytes) {
            const MemoryEstimate limits = estimate_memory(m_workload, gpu, query);
            if (limits.max_batch >= 1) {
                perf_query.batch = limits.max_batch;
                single = estimate(gpu, perf_query);
                if (!single.inference) {
                    return std::nullopt;
                }
            }
        }
        // Outside a paged engine (whose memory is a fixed share of the device) the batch must fit
        // at the memory band's confidence quantile too: the largest that does, by bisection
        // (memory grows with the batch).
        const int confident = confident_batch(gpu, query, usable_bytes, single.inference->batch);
        if (confident != single.inference->batch && confident >= 1) {
            perf_query.batch = confident;
            single = estimate(gpu, perf_query);
            if (!single.inference) {
                return std::nullopt;
            }
        }
    }
    return single;
}

std::optional<CandidateEvaluator::Replicas> CandidateEvaluator::replicas_for(const InferencePerf& single,
                                                                             int gpus_per_replica, int max_gpus,
                                                                             Miss& miss) const {
    // Replicas that carry the load, plus the spare ones deployment.redundancy asks for (a fixed
    // line: its replicas minus the spares, which carry no load).
    Replicas replicas;
    if (m_policy.exact_count) {
        const int total = *m_policy.exact_count / gpus_per_replica;
        replicas.spares = spare_replicas_of_order(m_workload.deployment, total);
        replicas.serving = total - replicas.spares;
        return replicas;
    }
    // The fleet's capacity is perf's queueing model over all replicas (requests pooled behind one
    // balancer), which is not additive: N replicas carry more than N × one replica's largest load.
    // So the count is the one perf finds meeting the SLO at the offered load (replicas_needed, the
    // same search `gpusel perf` prints), not the load divided by one replica's capacity; division
    // only where perf finds no count (the SLO cannot be met at any: the estimate then says why).
    if (single.meets_slo) {
        replicas.serving = 1;
    } else if (single.replicas_needed > 0) {
        replicas.serving = single.replicas_needed;
    } else {
        const double capacity =
            single.max_requests_per_s_meeting_slo > 0 ? single.max_requests_per_s_meeting_slo : single.requests_per_s;
        replicas.serving =
            capacity > 0
                ? std::max(1, static_cast<int>(std::ceil(m_workload.inference.requests_per_s / capacity - 1e-9)))
                : 1;
    }
    replicas.spares = spare_replicas_for_serving(m_workload.deployment, replicas.serving);
    const int gpus = (replicas.serving + replicas.spares) * gpus_per_replica;
    if (gpus > max_gpus) {
        note_miss(miss, {"", RejectionKind::max_gpus, "constraints.max_gpus", static_cast<double>(gpus),
                         static_cast<double>(max_gpus), gpus,
                         fmt::format("needs {} GPUs for {:g} req/s > constraints.max_gpus {}", gpus,
                                     m_workload.inference.requests_per_s, max_gpus)});
        return std::nullopt;
    }
    return replicas;
}

double CandidateEvaluator::served_requests_per_s(const Candidate& candidate) const {
    if (m_workload.inference.concurrency > 0 && candidate.perf.inference) {
        return candidate.perf.inference->offered_requests_per_s;
    }
    return m_workload.inference.requests_per_s;
}

UsageProfile CandidateEvaluator::inference_usage(int gpus, int gpus_per_replica, double requests_per_s) const {
    UsageProfile usage;
    usage.gpus = gpus;
    usage.service = true;
    usage.average_utilization = m_workload.deployment.utilization;
    usage.min_gpus = std::min(gpus, m_workload.deployment.min_replicas * gpus_per_replica);
    const double served_requests =
        requests_per_s * m_workload.deployment.utilization * m_workload.deployment.horizon_months * seconds_per_month;
    if (m_workload.model.is_transformer()) {
        // Encoders and prefill-only scoring are priced per 1M input tokens (nothing is generated).
        const int priced_tokens = m_workload.inference.output_tokens > 0 ? m_workload.inference.output_tokens
                                                                         : m_workload.inference.input_tokens;
        usage.work_units = served_requests * priced_tokens / 1e6;
        usage.unit = "1M tokens";
    } else {
        usage.work_units = served_requests / 1e3;
        usage.unit = m_workload.task() == InferenceTask::diffusion ? "1k images" : "1k requests";
    }
    return usage;
}

}  // namespace gpusel::plan_detail
