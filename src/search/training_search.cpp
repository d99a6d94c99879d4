// Exhaustive search of training layouts on one GPU type; the contract and the pruning rules are in
// include/gpusel/training_search.hpp, the measurements in docs/performance.md.

#include "search/training_search.hpp"

#include <algorithm>
#include <map>

#include "memory/memory.hpp"
#include "search/compiled_training.hpp"

namespace gpusel {

namespace {

// What a search varies besides precision and recompute.
struct Dimensions {
    std::vector<int> tensor;
    std::vector<int> pipeline;
    std::vector<Sharding> shardings;
    std::vector<int> micro_batches;
};

Dimensions dimensions(const Workload& workload, const GpuSpec& gpu, int max_count) {
    const TrainingSpec& training = workload.training;
    Dimensions dims;
    const int domain = gpu.has_gpu_interconnect() ? gpu.interconnect.domain_size : 1;
    const int node = std::max(1, workload.constraints.gpus_per_node);
    if (training.tensor_parallel > 0) {
        dims.tensor.push_back(training.tensor_parallel);
    } else {
        // Tensor parallelism exchanges activations every layer: keep it inside one NVLink domain
        // and one node (Narayanan et al. 2021, §3.3), at most 8 as in every published recipe.
        for (int t = 1; t <= std::min({max_count, domain, node, 8}); t *= 2) {
            dims.tensor.push_back(t);
        }
    }
    if (training.pipeline_parallel > 0) {
        dims.pipeline.push_back(training.pipeline_parallel);
    } else if (workload.model.is_transformer() && workload.model.layers > 0) {
        // Megatron splits the layers evenly over the stages: the degree divides the layer count.
        for (int p = 1; p <= std::min(max_count, workload.model.layers); ++p) {
            if (workload.model.layers % p == 0) {
                dims.pipeline.push_back(p);
            }
        }
    } else {
        dims.pipeline.push_back(1);
    }
    if (training.sharding_given) {
        dims.shardings.push_back(training.sharding);
    } else {
        dims.shardings = {Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3};
    }
    dims.micro_batches =
        training.micro_batch_options.empty() ? std::vector<int>{training.micro_batch} : training.micro_batch_options;
    return dims;
}

// The data-parallel degrees of a (tp, pp) pair. With a global batch, Megatron's rule: it must be
// micro-batch × sequence replicas × accumulation steps, so the replicas (dp / context_parallel)
// divide it. Without one, the cluster sizes are powers of two (a global batch of micro-batch ×
// replicas grows with them). Under context parallelism dp is a multiple of it.
std::vector<int> data_parallel_degrees(const Workload& workload, int model_parallel, int max_count,
                                       const std::optional<int>& fixed_count) {
    const int context_parallel = std::max(1, workload.training.context_parallel);
    std::vector<int> degrees;
    if (fixed_count) {
        if (*fixed_count % model_parallel == 0 && (*fixed_count / model_parallel) % context_parallel == 0) {
            degrees.push_back(*fixed_count / model_parallel);
        }
        return degrees;
    }
    const int global = workload.training.global_batch;
    const int most = max_count / model_parallel;
    if (global > 0) {
        for (int replicas = 1; replicas <= std::min(most / context_parallel, global); ++replicas) {
            if (global % replicas == 0) {
                degrees.push_back(replicas * context_parallel);
            }
        }
        return degrees;
    }
    for (long long count = 1; count <= max_count; count *= 2) {
        if (count % model_parallel == 0 && (count / model_parallel) % context_parallel == 0) {
            degrees.push_back(static_cast<int>(count / model_parallel));
        }
    }
    return degrees;
}

// The micro-batches that run a whole number of accumulation steps at `dp`.
bool micro_batch_valid(const Workload& workload, int micro_batch, int data_parallel) {
    const long long global = workload.training.global_batch;
    const long long replicas = workload.training.sequence_replicas(data_parallel);
    return global <= 0 || global % (static_cast<long long>(micro_batch) * replicas) == 0;
}

struct Evaluation {
    double memory_total_bytes = 0;
    bool speed = false;  // the fields below were computed
    double samples_per_s = 0;
    double time_to_train_s = 0;
    bool meets_deadline = true;
};

// The full estimators, one point at a time: the reference the fast path is checked against, and
// the path for workloads CompiledTraining does not cover.
class ReferenceEvaluator {
public:
    ReferenceEvaluator(const Workload& workload, Precision precision, Checkpointing checkpointing, const GpuSpec& gpu,
                       const EfficiencyTable& efficiency)
        : m_workload(workload),
          m_precision(precision),
          m_checkpointing(checkpointing),
          m_gpu(gpu),
          m_efficiency(efficiency) {}

