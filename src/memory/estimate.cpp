// Per-GPU memory at peak, by component, for training, fine-tuning and inference: the
// training and inference terms (training.cpp, inference.cpp) or a serving engine's budget,
// resolved into what the allocator holds at the peak, with the framework's overheads and the
// range; the largest batch and context that fit.
// Formulas and sources: docs/memory-model.md (each term below names its source).

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "memory/internal.hpp"
#include "memory/memory.hpp"
#include "memory/terms.hpp"

namespace gpusel {

namespace {

using memory_detail::Choices;
using memory_detail::float_weight_uncertainty;
using memory_detail::gb;
using memory_detail::inference_terms;
using memory_detail::is_float_format;
using memory_detail::largest_fitting;
using memory_detail::nccl_bytes_per_communicator;
using memory_detail::NoteList;
using memory_detail::Peak;
using memory_detail::quantized_weight_uncertainty;
using memory_detail::training_terms;
using memory_detail::TrainingResult;

// Context band over GPUs and software versions: 0.3–1.4 GB (docs/reference/formulas.md, HF docs, fms logs).
constexpr double context_low_bytes = 0.3e9;
constexpr double context_high_bytes = 1.4e9;
// Activations: the spread between implementations of the same layer (fused vs unfused SwiGLU,
// fp32 norm upcasts, dropout on or off) is about a quarter of a 20–35-element layer.
constexpr double activation_low_factor = 0.75;
constexpr double activation_high_factor = 1.25;

struct Allocation {
    double weights = 0;
    double gradients = 0;
    double optimizer = 0;
    double activations = 0;
    double kv_cache = 0;
    bool at_step = false;
    double total() const { return weights + gradients + optimizer + activations + kv_cache; }
};

// Two moments can hold the peak. At the start of backward every activation (and the autocast
// copy) is alive with the gradients that exist by then: all of them when they are kept between
// steps, else only the output layer's, produced first. During the optimizer step the activations
// are freed and all gradients exist, with the step's temporaries. Backward frees each layer's
// activations as it produces that layer's gradients, so the moments in between hold less than
// the larger of the two. `sign` (−1, 0, +1) moves every term to the low end, nominal or high end.
Allocation resolve_peak(const Peak& peak, double activation_factor, bool count_step_temporary, double sign) {
    Allocation allocation;
    const double states = 1.0 + sign * peak.states_uncertainty;
    const double activations = peak.activations * activation_factor;
    const double step = (count_step_temporary ? peak.step_temporary : 0.0) * states;
    const double gradients = peak.gradients * states;
    const double backward_gradients = peak.backward_gradients * states;
    const double backward_extra = activations + peak.cast_copy + backward_gradients;
    allocation.kv_cache = peak.kv_cache;
    allocation.optimizer = peak.optimizer * states;
    const double weights = peak.weights + sign * peak.weights_uncertainty;
    if (gradients + step > backward_extra) {
        allocation.weights = weights;
        allocation.gradients = gradients;
        allocation.optimizer += step;
        allocation.at_step = true;
    } else {
        allocation.weights = weights + peak.cast_copy;
        allocation.gradients = backward_gradients;
        allocation.activations = activations;
    }
    return allocation;
}

struct Resolved {
    Layout layout;
    int micro_batch = 1;
    int batch = 1;
    int context_tokens = 1;
    Choices choices;
};

Resolved resolve(const Workload& workload, const MemoryQuery& query) {
    Resolved resolved;
    resolved.layout = query.layout;
    resolved.layout.tensor_parallel = std::max(resolved.layout.tensor_parallel, 1);
    resolved.layout.pipeline_parallel = std::max(resolved.layout.pipeline_parallel, 1);
    resolved.layout.data_parallel = std::max(resolved.layout.data_parallel, 1);
    resolved.layout.expert_parallel = std::max(resolved.layout.expert_parallel, 1);
    resolved.micro_batch = query.micro_batch > 0 ? query.micro_batch : std::max(workload.training.micro_batch, 1);
    resolved.batch = query.batch > 0 ? query.batch : std::max(workload.inference.batch, 1);
    resolved.context_tokens = query.context_tokens > 0
                                  ? query.context_tokens
                                  : workload.inference.input_tokens + workload.inference.output_tokens;
    resolved.choices.precision = query.precision.value_or(workload.precision);
    resolved.choices.checkpointing = query.checkpointing.value_or(workload.training.checkpointing);
    return resolved;
}

// A paged engine at `batch` sequences of `context` tokens: the weights, the profiled activation
// peak and non-torch memory, with the KV blocks those sequences occupy (at least one request of
// max_model_len: the engine's start-up check). Judged against the engine's budget.
MemoryBreakdown engine_breakdown(const Workload& workload, const ServingMemory& serving, const Resolved& resolved,
                                 NoteList& notes) {
    const long long blocks_per_sequence = (resolved.context_tokens + serving.block_size - 1) / serving.block_size;
    const long long minimum_blocks = (serving.max_model_len + serving.block_size - 1) / serving.block_size;
    const double blocks = static_cast<double>(std::max(blocks_per_sequence * resolved.batch, minimum_blocks));
    MemoryBreakdown breakdown;
    breakdown.weights_bytes = serving.weights_bytes;
    breakdown.activations_bytes = serving.activation_peak_bytes;
    breakdown.kv_cache_bytes = blocks * serving.block_size * serving.kv_bytes_per_token;
    breakdown.overhead_bytes = serving.non_torch_bytes;
    breakdown.allocated_bytes = breakdown.weights_bytes + breakdown.activations_bytes + breakdown.kv_cache_bytes;
    breakdown.total_bytes = breakdown.allocated_bytes + breakdown.overhead_bytes;
    const double spread =
        (is_float_format(workload.weights) ? float_weight_uncertainty : quantized_weight_uncertainty) *
            serving.weights_bytes +
        (activation_high_factor - 1) * serving.activation_peak_bytes;
    breakdown.allocated_low_bytes = breakdown.allocated_bytes - spread;
    breakdown.allocated_high_bytes = breakdown.allocated_bytes + spread;
    breakdown.total_low_bytes = breakdown.total_bytes - spread;
    breakdown.total_high_bytes = breakdown.total_bytes + spread;
    if (notes.active()) {
        notes.add("{} start-up: budget {} = {:g} × {} device total{}", to_string(serving.engine),
                  gb(serving.budget_bytes), serving.memory_fraction, gb(serving.device_total_bytes),
                  serving.engine == Engine::sglang ? " (mem_fraction_static for weights + KV; activations outside)"
                  : serving.engine == Engine::tensorrt_llm
                      ? " (free_gpu_memory_fraction of what is free after the weights)"
                      : " (gpu_memory_utilization)");
        notes.add("weights as loaded {} ({}); no allocator reserve: the engine preallocates its pools",
                  gb(serving.weights_bytes), to_string(workload.weights));
        notes.add(
            "activation peak {}: profiling step of max_num_batched_tokens {} and a sampler pass over {} sequences",
            gb(serving.activation_peak_bytes), serving.max_num_batched_tokens,
            std::min(serving.max_num_seqs, serving.max_num_batched_tokens));
        notes.add("non-torch memory {}{}", gb(serving.non_torch_bytes),
                  resolved.layout.tensor_parallel > 1 ? " (NCCL and custom all-reduce buffers at TP > 1)" : "");
        notes.add(
            "KV cache pool {} = {} blocks × {} tokens = {} tokens ({:.0f} KiB per token on this GPU); {} at "
            "max_model_len {}: {:.2f}x concurrency",
            gb(serving.kv_cache_bytes), serving.kv_cache_blocks, serving.block_size, serving.kv_cache_tokens,
            serving.kv_bytes_per_token / 1024, serving.fits ? "fits" : "refused", serving.max_model_len,
            serving.max_concurrency);
        for (const std::string& measured : serving.measured) {
            notes.add("{}", measured);
        }
        if (workload.runtime.cuda_graphs && serving.engine == Engine::vllm) {
            notes.add(
                "CUDA graphs are captured after the KV cache is sized (0.5–1.9 GiB in the vLLM v0.19 logs), outside "
                "the budget: keep gpu_memory_utilization ≤ 0.95");
        }
    }
    return breakdown;
}

MemoryBreakdown compute(const Workload& workload, const GpuSpec& gpu, const Resolved& resolved,
                        std::vector<std::string>* note_list) {
    NoteList notes(note_list);
    const Choices& choices = resolved.choices;
    if (const std::optional<ServingMemory> serving =
            serving_memory(workload, gpu, resolved.layout, choices.precision)) {
        return engine_breakdown(workload, *serving, resolved, notes);
    }
    Peak peak;
    if (workload.is_training()) {
        TrainingResult training = training_terms(workload, choices, gpu, resolved.layout, resolved.micro_batch, notes);
        peak = training.peak;
    } else {
        peak = inference_terms(workload, choices.precision, resolved.layout, resolved.batch, resolved.context_tokens,
                               notes)
                   .peak;
    }
    const Allocation nominal = resolve_peak(peak, 1.0, true, 0.0);
    const Allocation low = resolve_peak(peak, activation_low_factor, false, -1.0);
    const Allocation high = resolve_peak(peak, activation_high_factor, true, 1.0);
    if (nominal.at_step) {
        if (notes.active()) {
            notes.add(
                "the peak is at the optimizer step: all gradients ({}) and the step's temporary ({}) outweigh the "
                "activations ({}) and the gradients alive when backward starts ({}); activations are freed by then",
                gb(peak.gradients), gb(peak.step_temporary), gb(peak.activations + peak.cast_copy),
                gb(peak.backward_gradients));
        }
    }
    MemoryBreakdown breakdown;
    breakdown.weights_bytes = nominal.weights;
    breakdown.gradients_bytes = nominal.gradients;
    breakdown.optimizer_bytes = nominal.optimizer;
    breakdown.activations_bytes = nominal.activations;
    breakdown.kv_cache_bytes = nominal.kv_cache;
    breakdown.allocated_bytes = nominal.total();
    breakdown.allocated_low_bytes = low.total();
    breakdown.allocated_high_bytes = high.total();

    const Layout& layout = resolved.layout;
    const int communicators = (layout.data_parallel > 1 ? 1 : 0) + (layout.tensor_parallel > 1 ? 1 : 0) +
                              (layout.pipeline_parallel > 1 ? 1 : 0);
    const double nccl = communicators * nccl_bytes_per_communicator;
    const RuntimeSpec& runtime = workload.runtime;
    const double context = cuda_context_bytes(runtime);
    // A measured context is taken as given; otherwise the band spans the published range over GPUs
    // and software versions.
    const bool context_measured = runtime.cuda_context_bytes > 0;
    const double context_low = context_measured ? context : std::min(context, context_low_bytes);
    const double context_high = context_measured ? context : std::max(context, context_high_bytes);
    // Static allocators (llm.c, llama.cpp) cudaMalloc their buffers once: nothing is cached on top.
    const bool caching = runtime.allocator == Allocator::caching;
    const double reserve_fraction = caching ? builtin_memory_assumptions().allocator_reserve_fraction : 0.0;
    const double reserve_low = caching ? builtin_memory_assumptions().allocator_reserve_fraction_low : 0.0;
    const double reserve_high = caching ? builtin_memory_assumptions().allocator_reserve_fraction_high : 0.0;
    const double reserve = reserve_fraction * breakdown.allocated_bytes;
    breakdown.overhead_bytes = context + reserve + nccl;
    breakdown.total_bytes = breakdown.allocated_bytes + breakdown.overhead_bytes;
    breakdown.total_low_bytes = breakdown.allocated_low_bytes * (1 + reserve_low) + context_low + nccl;
    breakdown.total_high_bytes = breakdown.allocated_high_bytes * (1 + reserve_high) + context_high + nccl;
    if (notes.active()) {
        notes.add("overhead {}: CUDA context {} ({}) + {}{}", gb(breakdown.overhead_bytes), gb(context),
                  context_measured ? "runtime.cuda_context" : fmt::format("{}", to_string(runtime.framework)),
                  caching ? fmt::format("allocator reserve {:.0f} % × {} allocated = {}", reserve_fraction * 100,
                                        gb(breakdown.allocated_bytes), gb(reserve))
                          : "no allocator reserve (static buffers)",
                  nccl > 0 ? fmt::format(" + NCCL buffers {}", gb(nccl)) : "");
    }
    return breakdown;
}

constexpr int max_search_batch = 1 << 16;
constexpr int max_search_context = 1 << 24;

}  // namespace

double memory_usable_bytes(const Workload& workload, const GpuSpec& gpu, const Layout& layout, double headroom_fraction,
                           std::optional<Precision> precision) {
    if (const std::optional<ServingMemory> serving = serving_memory(workload, gpu, layout, precision)) {
        return serving->budget_bytes;
    }
    return gpu.memory_bytes * (1.0 - headroom_fraction);
}

MemoryBreakdown memory_breakdown(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query) {
    return compute(workload, gpu, resolve(workload, query), nullptr);
}

MemoryEstimate estimate_memory(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query) {
    const Resolved resolved = resolve(workload, query);
    MemoryEstimate estimate;
    estimate.per_gpu = compute(workload, gpu, resolved, &estimate.notes);
    estimate.capacity_bytes = gpu.memory_bytes;
    estimate.headroom_fraction =
        query.headroom_fraction >= 0 ? query.headroom_fraction : workload.constraints.memory_headroom_fraction;
    const Precision precision = resolved.choices.precision;
    estimate.serving = serving_memory(workload, gpu, resolved.layout, precision);
    const double usable = memory_usable_bytes(workload, gpu, resolved.layout, estimate.headroom_fraction, precision);
    estimate.fits = estimate.per_gpu.total_bytes <= usable;
    estimate.headroom_bytes = gpu.memory_bytes - estimate.per_gpu.total_bytes;
    if (estimate.serving) {
        const ServingMemory& serving = *estimate.serving;
        estimate.fits = estimate.fits && serving.fits;
        estimate.headroom_fraction = 1.0 - serving.budget_bytes / gpu.memory_bytes;
        estimate.batch = resolved.batch;
        estimate.context_tokens = resolved.context_tokens;
        estimate.max_batch = serving_concurrency(serving, resolved.context_tokens);
        const long long blocks_each = serving.kv_cache_blocks / std::max(resolved.batch, 1);
        long long context = blocks_each * serving.block_size;
        if (workload.model.max_context > 0) {
            context = std::min<long long>(context, workload.model.max_context);
        }
        estimate.max_context_tokens =
            serving.fits ? static_cast<int>(std::min<long long>(context, max_search_context)) : 0;
        if (!serving.fits) {
            estimate.notes.push_back(fmt::format("{} would not start: {}", to_string(serving.engine), serving.refusal));
        }
        if (estimate.max_batch == serving.max_num_seqs) {
            estimate.notes.push_back(fmt::format("concurrency capped by max_num_seqs {}", serving.max_num_seqs));
        }
        return estimate;
    }
    if (workload.is_training()) {
        estimate.micro_batch = resolved.micro_batch;
        estimate.max_micro_batch = largest_fitting(max_search_batch, [&](int micro_batch) {
            Resolved probe = resolved;
            probe.micro_batch = micro_batch;
            return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
        });
        if (estimate.max_micro_batch == max_search_batch) {
            estimate.notes.push_back(
                fmt::format("the largest micro-batch reached the search limit of {}", max_search_batch));
        }
    } else {
        estimate.batch = resolved.batch;
        estimate.context_tokens = resolved.context_tokens;
        estimate.max_batch = largest_fitting(max_search_batch, [&](int batch) {
            Resolved probe = resolved;
            probe.batch = batch;
            return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
        });
        if (estimate.max_batch == max_search_batch) {
            estimate.notes.push_back(fmt::format("the largest batch reached the search limit of {}", max_search_batch));
        }
        if (workload.model.is_transformer()) {
            const int context_limit = workload.model.max_context > 0 ? workload.model.max_context : max_search_context;
            estimate.max_context_tokens = largest_fitting(context_limit, [&](int tokens) {
                Resolved probe = resolved;
                probe.context_tokens = tokens;
                return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
            });
            if (estimate.max_context_tokens == context_limit) {
                estimate.notes.push_back(
                    fmt::format("the largest context reached {} tokens, {}", context_limit,
                                workload.model.max_context > 0 ? "the model's maximum" : "the search limit"));
            }
        }
    }
    if (estimate.headroom_fraction > 0) {
        estimate.notes.push_back(fmt::format("fits means total ≤ {:.0f} % of capacity ({} free required)",
                                             (1 - estimate.headroom_fraction) * 100,
                                             format_percent(estimate.headroom_fraction)));
    }
    return estimate;
}

}  // namespace gpusel
