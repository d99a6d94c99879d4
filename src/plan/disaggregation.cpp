// Prefill/decode disaggregation (docs/perf-model.md, "Disaggregated serving"). The split is the
// one DistServe (Zhong et al., OSDI 2024) and Splitwise (Patel et al., ISCA 2024) describe and
// NVIDIA Dynamo and SGLang ship: prompts run on prefill workers, whose KV cache moves to decode
// workers that only decode, so a long prefill never stalls a decode step. Every time is the
// co-located perf model's (estimate_perf); every price the co-located pick's offer
// (estimate_cost).

#include "plan/disaggregation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "base/format.hpp"
#include "cost/offer_selection.hpp"
#include "plan/internal.hpp"
#include "plan/plan.hpp"
#include "plan/redundancy.hpp"
#include "plan/robustness.hpp"

namespace gpusel {

double kv_transfer_seconds(double bytes, int lanes, double bytes_per_s, double latency_s) {
    if (bytes <= 0 || bytes_per_s <= 0) {
        return 0;
    }
    return bytes / (std::max(1, lanes) * bytes_per_s) + latency_s;
}

PrefillQueue prefill_queue(int workers, double requests_per_s, double prefill_s, double quantile) {
    PrefillQueue queue;
    const double load = requests_per_s * prefill_s;  // Erlangs
    queue.utilisation = workers > 0 ? load / workers : 1;
    if (workers < 1 || queue.utilisation >= 1) {
        return queue;
    }
    queue.stable = true;
    // perf/inference.cpp (Serving::at): M/D/c as half the M/M/c mean wait (Allen–Cunneen), tail
    // P(W > t) = P_w·exp(−P_w·t / W̄).
    const double wait_probability = erlang_c_wait_probability(workers, load);
    const double mean_wait = wait_probability * prefill_s / (workers - load) / 2;
    const double miss = 1 - quantile;
    if (wait_probability > miss && mean_wait > 0) {
        queue.wait_s = mean_wait / wait_probability * std::log(wait_probability / miss);
    }
    return queue;
}

namespace {

// The smallest n with P(N ≤ n) ≥ quantile for N ~ Poisson(mean): the sequences in flight on a
// decode worker (M/G/∞ holds a Poisson number of requests, each for its whole decode).
int poisson_quantile(double mean, double quantile) {
    if (mean <= 0) {
        return 0;
    }
    double term = std::exp(-mean);
    if (term <= 0) {
        // exp underflows past a mean of ~700: the normal approximation's 3σ is then beyond
        // any percentile a report shows.
        return static_cast<int>(std::ceil(mean + 3 * std::sqrt(mean)));
    }
    double cumulative = term;
    int n = 0;
    while (cumulative < quantile && n < 1 << 20) {
        ++n;
        term *= mean / n;
        cumulative += term;
    }
    return n;
}

struct PhaseOption {
    const GpuSpec* gpu = nullptr;
    // Tensor parallel only: serving layouts leave expert_parallel at 1 (the memory model reads it
    // as a training split within data parallel); perf reads the workload's
    // inference.expert_parallel, set per phase in phase_workload.
    Layout layout;
    int expert_parallel = 1;
    Precision precision = Precision::bf16;
    ServingStack stack = ServingStack::optimized;
    std::string engine;
};

// One GPU type the split may use, priced with the co-located candidate's offer of that type.
struct PricedGpu {
    const GpuSpec* gpu = nullptr;
    const Candidate* candidate = nullptr;  // its best co-located candidate (offer, precision, stack)
    OfferQuote quote;
};

class Sizer {
public:
    Sizer(const RolePlan& plan, const Catalog& catalog, const EfficiencyTable& efficiency)
        : m_plan(plan), m_catalog(catalog), m_efficiency(efficiency), m_workload(plan.workload) {
        // Decode and prefill are estimated alone, at one request at a time (open loop): the
        // queueing here is the split's own.
        m_workload.inference.concurrency = 0;
        m_workload.inference.requests_per_s = 1e-9;
    }