    Layout layout(int tp, int pp, int dp, Sharding sharding) const {
        Layout layout;
        layout.tensor_parallel = tp;
        layout.pipeline_parallel = pp;
        layout.data_parallel = dp;
        layout.sharding = sharding;
        layout.offload = m_workload.training.offload;
        layout.context_parallel = m_workload.training.context_parallel;
        if (m_workload.model.is_moe()) {
            layout.expert_parallel = std::min(dp, m_workload.model.experts);
        }
        return layout;
    }

    double memory(const Layout& layout, int micro_batch) const {
        MemoryQuery query;
        query.layout = layout;
        query.micro_batch = micro_batch;
        query.precision = m_precision;
        query.checkpointing = m_checkpointing;
        return memory_breakdown(m_workload, m_gpu, query).total_bytes;
    }

    bool speed(const Layout& layout, int micro_batch, Evaluation& evaluation) const {
        PerfQuery query;
        query.layout = layout;
        query.micro_batch = micro_batch;
        query.precision = m_precision;
        query.checkpointing = m_checkpointing;
        const PerfEstimate perf = estimate_perf(m_workload, m_gpu, query, m_efficiency);
        if (!perf.training) {
            return false;
        }
        evaluation.speed = true;
        evaluation.samples_per_s = perf.training->samples_per_s;
        evaluation.time_to_train_s = perf.training->time_to_train_s.value_or(0);
        evaluation.meets_deadline = perf.training->meets_deadline;
        return true;
    }

private:
    const Workload& m_workload;
    const Precision m_precision;
    const Checkpointing m_checkpointing;
    const GpuSpec& m_gpu;
    const EfficiencyTable& m_efficiency;
};

class Search {
public:
    Search(const Workload& workload, const GpuSpec& gpu, const EfficiencyTable& efficiency,
           const TrainingSearchOptions& options)
        : m_workload(workload),
          m_gpu(gpu),
          m_efficiency(efficiency),
          m_options(options),
          m_usable_bytes(gpu.memory_bytes * (1.0 - workload.constraints.memory_headroom_fraction)) {}

    TrainingSearchResult run() {
        const int max_count = m_options.fixed_count ? *m_options.fixed_count : m_workload.constraints.max_gpus;
        const Dimensions dims = dimensions(m_workload, m_gpu, max_count);
        for (const PrecisionChoice& precision : precision_choices(m_workload, m_gpu)) {
            for (const Checkpointing checkpointing : checkpointing_choices(m_workload)) {
                search_variant(precision, checkpointing, dims, max_count);
            }
        }
        for (auto& [count, choice] : m_best) {
            m_result.best_per_count.push_back(choice);
        }
        return std::move(m_result);
    }

private:
    // What stays fixed while one precision × recompute variant of the workload is searched.
    struct Variant {
        const PrecisionChoice& precision;
        Checkpointing checkpointing;
        const CompiledTraining* compiled;  // nullptr: the full estimators evaluate every point
        const ReferenceEvaluator& reference;
        bool prune;
        int global_batch;  // 0 = micro-batch × data parallel
    };

    // One (tp, pp, dp) layout with the micro-batches and shardings it can run.
    struct Block {
        int tp = 1;
        int pp = 1;
        int dp = 1;
        int count = 1;
        std::vector<int> micro_batches;
        std::vector<Sharding> shardings;
    };

