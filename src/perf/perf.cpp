// estimate_perf: resolves the stack, the efficiency factors and the layout, runs the phase
// model and names the binding resource (explain/ writes its detail and remedy).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "perf/internal.hpp"

namespace gpusel {

namespace perf_detail {

double matmul_peak_flops_per_s(const GpuSpec& gpu, Precision precision, std::vector<std::string>& notes) {
    const Precision fallbacks[] = {precision, Precision::fp16, Precision::bf16, Precision::fp32};
    for (const Precision candidate : fallbacks) {
        if (gpu.supports(candidate)) {
            if (candidate != precision) {
                const std::string note = fmt::format("{} has no {} tensor rate in the catalog; using {}", gpu.id,
                                                     to_string(precision), to_string(candidate));
                if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
                    notes.push_back(note);
                }
            }
            return gpu.peak_flops_per_s(candidate);
        }
    }
    throw InputError(Diagnostic{"", {}, "", fmt::format("{} lists no compute rate (dense_tflops)", gpu.id)});
}

double normal_quantile(double p) {
    // Abramowitz & Stegun 26.2.23 (error < 4.5e-4), for the upper tail.
    const double tail = std::clamp(1 - p, 1e-12, 0.5);
    const double t = std::sqrt(-2 * std::log(tail));
    return t -
           (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

}  // namespace perf_detail

namespace {

using perf_detail::Setting;

int next_power_of_two(int value) {
    int power = 1;
    while (power < value) {
        power *= 2;
    }
    return power;
}

// The optimised stack the model assumes for each kind of inference (data/efficiency.yaml, stack
// optimized); eager PyTorch is --stack eager or runtime.engine hf-generate.
std::string stack_for_task(InferenceTask task) {
    switch (task) {
        case InferenceTask::generation:
        case InferenceTask::scoring:
            return "TensorRT-LLM/vLLM-class serving engine";
        case InferenceTask::encoder:
            return "TensorRT / ONNX Runtime-class encoder engine (fused kernels)";
        case InferenceTask::diffusion:
            return "TensorRT / torch.compile-class diffusion pipeline (eager PyTorch: --stack eager)";
        case InferenceTask::vision:
        case InferenceTask::recommendation:
            return "TensorRT / ONNX Runtime-class engine (fused kernels; eager PyTorch: --stack eager)";
    }
    return "optimized";
}

}  // namespace

int widest_serving_tensor_parallel(const Workload& workload, const GpuSpec& gpu) {
    const int node = std::max(1, workload.constraints.gpus_per_node);
    // A replica's tensor parallel stays within one NVLink domain. PCIe-only cards split inside one
    // host (2, 4, 8 cards: the usual L40S / RTX 6000 Ada / RTX PRO 6000 servers), the all-reduce
    // priced over PCIe by the perf model (link_for_group); edge modules are one per device.
    const int domain = gpu.has_gpu_interconnect()     ? gpu.interconnect.domain_size
                       : gpu.segment == Segment::edge ? 1
                                                      : node;
    int widest = 1;
    while (widest * 2 <= std::min({domain, node, 8})) {
        widest *= 2;
    }
    return widest;
}

FittingLayout fitting_layout(const Workload& workload, const GpuSpec& gpu, int count, ServingStack stack) {
    FittingLayout result;
    if (count < 1) {
        result.problem = LayoutProblem::no_gpus;
        return result;
    }
    Layout& layout = result.layout;
    if (workload.is_training()) {
        const TrainingSpec& spec = workload.training;
        layout.sharding = spec.sharding;
        layout.offload = spec.offload;
        int tp = spec.tensor_parallel > 0 ? spec.tensor_parallel : 1;
        int pp = spec.pipeline_parallel > 0 ? spec.pipeline_parallel : 1;
        const auto fits = [&](int t, int p) {
            Layout candidate = layout;
            candidate.tensor_parallel = t;
            candidate.pipeline_parallel = p;
            candidate.data_parallel = std::max(1, count / (t * p));
            return perf_detail::training_state_fits(workload, gpu, candidate, workload.precision, spec.checkpointing);
        };
        const int node = std::min(count, std::max(1, workload.constraints.gpus_per_node));
        const int heads = std::max(1, workload.model.heads);
        if (spec.tensor_parallel == 0) {
            while (!fits(tp, pp) && tp * 2 <= node && count % (tp * 2) == 0 && heads % (tp * 2) == 0) {
                tp *= 2;
            }
        }
        if (spec.pipeline_parallel == 0) {
            while (!fits(tp, pp) && tp * pp * 2 <= count && count % (tp * pp * 2) == 0 &&
                   workload.model.layers % (pp * 2) == 0) {
                pp *= 2;
            }
        }
        if (count % (tp * pp) != 0) {
            result.problem = LayoutProblem::count_not_multiple_of_split;
            result.tensor_parallel = tp;
            result.pipeline_parallel = pp;
            return result;
        }
        layout.tensor_parallel = tp;
        layout.pipeline_parallel = pp;
        layout.data_parallel = count / (tp * pp);
        layout.context_parallel = spec.context_parallel;
        return result;
    }
    // Inference: the fewest shards whose memory holds the weights and one sequence's KV cache.
    const ServingStack resolved = resolve_stack(workload, stack);
    int shards = 1;
    const auto holds = [&](int candidate) {
        Layout trial;
        if (resolved == ServingStack::llama_cpp) {
            trial.pipeline_parallel = candidate;
        } else {
            trial.tensor_parallel = candidate;
        }
        return inference_batch_capacity(workload, gpu, trial) >= 1;
    };
    const int given_tp = workload.inference.tensor_parallel;
    if (given_tp > 0 && resolved != ServingStack::llama_cpp) {
        // The workload states the split (a deployment, or the layout a measurement used): keep it,
        // whether or not fewer GPUs would hold the weights.
        shards = given_tp;
    } else {
        while (!holds(shards) && shards < count) {
            shards = std::min(count, shards + 1);
        }
        if (resolved != ServingStack::llama_cpp && shards > 1) {
            // Tensor parallel splits the attention heads evenly: powers of two in practice.
            shards = std::min(next_power_of_two(shards), count);
        }
    }
    if (count % shards != 0) {
        result.problem = LayoutProblem::replica_does_not_divide;
        result.replica_gpus = shards;
        return result;
    }
    const int widest = widest_serving_tensor_parallel(workload, gpu);
    if (resolved == ServingStack::llama_cpp) {
        // llama.cpp splits a model over GPUs by layers (--split-mode layer, the default).
        layout.pipeline_parallel = shards;
    } else if (given_tp == 0 && shards > widest && shards % widest == 0) {
        // Too large for one node: pipeline stages across nodes, as the planner lays it out.
        layout.tensor_parallel = widest;
        layout.pipeline_parallel = shards / widest;
    } else {
        layout.tensor_parallel = shards;
    }
    layout.data_parallel = count / shards;
    return result;
}

PerfEstimate estimate_perf(const Workload& workload, const GpuSpec& gpu, const PerfQuery& query,
                           const EfficiencyTable& efficiency) {
    PerfEstimate estimate;
    const ServingStack requested =
        query.stack == ServingStack::automatic && !query.engine.empty() ? stack_of_engine(query.engine) : query.stack;
    estimate.stack = resolve_stack(workload, requested);
    estimate.layout = query.layout;
    estimate.precision = query.precision.value_or(workload.precision);
    const std::string engine =
        workload.is_training() ? query.engine : resolve_engine(workload, estimate.stack, query.engine);
    const EfficiencyFactors factors = efficiency.resolve(gpu, estimate.stack, engine);
    Setting setting{workload,
                    gpu,
                    factors,
                    efficiency.platform,
                    estimate.layout,
                    estimate.stack,
                    estimate.notes,
                    estimate.precision,
                    query.checkpointing.value_or(workload.training.checkpointing)};
    if (workload.is_training()) {
        ResourceTimes times;
        estimate.training = perf_detail::estimate_training(setting, query.micro_batch, times);
        if (estimate.training->step_time_s <= 0) {
            estimate.training.reset();
        } else {
            const TrainingPerf& training = *estimate.training;
            estimate.bottleneck = binding_resource(times);
            const double bubble_s = training.bubble_fraction * (training.step_time_s);
            estimate.bottleneck.gpu_utilization =
                std::clamp(estimate.bottleneck.gpu_utilization - bubble_s / std::max(1e-12, times.total_s()), 0.0, 1.0);
            if (training.input_s > 0) {
                // The loaders set the pace whenever the GPUs wait for them, however short the wait.
                estimate.bottleneck.resource = Resource::input_pipeline;
                estimate.bottleneck.share = training.input_s / training.step_time_s;
            }
            if (!perf_detail::training_state_fits(workload, gpu, estimate.layout, setting.precision,
                                                  setting.checkpointing)) {
                estimate.bottleneck.resource = Resource::memory_capacity;
                estimate.bottleneck.share = 1;
                estimate.training->memory_use = perf_detail::training_memory_use(
                    workload, gpu, estimate.layout, setting.precision, setting.checkpointing);
            }
            estimate.bottleneck.phase = estimate.bottleneck.resource == Resource::memory_capacity
                                            ? BottleneckPhase::memory
                                            : BottleneckPhase::step;
        }
    } else {
        perf_detail::InferenceTimes times;
        const perf_detail::CapacitySearch capacity{query.search_capacity, query.capacity_needed_rps,
                                                   query.capacity_factor};
        estimate.inference = perf_detail::estimate_inference(setting, query.batch, capacity, times);
        if (estimate.inference->batch == 0) {
            estimate.inference.reset();
        }
        if (estimate.inference) {
            const InferencePerf& inference = *estimate.inference;
            ResourceTimes whole = times.decode;
            whole.compute_s += times.prefill.compute_s;
            whole.memory_bandwidth_s += times.prefill.memory_bandwidth_s;
            whole.interconnect_s += times.prefill.interconnect_s;
            whole.launch_overhead_s += times.prefill.launch_overhead_s;
            // When the SLO is missed, the phase whose target binds names the bottleneck; otherwise
            // the resource the GPU spends most of a full batch on.
            const SloTarget target = inference.binding_target;
            BottleneckPhase phase = BottleneckPhase::full_batch;
            if (!inference.meets_slo && target == SloTarget::ttft) {
                estimate.bottleneck = binding_resource(times.prefill);
                phase = BottleneckPhase::prefill;
            } else if (!inference.meets_slo && target == SloTarget::tpot) {
                estimate.bottleneck = binding_resource(times.decode);
                phase = BottleneckPhase::decode;
            } else {
                estimate.bottleneck = binding_resource(whole);
            }
            estimate.bottleneck.gpu_utilization = binding_resource(whole).gpu_utilization;
            if (!inference.fits || !inference.batch_fits || (inference.memory_limits_load && !inference.meets_slo)) {
                estimate.bottleneck.resource = Resource::memory_capacity;
                estimate.bottleneck.share = 1;
                phase = BottleneckPhase::memory;
            }
            estimate.bottleneck.phase = phase;
        }
    }

    const bool transformer = workload.model.is_transformer();
    const std::string stack_text =
        estimate.stack == ServingStack::llama_cpp ? "llama.cpp (GGUF, FP16-accumulate GEMMs)"
        : estimate.stack == ServingStack::eager   ? "PyTorch eager"
        : workload.is_training() ? (transformer ? "Megatron/NeMo/FSDP-class training" : "PyTorch DDP training with AMP")
                                 : stack_for_task(workload.task());
    const std::string engine_text = engine.empty() || engine == "llama.cpp" || engine == "hf-generate"
                                        ? std::string()
                                        : fmt::format(" (engine {})", engine);
    // Appended, not formatted, into one allocation: every estimate the search makes writes it
    // (thousands per plan).
    constexpr std::string_view stack_words = "assumed software stack: ";
    constexpr std::string_view factor_words = "; efficiency factors from data/efficiency.yaml: ";
    std::size_t note_size = stack_words.size() + stack_text.size() + engine_text.size() + factor_words.size();
    for (const std::string& label : factors.applied) {
        note_size += label.size() + 2;
    }
    std::string stack_note;
    stack_note.reserve(note_size);
    stack_note += stack_words;
    stack_note += stack_text;
    stack_note += engine_text;
    stack_note += factor_words;
    for (std::size_t index = 0; index < factors.applied.size(); ++index) {
        stack_note += index == 0 ? "" : ", ";
        stack_note += factors.applied[index];
    }
    estimate.notes.insert(estimate.notes.begin(), std::move(stack_note));
    return estimate;
}

}  // namespace gpusel