    std::optional<DisaggregatedPlan> run();

private:
    struct DecodePoint {
        bool fits = false;
        int batch = 0;      // largest batch meeting the TPOT SLO that memory holds
        double step_s = 0;  // at `batch`
        std::map<int, double> steps;
    };

    struct PrefillChoice {
        const PricedGpu* gpu;
        PhaseOption option;
        double prefill_s;
        // The engine's per-request latency (front end, scheduler hand-off): in the TTFT as in
        // co-located serving, no GPU time (docs/perf-model.md, "Validation under load").
        double request_latency_s;
    };
    struct DecodeChoice {
        const PricedGpu* gpu;
        PhaseOption option;
        DecodePoint point;
    };
    // The search's state over every pair of phase options: the cheapest split so far.
    struct Search {
        DisaggregatedPlan best;
        double best_tco;
        bool found;
        bool any;  // some (x, y) met both SLOs at the current group count
        const PricedGpu* prefill_type;
        const PricedGpu* decode_type;
        double rate;  // requests/s the split is sized for (the offered load / the speed margin)
        double quantile;
        double output_tokens;
        double kv_bytes;
    };
    enum class Step { next, stop };  // raise the decode workers, or stop raising them

    // Every group count, prefill count x and decode count y for one pair of phase options.
    void search_pair(const PrefillChoice& prefill_choice, DecodeChoice& decode_choice, Search& search) const;
    // x prefill and y decode workers per group: recorded in `search` when they meet both SLOs
    // and cost less than the best so far.
    Step try_counts(const PrefillChoice& prefill_choice, DecodeChoice& decode_choice, int groups, int x, int y,
                    Search& search) const;
    std::vector<PricedGpu> gpu_types() const;
    std::vector<int> tensor_parallel_options(const PricedGpu& gpu, int fixed) const;
    PhaseOption option(const PricedGpu& gpu, int tensor_parallel, int expert_parallel) const;
    // The workload at the phase's expert parallel (what perf/inference.cpp reads).
    const Workload& phase_workload(const PhaseOption& option) const;
    std::optional<double> prefill_time(const PhaseOption& option) const;
    std::optional<double> decode_step(const PhaseOption& option, int batch) const;
    std::optional<DecodePoint> decode_point(const PhaseOption& option) const;
    LinkTier kv_link(const PhaseOption& prefill, const PhaseOption& decode, int group_gpus) const;
    double price(const PricedGpu& prefill, int prefill_gpus, const PricedGpu& decode, int decode_gpus) const;
    // The split's order lines when chosen, priced as `price` prices them.
    std::vector<DisaggregatedOrder> order(const PricedGpu& prefill, int prefill_gpus, const PricedGpu& decode,
                                          int decode_gpus) const;
    int spares(int workers) const;