    void search_variant(const PrecisionChoice& precision, Checkpointing checkpointing, const Dimensions& dims,
                        int max_count) {
        const std::optional<CompiledTraining> compiled =
            m_options.reference
                ? std::nullopt
                : CompiledTraining::compile(m_workload, m_gpu, m_efficiency, precision.precision, checkpointing);
        const ReferenceEvaluator reference(m_workload, precision.precision, checkpointing, m_gpu, m_efficiency);
        // Pruning rests on properties of the closed forms (monotone memory, the compute bound); the
        // full estimators' other paths (calibration fits, per-sample figures) are scanned whole.
        const bool prune = !m_options.reference && compiled.has_value();
        const Variant context{precision, checkpointing, compiled ? &*compiled : nullptr,
                              reference, prune,         m_workload.training.global_batch};
        Block block;  // its vectors are reused from block to block
        for (const int tp : dims.tensor) {
            for (const int pp : dims.pipeline) {
                if (static_cast<long long>(tp) * pp > max_count) {
                    continue;
                }
                for (const int dp : data_parallel_degrees(m_workload, tp * pp, max_count, m_options.fixed_count)) {
                    fill_block(dims, tp, pp, dp, block);
                    const std::size_t points = block.micro_batches.size() * block.shardings.size();
                    m_result.space += points;
                    if (points == 0 || block_cannot_win(context, block)) {
                        continue;
                    }
                    search_block(context, block);
                }
            }
        }
    }

    void fill_block(const Dimensions& dims, int tp, int pp, int dp, Block& block) const {
        block.tp = tp;
        block.pp = pp;
        block.dp = dp;
        block.count = tp * pp * dp;
        block.micro_batches.clear();
        for (const int micro_batch : dims.micro_batches) {
            // A proposal's GPU count is given: when it does not divide the global batch,
            // the accumulation steps are rounded (estimate_perf says so in a note).
            if (m_options.fixed_count || micro_batch_valid(m_workload, micro_batch, dp)) {
                block.micro_batches.push_back(micro_batch);
            }
        }
        block.shardings.clear();
        for (const Sharding sharding : dims.shardings) {
            // Sharding over one replica changes nothing: only the unsharded point.
            if (dp > 1 || sharding == Sharding::none || m_workload.training.sharding_given) {
                block.shardings.push_back(sharding);
            }
        }
    }

    // No point of the block can run faster than its compute alone; true when the best point found
    // at its GPU count already does (the bound assumes micro-batch × dp divides the global batch:
    // not so at a fixed count).
    bool block_cannot_win(const Variant& variant, const Block& block) const {
        if (!variant.prune || m_options.fixed_count) {
            return false;
        }
        const auto best = m_best.find(block.count);
        // samples/s = global / step (global = micro-batch × dp when not given).
        const double bound = static_cast<double>(variant.global_batch > 0 ? variant.global_batch : block.dp) /
                             variant.compiled->step_time_lower_bound_s(block.tp, block.pp, block.dp);
        // The margin keeps a rounding error in the bound from pruning a tie.
        return best != m_best.end() && best->second.samples_per_s >= bound * (1 + 1e-9);
    }

    void search_block(const Variant& variant, const Block& block) {
        const CompiledTraining* compiled = variant.compiled;
        std::optional<TrainingLayoutTerms> terms;
        if (compiled) {
            terms = compiled->layout_terms(block.tp, block.pp, block.dp);
        }
        const std::vector<int>& micro_batches = block.micro_batches;
        for (const Sharding sharding : block.shardings) {
            const Layout layout = variant.reference.layout(block.tp, block.pp, block.dp, sharding);
            for (std::size_t index = 0; index < micro_batches.size(); ++index) {
                const int micro_batch = micro_batches[index];
                ++m_result.evaluated;
                Evaluation evaluation;
                evaluation.memory_total_bytes = compiled ? compiled->memory_total_bytes(*terms, sharding, micro_batch)
                                                         : variant.reference.memory(layout, micro_batch);
                if (evaluation.memory_total_bytes > m_usable_bytes) {
                    note_memory_miss(evaluation.memory_total_bytes, block.count, layout, micro_batch, variant.precision,
                                     variant.checkpointing);
                    if (!variant.prune) {
                        continue;
                    }
                    const std::size_t next = next_micro_batch_after_memory_miss(variant, block, index);
                    if (next == micro_batches.size()) {
                        break;
                    }
                    index = next - 1;  // the loop's ++ lands on it
                    continue;
                }
                if (compiled) {
                    const TrainingPointResult point = compiled->evaluate(*terms, sharding, micro_batch);
                    evaluation.speed = true;
                    evaluation.samples_per_s = point.samples_per_s;
                    evaluation.time_to_train_s = point.time_to_train_s;
                    evaluation.meets_deadline = point.meets_deadline;
                } else if (!variant.reference.speed(layout, micro_batch, evaluation)) {
                    continue;
                }
                record_point(variant, block.count, layout, micro_batch, evaluation);
            }
        }
    }

    // Memory grows with the micro-batch among those that accumulate (micro-batch × dp < global
    // batch: the gradients stay resident) and among those that do not; the first of the second
    // kind may need less (set-to-none frees its gradients between steps): the scan goes on from
    // there. The index of that micro-batch, or the end when no smaller need is possible.
    std::size_t next_micro_batch_after_memory_miss(const Variant& variant, const Block& block,
                                                   std::size_t index) const {
        const std::vector<int>& micro_batches = block.micro_batches;
        const int global = variant.global_batch;
        const long long dp = block.dp;
        const bool accumulating = global > 0 && micro_batches[index] * dp < global;
        if (!accumulating || m_workload.training.zero_grad == ZeroGrad::zero) {
            return micro_batches.size();
        }
        std::size_t next = index + 1;
        while (next < micro_batches.size() && micro_batches[next] * dp < global) {
            ++next;
        }
        return next;
    }

    void record_point(const Variant& variant, int count, const Layout& layout, int micro_batch,
                      const Evaluation& evaluation) {
        if (!evaluation.meets_deadline && m_options.require_deadline) {
            note_nearer(m_result.miss.deadline, evaluation.time_to_train_s, m_workload.training.deadline_seconds,
                        count);
            return;
        }
        ++m_result.feasible;
        TrainingChoice& best = m_best[count];
        if (evaluation.samples_per_s > best.samples_per_s) {
            best.layout = layout;
            best.micro_batch = micro_batch;
            best.precision = variant.precision;
            best.checkpointing = variant.checkpointing;
            best.samples_per_s = evaluation.samples_per_s;
            best.memory_total_bytes = evaluation.memory_total_bytes;
            best.meets_deadline = evaluation.meets_deadline;
        }
    }

    static void note_nearer(std::optional<NearMiss>& nearest, double needed, double available, int count) {
        if (!nearest || needed / available < nearest->needed / nearest->available) {
            nearest = NearMiss{needed, available, count};
        }
    }

    void note_memory_miss(double memory_total_bytes, int count, const Layout& layout, int micro_batch,
                          const PrecisionChoice& precision, Checkpointing checkpointing) {
        note_nearer(m_result.miss.memory, memory_total_bytes, m_usable_bytes, count);
        std::optional<TrainingChoice>& least = m_result.least_memory;
        if (!least || memory_total_bytes < least->memory_total_bytes) {
            least = TrainingChoice{layout, micro_batch, precision, checkpointing, 0, memory_total_bytes, false};
        }
    }

    const Workload& m_workload;
    const GpuSpec& m_gpu;
    const EfficiencyTable& m_efficiency;
    const TrainingSearchOptions& m_options;
    const double m_usable_bytes;
    std::map<int, TrainingChoice> m_best;  // by GPU count
    TrainingSearchResult m_result;
};

}  // namespace

std::vector<PrecisionChoice> precision_choices(const Workload& workload, const GpuSpec& gpu) {
    const std::vector<Precision> wanted =
        workload.precision_options.empty() ? std::vector<Precision>{workload.precision} : workload.precision_options;
    std::vector<PrecisionChoice> choices;
    for (const Precision precision : wanted) {
        if (gpu.supports(precision)) {
            choices.push_back({precision, false});
        }
    }
    if (!choices.empty()) {
        return choices;
    }
    for (const Precision option : {Precision::bf16, Precision::fp16, Precision::fp32}) {
        if (option != wanted.front() && gpu.supports(option) &&
            element_bytes(option) >= element_bytes(wanted.front())) {
            return {{option, true}};
        }
    }
    return {};
}

std::vector<Checkpointing> checkpointing_choices(const Workload& workload) {
    return workload.training.checkpointing_options.empty() ? std::vector<Checkpointing>{workload.training.checkpointing}
                                                           : workload.training.checkpointing_options;
}

TrainingSearchResult search_training(const Workload& workload, const GpuSpec& gpu, const EfficiencyTable& efficiency,
                                     const TrainingSearchOptions& options) {
    return Search(workload, gpu, efficiency, options).run();
}

}  // namespace gpusel