    const RolePlan& m_plan;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    Workload m_workload;
    mutable std::map<int, Workload> m_phase_workloads;
};

std::vector<PricedGpu> Sizer::gpu_types() const {
    // The cheapest few GPU types of the co-located ranking (each priced with its own best offer),
    // and any type the workload fixes.
    constexpr std::size_t most_types = 3;
    std::vector<PricedGpu> types;
    const DisaggregationSpec& spec = *m_workload.deployment.disaggregated;
    const auto add = [&](const std::string& id, const Candidate* candidate) {
        for (const PricedGpu& known : types) {
            if (known.gpu->id == id) {
                return;
            }
        }
        const GpuSpec* gpu = m_catalog.find(id);
        const Candidate* basis = candidate != nullptr ? candidate : &*m_plan.winner;
        if (gpu == nullptr) {
            return;
        }
        const Acquisition acquisition = basis->acquisition;
        std::vector<OfferQuote> quotes = quotes_for(m_catalog, m_workload, *gpu, acquisition);
        if (quotes.empty()) {
            return;
        }
        PricedGpu priced{gpu, basis, quotes.front()};
        for (OfferQuote& quote : quotes) {
            if (candidate != nullptr && quote.offer != nullptr && quote.offer->id == candidate->cost.offer.id) {
                priced.quote = quote;
                break;
            }
        }
        types.push_back(priced);
    };
    for (const std::string& fixed : {spec.prefill.gpu, spec.decode.gpu}) {
        if (!fixed.empty()) {
            const Candidate* same = nullptr;
            for (const Candidate& candidate : m_plan.ranked) {
                if (candidate.gpu == fixed) {
                    same = &candidate;
                    break;
                }
            }
            add(fixed, same);
        }
    }
    for (const Candidate& candidate : m_plan.ranked) {
        if (types.size() >= most_types + 2) {
            break;
        }
        std::size_t ranked_types = 0;
        for (const PricedGpu& known : types) {
            if (known.gpu->id != spec.prefill.gpu && known.gpu->id != spec.decode.gpu) {
                ++ranked_types;
            }
        }
        if (ranked_types >= most_types) {
            break;
        }
        if (candidate.perf.inference) {
            add(candidate.gpu, &candidate);
        }
    }
    return types;
}

std::vector<int> Sizer::tensor_parallel_options(const PricedGpu& gpu, int fixed) const {
    if (fixed > 0) {
        return {fixed};
    }
    // One worker per node (tensor parallel inside one NVLink domain); multi-node workers are left
    // to the co-located plan.
    std::vector<int> options;
    const int widest = widest_serving_tensor_parallel(m_workload, *gpu.gpu);
    for (int tensor_parallel = 1; tensor_parallel <= widest; tensor_parallel *= 2) {
        options.push_back(tensor_parallel);
    }
    return options;
}

PhaseOption Sizer::option(const PricedGpu& gpu, int tensor_parallel, int expert_parallel) const {
    PhaseOption result;
    result.gpu = gpu.gpu;
    result.precision = gpu.candidate->precision;
    result.stack = gpu.candidate->perf.stack;
    result.layout.tensor_parallel = tensor_parallel;
    // Expert parallel as perf/inference.cpp resolves inference.expert_parallel (auto: EP = TP
    // under DP attention, else none), within the phase's tensor parallel and the model's experts.
    const InferenceSpec& inference = m_workload.inference;
    const int requested = expert_parallel > 0             ? expert_parallel
                          : inference.expert_parallel > 0 ? inference.expert_parallel
                          : inference.dp_attention        ? tensor_parallel
                                                          : 1;
    result.expert_parallel =
        m_workload.model.is_moe() ? std::clamp(requested, 1, std::min(tensor_parallel, m_workload.model.experts)) : 1;
    return result;
}

const Workload& Sizer::phase_workload(const PhaseOption& option) const {
    auto found = m_phase_workloads.find(option.expert_parallel);
    if (found == m_phase_workloads.end()) {
        Workload phase = m_workload;
        phase.inference.expert_parallel = option.expert_parallel;
        found = m_phase_workloads.emplace(option.expert_parallel, std::move(phase)).first;
    }
    return found->second;
}

std::optional<double> Sizer::prefill_time(const PhaseOption& option) const {
    const Workload& workload = phase_workload(option);
    if (inference_batch_capacity(workload, *option.gpu, option.layout, option.precision) < 1) {
        return std::nullopt;
    }
    PerfQuery query;
    query.layout = option.layout;
    query.batch = 1;
    query.stack = option.stack;
    query.precision = option.precision;
    query.search_capacity = false;
    const PerfEstimate estimate = estimate_perf(workload, *option.gpu, query, m_efficiency);
    if (!estimate.inference || !estimate.inference->fits) {
        return std::nullopt;
    }
    // One prompt alone: a prefill worker runs prompts back to back (chunked prefill batches
    // short ones; long ones fill the GPU alone), so a prompt's prefill is its service time.
    return estimate.inference->batch_prefill_s;
}

std::optional<double> Sizer::decode_step(const PhaseOption& option, int batch) const {
    const Workload& workload = phase_workload(option);
    PerfQuery query;
    query.layout = option.layout;
    query.batch = batch;
    query.stack = option.stack;
    query.precision = option.precision;
    query.search_capacity = false;
    const PerfEstimate estimate = estimate_perf(workload, *option.gpu, query, m_efficiency);
    if (!estimate.inference || !estimate.inference->fits || !estimate.inference->batch_fits) {
        return std::nullopt;
    }
    return estimate.inference->decode_step_s;
}

std::optional<Sizer::DecodePoint> Sizer::decode_point(const PhaseOption& option) const {
    const int capacity = inference_batch_capacity(phase_workload(option), *option.gpu, option.layout, option.precision);
    if (capacity < 1) {
        return std::nullopt;
    }
    const int most = m_workload.runtime.max_num_seqs > 0 ? std::min(capacity, m_workload.runtime.max_num_seqs)
                                                         : std::min(capacity, 1024);
    const double tpot_slo = m_workload.inference.slo.tpot_seconds;
    DecodePoint point;
    const auto step = [&](int batch) -> std::optional<double> {
        const auto cached = point.steps.find(batch);
        if (cached != point.steps.end()) {
            return cached->second;
        }
        const std::optional<double> value = decode_step(option, batch);
        if (value) {
            point.steps[batch] = *value;
        }
        return value;
    };
    const auto holds = [&](int batch) {
        const std::optional<double> value = step(batch);
        return value && (tpot_slo <= 0 || *value <= tpot_slo);
    };
    if (!holds(1)) {
        return std::nullopt;
    }
    // The step grows with the batch: bisect for the largest batch within the TPOT SLO.
    int low = 1;
    int high = most;
    if (holds(high)) {
        low = high;
    }
    while (high - low > 1) {
        const int middle = low + (high - low) / 2;
        (holds(middle) ? low : high) = middle;
    }
    point.fits = true;
    point.batch = low;
    point.step_s = *step(low);
    return point;
}

LinkTier Sizer::kv_link(const PhaseOption& prefill, const PhaseOption& decode, int group_gpus) const {
    // Both phases in one NVLink domain (same part, the group within one domain and one node):
    // the KV cache moves over NVLink; otherwise over each GPU's scale-out NIC
    // (data/efficiency.yaml platform: InfiniBand NDR 400 Gb/s or 100 GbE per GPU, with sources).
    if (prefill.gpu == decode.gpu) {
        const EfficiencyFactors factors = m_efficiency.resolve(*prefill.gpu, prefill.stack);
        LinkTier link = link_for_group(m_workload, *prefill.gpu, group_gpus, factors, m_efficiency.platform);
        if (link.nvlink) {
            return link;
        }
    }
    LinkTier slowest;
    for (const PhaseOption* side : {&prefill, &decode}) {
        const EfficiencyFactors factors = m_efficiency.resolve(*side->gpu, side->stack);
        // A group wider than the node crosses the network.
        const int across = std::max(m_workload.constraints.gpus_per_node, side->gpu->interconnect.domain_size) + 1;
        const LinkTier link = link_for_group(m_workload, *side->gpu, across, factors, m_efficiency.platform);
        if (slowest.bytes_per_s <= 0 || link.bytes_per_s < slowest.bytes_per_s) {
            slowest = link;
        }
    }
    return slowest;
}

double Sizer::price(const PricedGpu& prefill, int prefill_gpus, const PricedGpu& decode, int decode_gpus) const {
    const auto cost_of = [&](const PricedGpu& type, int gpus) {
        UsageProfile usage = m_plan.winner->usage;
        usage.gpus = gpus;
        usage.min_gpus = std::min(usage.min_gpus, gpus);
        const CostEstimate cost = estimate_cost(m_workload, *type.gpu, type.quote, usage);
        return cost.available ? cost.tco_usd : std::numeric_limits<double>::infinity();
    };
    // One GPU type: one pool of units (a prefill and a decode worker may share a server).
    if (prefill.gpu == decode.gpu) {
        return cost_of(prefill, prefill_gpus + decode_gpus);
    }
    return cost_of(prefill, prefill_gpus) + cost_of(decode, decode_gpus);
}

std::vector<DisaggregatedOrder> Sizer::order(const PricedGpu& prefill, int prefill_gpus, const PricedGpu& decode,
                                             int decode_gpus) const {
    const auto entry = [&](const PricedGpu& type, int gpus) {
        UsageProfile usage = m_plan.winner->usage;
        usage.gpus = gpus;
        usage.min_gpus = std::min(usage.min_gpus, gpus);
        return DisaggregatedOrder{type.gpu->id, type.gpu->name, gpus,
                                  estimate_cost(m_workload, *type.gpu, type.quote, usage)};
    };
    if (prefill.gpu == decode.gpu) {
        return {entry(prefill, prefill_gpus + decode_gpus)};
    }
    return {entry(prefill, prefill_gpus), entry(decode, decode_gpus)};
}

// deployment.redundancy as the co-located plan applies it to replicas (plan/redundancy.hpp): one
// spare worker of each phase for n+1, the fraction of the workers (rounded up) otherwise.
int Sizer::spares(int workers) const {
    return spare_replicas_for_serving(m_workload.deployment, workers);
}

void Sizer::search_pair(const PrefillChoice& prefill_choice, DecodeChoice& decode_choice, Search& search) const {
    const DisaggregationSpec& spec = *m_workload.deployment.disaggregated;
    const DecodePoint& point = decode_choice.point;
    // The most requests/s one decode worker carries at its largest batch within the TPOT SLO
    // (Little's law: batch = rate × output tokens × step).
    const double worker_rps = point.batch / (search.output_tokens * point.step_s);
    // Fixed counts per group: as many groups as the load needs.
    const int most_groups = spec.prefill.count > 0 || spec.decode.count > 0 ? 256 : 1;
    for (int groups = 1; groups <= most_groups; ++groups) {
        const double group_rate = search.rate / groups;
        search.any = false;
        const int from_x = spec.prefill.count > 0
                               ? spec.prefill.count
                               : std::max(1, static_cast<int>(std::floor(group_rate * prefill_choice.prefill_s)) + 1);
        const int to_x = spec.prefill.count > 0 ? spec.prefill.count : from_x + 16;
        for (int x = from_x; x <= to_x; ++x) {
            const int from_y = spec.decode.count > 0
                                   ? spec.decode.count
                                   : std::max(1, static_cast<int>(std::floor(group_rate / worker_rps)) + 1);
            const int to_y = spec.decode.count > 0 ? spec.decode.count : from_y + 16;
            for (int y = from_y; y <= to_y; ++y) {
                if (try_counts(prefill_choice, decode_choice, groups, x, y, search) == Step::stop) {
                    break;
                }
            }
        }
        if (search.any) {
            break;  // more groups of fixed counts only cost more
        }
    }
}

Sizer::Step Sizer::try_counts(const PrefillChoice& prefill_choice, DecodeChoice& decode_choice, int groups, int x,
                              int y, Search& search) const {
    const SloSpec& slo = m_plan.workload.inference.slo;
    const PricedGpu& prefill_gpu = *prefill_choice.gpu;
    const PhaseOption& prefill = prefill_choice.option;
    const int prefill_tp = prefill.layout.tensor_parallel;
    const std::optional<double> prefill_s = prefill_choice.prefill_s;
    const PricedGpu& decode_gpu = *decode_choice.gpu;
    const PhaseOption& decode = decode_choice.option;
    const int decode_tp = decode.layout.tensor_parallel;
    DecodePoint* point = &decode_choice.point;
    const double rate = search.rate;
    const double quantile = search.quantile;
    const double output_tokens = search.output_tokens;
    const double kv_bytes = search.kv_bytes;
    const double worker_rps = point->batch / (output_tokens * point->step_s);
    const double group_rate = rate / groups;
    DisaggregatedPlan& best = search.best;
    double& best_tco = search.best_tco;
    bool& found = search.found;
    bool& any = search.any;
    const PricedGpu*& best_prefill_type = search.prefill_type;
    const PricedGpu*& best_decode_type = search.decode_type;
    const PrefillQueue queue = prefill_queue(x, group_rate, *prefill_s, quantile);
    if (!queue.stable) {
        return Step::stop;
    }
    const double per_worker = group_rate / y;
    if (per_worker >= worker_rps) {
        return Step::next;
    }
    // Sequences in flight on a decode worker: n = λ_w · O · step(n),
    // climbed from one sequence; its percentile is Poisson's.
    const auto step_at = [&](double batch) {
        const int whole = std::clamp(static_cast<int>(std::ceil(batch)), 1, point->batch);
        const auto cached = point->steps.find(whole);
        if (cached != point->steps.end()) {
            return cached->second;
        }
        const double value = decode_step(decode, whole).value_or(point->step_s);
        point->steps[whole] = value;
        return value;
    };
    const std::optional<double> in_flight =
        smallest_fixed_point([&](double n) { return per_worker * output_tokens * step_at(std::max(1.0, n)); },
                             per_worker * output_tokens * step_at(1), point->batch);
    if (!in_flight) {
        return Step::next;
    }
    const int at_percentile = std::clamp(poisson_quantile(*in_flight, quantile), 1, point->batch);
    const double tpot_s = step_at(at_percentile);
    const int group_gpus = x * prefill_tp + y * decode_tp;
    const LinkTier link = kv_link(prefill, decode, group_gpus);
    // MLA keeps the whole latent on every rank; other KV is split by heads
    // and each prefill rank sends its share to its decode rank at once.
    const int lanes = m_workload.model.is_mla()
                          ? 1
                          : std::max(1, std::min({prefill_tp, decode_tp, std::max(1, m_workload.model.kv_heads)}));
    const double transfer_s = kv_transfer_seconds(kv_bytes / lanes, 1, link.bytes_per_s, link.latency_s);
    const double ttft_s = queue.wait_s + *prefill_s + transfer_s + prefill_choice.request_latency_s;
    const bool meets =
        (slo.ttft_seconds <= 0 || ttft_s <= slo.ttft_seconds) && (slo.tpot_seconds <= 0 || tpot_s <= slo.tpot_seconds);
    if (!meets) {
        return Step::next;
    }
    any = true;
    // One GPU type: a spare worker of the wider phase stands in for
    // either (a TP8 node runs one TP8 or two TP4 workers), so the spares
    // are shared; two types need a spare of each.
    const bool shared = prefill_gpu.gpu == decode_gpu.gpu;
    const int shared_spares = shared ? spares((x + y) * groups) : 0;
    const bool decode_wider = decode_tp >= prefill_tp;
    const int prefill_spares = shared ? (decode_wider ? 0 : shared_spares) : spares(x * groups);
    const int decode_spares = shared ? (decode_wider ? shared_spares : 0) : spares(y * groups);
    const int prefill_gpus = (x * groups + prefill_spares) * prefill_tp;
    const int decode_gpus = (y * groups + decode_spares) * decode_tp;
    const double tco = price(prefill_gpu, prefill_gpus, decode_gpu, decode_gpus);
    if (!(tco < best_tco)) {
        return Step::stop;
    }
    best_tco = tco;
    found = true;
    best_prefill_type = &prefill_gpu;
    best_decode_type = &decode_gpu;
    best.replicas = groups;
    best.prefill = DisaggregatedPhase{
        prefill_gpu.gpu->id, prefill_gpu.gpu->name, x, prefill_tp, prefill.expert_parallel, prefill_gpus,
        queue.utilisation,   prefill_spares,        1, *prefill_s};
    best.decode = DisaggregatedPhase{decode_gpu.gpu->id,
                                     decode_gpu.gpu->name,
                                     y,
                                     decode_tp,
                                     decode.expert_parallel,
                                     decode_gpus,
                                     per_worker / worker_rps,
                                     decode_spares,
                                     point->batch,
                                     point->step_s};
    best.kv_transfer_s = transfer_s;
    best.kv_link = fmt::format("{} {:.0f} GB/s per GPU", link.name, link.bytes_per_s / 1e9);
    best.ttft_s = ttft_s;
    best.request_latency_s = prefill_choice.request_latency_s;
    best.tpot_s = tpot_s;
    best.meets_slo = true;
    best.tco_usd = tco;
    const double prefill_busy = rate * *prefill_s * prefill_tp;
    const double decode_busy = rate * output_tokens * tpot_s / at_percentile * decode_tp;
    best.prefill_share = prefill_busy / (prefill_busy + decode_busy);
    return Step::stop;  // a larger y for this x costs more
}

std::optional<DisaggregatedPlan> Sizer::run() {
    const Candidate& colocated = *m_plan.winner;
    const DisaggregationSpec& spec = *m_workload.deployment.disaggregated;
    const InferenceSpec& inference = m_plan.workload.inference;
    const SloSpec& slo = inference.slo;
    const double quantile = slo.percentile / 100;
    // The load both are sized for: the offered rate, or what the clients get from the co-located
    // pick (inference.concurrency), so that both serve the same tokens.
    double rate = inference.concurrency > 0 && colocated.perf.inference
                      ? colocated.perf.inference->offered_requests_per_s
                      : inference.requests_per_s;
    // Sized at the speed band's slow quantile, as the co-located pick's margin replicas are
    // (plan/candidates.cpp, margin_replicas): the load it must carry at the estimate is
    // rate / slow (the workload's band; a calibration's measured band where it applies).
    const SpeedBand band = speed_band(m_workload, m_efficiency, m_plan.calibration, colocated.gpu, colocated.layout);
    const double slow = std::clamp(
        band_value(speed_distribution(band.percentiles), normal_quantile(1 - m_workload.confidence)), 0.05, 1.0);
    const double offered = rate;
    rate /= slow;
    const double output_tokens = std::max(1, inference.output_tokens);
    const double kv_bytes =
        kv_cache_bytes_per_sequence(m_workload.model, element_bytes(m_workload.kv_cache), inference.input_tokens);

    DisaggregatedPlan best;
    best.requests_per_s = offered;
    best.speed_margin = slow;
    best.percentile = slo.percentile;
    best.kv_bytes = kv_bytes;
    best.colocated_tco_usd = colocated.cost.tco_usd;
    best.colocated_gpus = colocated.count;
    best.colocated_usd_per_million_tokens = colocated.cost.usd_per_unit;
    best.requested = !spec.automatic && !spec.prefill.gpu.empty() && !spec.decode.gpu.empty() &&
                     spec.prefill.count > 0 && spec.decode.count > 0;
    const std::vector<PricedGpu> types = gpu_types();
    std::vector<PrefillChoice> prefills;
    std::vector<DecodeChoice> decodes;
    for (const PricedGpu& type : types) {
        if (spec.prefill.gpu.empty() || type.gpu->id == spec.prefill.gpu) {
            for (const int tensor_parallel : tensor_parallel_options(type, spec.prefill.tensor_parallel)) {
                const PhaseOption phase = option(type, tensor_parallel, spec.prefill.expert_parallel);
                if (const std::optional<double> prefill_s = prefill_time(phase)) {
                    const double request_latency_s =
                        m_efficiency
                            .resolve(*phase.gpu, phase.stack,
                                     resolve_engine(phase_workload(phase), phase.stack, phase.engine))
                            .request_latency_s;
                    prefills.push_back({&type, phase, *prefill_s, request_latency_s});
                }
            }
        }
        if (spec.decode.gpu.empty() || type.gpu->id == spec.decode.gpu) {
            for (const int tensor_parallel : tensor_parallel_options(type, spec.decode.tensor_parallel)) {
                const PhaseOption phase = option(type, tensor_parallel, spec.decode.expert_parallel);
                if (std::optional<DecodePoint> point = decode_point(phase)) {
                    decodes.push_back({&type, phase, std::move(*point)});
                }
            }
        }
    }
    Search search{
        best,    std::numeric_limits<double>::infinity(), false, false, nullptr, nullptr, rate, quantile, output_tokens,
        kv_bytes};
    for (const PrefillChoice& prefill_choice : prefills) {
        for (DecodeChoice& decode_choice : decodes) {
            search_pair(prefill_choice, decode_choice, search);
        }
    }
    best = search.best;
    const bool found = search.found;
    const PricedGpu* best_prefill_type = search.prefill_type;
    const PricedGpu* best_decode_type = search.decode_type;
    if (!found) {
        best.why = "no split of the GPU types tried meets both the TTFT and the TPOT SLO at this load";
        best.usd_per_million_tokens = 0;
        return best;
    }
    const double work_units = colocated.usage.work_units;
    best.usd_per_million_tokens = work_units > 0 ? best.tco_usd / work_units : 0;
    const double margin = std::max(tie_tolerance_fraction * colocated.cost.tco_usd, tie_tolerance_usd);
    const double saving = colocated.cost.tco_usd - best.tco_usd;
    best.chosen = saving > margin;
    const Money money = plan_detail::money_in(m_workload);
    const int split_gpus = best.prefill.gpus + best.decode.gpus;
    const int spare_gpus = best.prefill.spare_workers * best.prefill.tensor_parallel +
                           best.decode.spare_workers * best.decode.tensor_parallel;
    const std::string gpus = fmt::format("{} GPUs{} against {} co-located", split_gpus,
                                         spare_gpus > 0 ? fmt::format(" ({} spare)", spare_gpus) : "", colocated.count);
    const std::string share = fmt::format("prefill is {:.0f} % of the split's GPU time", best.prefill_share * 100);
    // Below this share the prefill is a small interruption that continuous batching absorbs
    // (DistServe §2: disaggregation pays where prefill and decode interfere; an estimate's
    // threshold for the wording only, not a decision rule).
    constexpr double short_prefill_share = 0.15;
    const std::string reason = best.prefill_share < short_prefill_share
                                   ? "short prompts: " + share + "; co-located batching already hides it"
                                   : share;
    if (best.chosen) {
        best.order = order(*best_prefill_type, best.prefill.gpus, *best_decode_type, best.decode.gpus);
        best.why = fmt::format("{}: decode workers batch without prefill stalls; {}, {} less over the horizon", reason,
                               gpus, money.whole(saving));
    } else if (saving > -margin) {
        best.why = fmt::format(
            "{}; {}: within the tie margin of co-located ({} {}, margin {}), and co-located is "
            "simpler to run",
            reason, gpus, money.whole(std::abs(saving)), saving >= 0 ? "less" : "more", money.whole(margin));
    } else {
        best.why = fmt::format("{}; the split needs {}: {} more over the horizon", reason, gpus, money.whole(-saving));
    }
    return best;
}

}  // namespace

std::optional<DisaggregatedPlan> plan_disaggregated(const RolePlan& plan, const Catalog& catalog,
                                                    const EfficiencyTable& efficiency) {
    if (!plan.workload.deployment.disaggregated || !plan.winner || !plan.winner->perf.inference ||
        plan.workload.task() != InferenceTask::generation) {
        return std::nullopt;
    }
    Sizer sizer(plan, catalog, efficiency);
    return sizer.run();
}

}  // namespace gpusel
