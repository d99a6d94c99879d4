// Training: transformers per operator (each GEMM on a size-dependent efficiency curve, flash
// attention, element-wise kernels by their bytes; forward, backward and recompute), other models
// FLOPs over the achieved fraction of peak against their traffic; the optimizer's memory traffic,
// measured collectives over the tier in use with their overlap, the (interleaved) pipeline bubble
// and the input pipeline. Equations and sources: docs/perf-model.md, "Training" and "Links".

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "memory/memory.hpp"
#include "memory/terms.hpp"
#include "perf/internal.hpp"

namespace gpusel::perf_detail {

namespace {

// Input elements from a shape such as "224x224x3"; 0 when it is not one.
double input_elements(const std::string& shape) {
    double product = 1;
    std::size_t start = 0;
    bool any = false;
    while (start <= shape.size()) {
        const std::size_t end = std::min(shape.find('x', start), shape.size());
        const std::string part = shape.substr(start, end - start);
        if (part.empty() || part.size() > 6 ||
            !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            return 0;
        }
        product *= std::stod(part);
        any = true;
        start = end + 1;
    }
    return any ? product : 0;
}

// Micro-batch, accumulation steps and the global batch they make.
struct TrainingBatches {
    int micro_batch = 1;
    int accumulation = 1;
    int global_batch = 1;
};

TrainingBatches training_batches(const TrainingSpec& spec, int dp, int micro_batch_override,
                                 std::vector<std::string>& notes) {
    TrainingBatches batches;
    const int micro_batch = micro_batch_override > 0 ? micro_batch_override : std::max(1, spec.micro_batch);
    const int global_batch = spec.global_batch > 0 ? spec.global_batch : micro_batch * dp;
    const int accumulation =
        std::max(1, static_cast<int>(std::lround(static_cast<double>(global_batch) / (micro_batch * dp))));
    if (accumulation * micro_batch * dp != global_batch) {
        notes.push_back(
            fmt::format("global batch {} is not a multiple of micro-batch {} × data parallel {}; "
                        "using {} accumulation steps",
                        global_batch, micro_batch, dp, accumulation));
    }
    batches.micro_batch = micro_batch;
    batches.accumulation = accumulation;
    batches.global_batch = micro_batch * dp * accumulation;
    return batches;
}

// FLOPs per sample, executed and "model" (MFU convention), and the kernels' DRAM traffic when
// they are bandwidth-bound (CNNs). `known` is false for a model with neither transformer fields
// nor flops_per_sample.
struct SampleWork {
    bool known = true;
    double executed_flops = 0;
    double model_flops = 0;
    double bytes = 0;
    double trainable_params = 0;
    double tokens = 0;  // 0 for models without tokens
};

SampleWork sample_work(const Workload& workload, Checkpointing checkpointing, const EfficiencyFactors& factors,
                       std::vector<std::string>& notes) {
    const ModelSpec& model = workload.model;
    const TrainingSpec& spec = workload.training;
    SampleWork work;
    work.trainable_params = model.params;
    const bool lora = spec.lora.enabled();
    if (lora) {
        work.trainable_params = lora_trainable_params(model, spec.lora);
    }
    if (model.is_transformer()) {
        const double seq = std::max(1, spec.seq_len);
        work.tokens = seq;
        const double matmul = matmul_params(model);
        const double width = static_cast<double>(model.heads) * model.attention_head_dim();
        const bool causal = model.family != ModelFamily::encoder;
        // Forward attention FLOPs per token: QKᵀ and AV, 4·L·s·width; flash attention skips the
        // masked half of a causal square, other kernels compute and mask it.
        const double attention_forward =
            4.0 * model.layers * seq * width * (causal && spec.flash_attention ? 0.5 : 1.0);
        // Frozen base under LoRA: no weight gradients, so 4Ψ instead of 6Ψ (plus the adapters).
        const double dense_passes = lora ? 4.0 : 6.0;
        double per_token = dense_passes * matmul + 6 * work.trainable_params * (lora ? 1 : 0) + 3 * attention_forward;
        if (checkpointing == Checkpointing::full) {
            per_token += 2 * matmul + attention_forward;  // the forward pass again
        } else if (checkpointing == Checkpointing::selective) {
            per_token += attention_forward;  // attention core recomputed (Korthikanti et al. 2022)
        }
        work.executed_flops = per_token * seq;
        // PaLM appendix B: 6N + 12·L·s·width per token, attention not halved.
        work.model_flops = (dense_passes * matmul + 12.0 * model.layers * seq * width) * seq;
    } else if (model.flops_per_sample > 0) {
        work.executed_flops = 3 * model.flops_per_sample;  // backward ≈ 2× forward
        work.model_flops = work.executed_flops;
        work.bytes = work.executed_flops / factors.cnn_flops_per_byte;
    } else {
        notes.push_back("the model has neither transformer fields nor flops_per_sample; no training speed estimate");
        work.known = false;
    }
    return work;
}

// One micro-batch's kernels on one GPU: per operator for transformers; other models their FLOPs
// at the achieved rate against their DRAM traffic, hypot(compute, memory).
struct MicroBatchKernels {
    MicroBatchTimes times;
    double total_s = 0;
};

MicroBatchKernels micro_batch_kernels(const TransformerTrainingOps& ops, const SampleWork& work, int tp, int pp,
                                      int micro_batch, double achieved_flops_per_s, double bandwidth) {
    MicroBatchKernels kernels;
    if (ops.valid) {
        kernels.times = transformer_micro_batch_times(ops, tp, pp, micro_batch);
        kernels.total_s = kernels.times.compute_s + kernels.times.memory_s;
        return kernels;
    }
    const double model_parallel = static_cast<double>(tp) * pp;
    kernels.times.compute_s = micro_batch * work.executed_flops / model_parallel / achieved_flops_per_s;
    kernels.times.memory_s = micro_batch * work.bytes / model_parallel / bandwidth;
    kernels.total_s = roofline_time_s(kernels.times.compute_s, kernels.times.memory_s);
    return kernels;
}

// effective_virtual_stages(), with a note when the workload's cannot be scheduled.
int scheduled_virtual_stages(const Workload& workload, int pp, std::vector<std::string>& notes) {
    const int virtual_stages = effective_virtual_stages(workload, pp);
    if (virtual_stages != workload.training.virtual_stages && pp > 1) {
        notes.push_back(
            fmt::format("virtual_stages {}: {} layers are fewer than {} stages × {} chunks; "
                        "plain 1F1B schedule",
                        workload.training.virtual_stages, workload.model.layers, pp, workload.training.virtual_stages));
    }
    return virtual_stages;
}

// Tensor parallel: 2 all-reduces of s·b·h forward and 2 backward per layer (+2 when the forward
// is recomputed; with sequence parallel the same volume as all-gathers and reduce-scatters),
// the share Megatron's overlap leaves exposed; pipeline parallel: one activation send forward and
// one back per micro-batch and model chunk (v chunks per stage when interleaved).
// The link a context-parallel group runs its ring over: Megatron's rank order (tp, cp, dp, pp)
// makes the group span tp × cp GPUs.
LinkTier context_parallel_link(const Setting& setting, const TransformerTrainingOps& ops, int tp) {
    return link_for_group(setting.workload, setting.gpu, tp * static_cast<int>(ops.context_parallel), setting.factors,
                          setting.platform);
}

double micro_batch_communication_s(const Setting& setting, const TransformerTrainingOps& ops, int tp, int pp,
                                   int micro_batch, double activation_bytes) {
    const Workload& workload = setting.workload;
    const ModelSpec& model = workload.model;
    double communication_s = 0;
    if (ops.context_parallel > 1) {
        const LinkTier link = context_parallel_link(setting, ops, tp);
        communication_s += context_parallel_exchange_s(ops, tp, pp, micro_batch, link.bytes_per_s, link.latency_s);
    }
    if (tp > 1 && model.is_transformer()) {
        const LinkTier link = link_for_group(workload, setting.gpu, tp, setting.factors, setting.platform);
        const CollectiveLink collective = collective_link(link, setting.gpu, setting.factors);
        const int all_reduces = 4 + (setting.checkpointing == Checkpointing::full ? 2 : 0);
        communication_s += exposed_tensor_share(workload, setting.factors) * all_reduces *
                           (static_cast<double>(model.layers) / pp) * all_reduce_s(activation_bytes, tp, collective);
        if (link.name.rfind("pcie", 0) == 0) {
            setting.notes.push_back(fmt::format("tensor parallel {} runs over PCIe ({}), not NVLink", tp, link.name));
        }
    }
    if (pp > 1) {
        const LinkTier link = link_for_group(workload, setting.gpu, tp * pp, setting.factors, setting.platform);
        communication_s +=
            2.0 * effective_virtual_stages(workload, pp) * (activation_bytes / tp / link.bytes_per_s + link.latency_s);
    }
    return communication_s;
}

// The activations one micro-batch hands between stages or tensor-parallel ranks on one GPU,
// bytes: its share of each sequence under context parallelism (1 token for models without).
double micro_batch_activation_bytes(const Workload& workload, int micro_batch, double tokens, Precision wide) {
    const double samples = micro_batch;
    return samples * std::max(1.0, tokens) / std::max(1, workload.training.context_parallel) * workload.model.hidden *
           element_bytes(wide);
}

// TrainingSpec::sequence_replicas(), with a note when dp is not a multiple of context_parallel (a
// layout the planner never proposes, but `perf --count` can ask for).
int checked_sequence_replicas(const TrainingSpec& training, int dp, std::vector<std::string>& notes) {
    const int replicas = training.sequence_replicas(dp);
    if (dp % std::max(1, training.context_parallel) != 0) {
        notes.push_back(fmt::format("data parallel {} is not a multiple of context_parallel {}: {} sequence replicas",
                                    dp, training.context_parallel, replicas));
    }
    return replicas;
}

// What context parallelism does to this layout, for the notes (nothing without it).
void add_context_parallel_note(const Setting& setting, const TransformerTrainingOps& ops, int micro_batch) {
    if (!ops.valid || ops.context_parallel <= 1) {
        return;
    }
    const Layout& layout = setting.layout;
    const int tp = std::max(1, layout.tensor_parallel);
    const int pp = std::max(1, layout.pipeline_parallel);
    const int dp = std::max(1, layout.data_parallel);
    const int context_parallel = static_cast<int>(ops.context_parallel);
    const LinkTier link = context_parallel_link(setting, ops, tp);
    const double exchange_s = context_parallel_exchange_s(ops, tp, pp, micro_batch, link.bytes_per_s, link.latency_s);
    setting.notes.push_back(
        fmt::format("context parallel {}: each sequence's {:g} tokens split over {} GPUs (ring attention over {}, "
                    "{:.2f} ms per micro-batch not hidden by attention); data parallel {} = {} sequence replicas × {}",
                    context_parallel, ops.seq, context_parallel, link.name, exchange_s * 1e3, dp,
                    setting.workload.training.sequence_replicas(dp), context_parallel));
}

// Data parallel: the gradient collectives' time the compute does not hide, per step.
struct DataParallelSync {
    double exposed_s = 0;
    LinkTier link;
};

DataParallelSync data_parallel_sync(const Setting& setting, int gpus, double gradient_bytes, double micro_kernel_s,
                                    int accumulation) {
    const Workload& workload = setting.workload;
    const Layout& layout = setting.layout;
    const int tp = std::max(1, layout.tensor_parallel);
    const int pp = std::max(1, layout.pipeline_parallel);
    const int dp = std::max(1, layout.data_parallel);
    DataParallelSync sync;
    if (dp <= 1) {
        return sync;
    }
    sync.link = link_for_group(workload, setting.gpu, gpus, setting.factors, setting.platform);
    const CollectiveLink collective =
        spread_over_nics(collective_link(sync.link, setting.gpu, setting.factors), sync.link,
                         data_parallel_ranks_per_node(workload.constraints.gpus_per_node, tp, dp));
    // Collectives are bucketed by layer: at least one layer's chunk stays exposed (Megatron-Bridge
    // docs, "Communication Overlap").
    const double layers_per_stage = static_cast<double>(workload.model.layers) / pp;
    if (layout.sharding == Sharding::zero3) {
        // FSDP / ZeRO-3: all-gather the weights for forward and again for backward, then
        // reduce-scatter the gradients, every micro-batch; prefetching overlaps them with
        // the micro-batch's compute.
        const double weight_bytes_16 = workload.model.params / (tp * pp) * 2;
        const double per_micro =
            2 * all_gather_s(weight_bytes_16, dp, collective) + all_gather_s(gradient_bytes, dp, collective);
        sync.exposed_s = accumulation * exposed_after_overlap(per_micro, micro_kernel_s, layers_per_stage);
    } else if (layout.sharding == Sharding::none) {
        // DDP: one all-reduce per step, bucketed and overlapped with the last micro-batch's
        // backward (≈ 2/3 of it).
        const double all_reduce = all_reduce_s(gradient_bytes, dp, collective);
        sync.exposed_s = exposed_after_overlap(all_reduce, micro_kernel_s * 2.0 / 3.0, layers_per_stage);
    } else {
        // Distributed optimizer (ZeRO-1/2): the gradients' reduce-scatter overlaps the last
        // micro-batch's backward, the updated weights' all-gather the next step's first forward
        // (Megatron overlap_grad_reduce / overlap_param_gather).
        const double scatter = all_gather_s(gradient_bytes, dp, collective);
        const double gather = all_gather_s(gradient_bytes, dp, collective);
        sync.exposed_s = exposed_after_overlap(scatter, micro_kernel_s * 2.0 / 3.0, layers_per_stage) +
                         exposed_after_overlap(gather, micro_kernel_s / 3.0, layers_per_stage);
    }
    return sync;
}

// The input pipeline against the GPUs' step: what the loaders and storage deliver, the host copy
// that blocks the training loop, and the wait for samples beyond both.
struct InputPipeline {
    double blocking_copy_s = 0;
    double wait_s = 0;
    double samples_per_s = 0;  // 0 = not limiting
};

// The data pipeline of a training job: the workload's data: section, or for image training
// without one (Workload::assumes_image_pipeline) JPEG decode and augmentation on every host CPU
// thread of the node, one DataLoader worker each, at the platform's sourced rate per thread; the
// threads are the GPU's offers' (the median vCPUs per GPU, GpuSpec::host_vcpus_per_gpu), else
// the platform's typical ratio. Empty when no pipeline is modelled.
std::optional<DataSpec> modelled_input(const Setting& setting, int gpus) {
    const Workload& workload = setting.workload;
    if (workload.data.given) {
        return workload.data;
    }
    if (!workload.assumes_image_pipeline()) {
        return std::nullopt;
    }
    const PlatformFactors& platform = setting.platform;
    const bool from_offers = setting.gpu.host_vcpus_per_gpu > 0;
    const double per_gpu = from_offers ? setting.gpu.host_vcpus_per_gpu : platform.host_vcpus_per_gpu;
    // An efficiency file without the platform's figures assumes nothing.
    if (platform.image_decode_samples_per_s_per_vcpu <= 0 || per_gpu <= 0) {
        return std::nullopt;
    }
    const int node_gpus = std::min(gpus, std::max(1, workload.constraints.gpus_per_node));
    DataSpec data;
    data.decode = Decode::cpu;
    data.cpu_samples_per_s_per_core = platform.image_decode_samples_per_s_per_vcpu;
    data.cpu_cores = std::max(1, static_cast<int>(std::floor(per_gpu * node_gpus)));
    data.loader_workers = data.cpu_cores;
    // Every estimate of an image-training search writes this note: formatted once per thread for
    // the figures it names, copied while they stay the same.
    struct Written {
        double samples_per_s_per_core = -1;
        int cores = -1;
        double per_gpu = -1;
        int offers = -1;
        std::string gpu;
        std::string text;
    };
    thread_local Written written;
    const int offers = from_offers ? setting.gpu.host_vcpus_offers : -1;
    const std::string_view gpu_id = from_offers ? std::string_view(setting.gpu.id) : std::string_view();
    if (written.samples_per_s_per_core != data.cpu_samples_per_s_per_core || written.cores != data.cpu_cores ||
        written.per_gpu != per_gpu || written.offers != offers || written.gpu != gpu_id) {
        written = Written{data.cpu_samples_per_s_per_core,
                          data.cpu_cores,
                          per_gpu,
                          offers,
                          std::string(gpu_id),
                          fmt::format("no data: section: the input pipeline is assumed — JPEG decode and "
                                      "augmentation on the CPU at {:g} samples/s per vCPU (an estimate, "
                                      "data/efficiency.yaml platform.image_decode_per_vcpu) on {} vCPUs per node "
                                      "({:g} per GPU, {}); describe it in data: to change",
                                      data.cpu_samples_per_s_per_core, data.cpu_cores, per_gpu,
                                      from_offers ? fmt::format("the median of {} {} offer(s)", offers, gpu_id)
                                                  : "no offer of this GPU publishes its vCPUs: "
                                                    "platform.host_vcpus_per_gpu")};
    }
    setting.notes.push_back(written.text);
    return data;
}

InputPipeline input_pipeline(const Setting& setting, const DataSpec& data, int gpus, int dp, int global_batch,
                             double gpu_step_s, double host_link_bytes_per_s) {
    const Workload& workload = setting.workload;
    InputPipeline pipeline;
    const int per_node = std::max(1, workload.constraints.gpus_per_node);
    const int nodes = (gpus + per_node - 1) / per_node;
    const double node_samples_per_step = static_cast<double>(global_batch) / nodes;
    double delivery = std::numeric_limits<double>::infinity();
    if (data.decode == Decode::cpu && data.cpu_samples_per_s_per_core > 0) {
        // One DataLoader worker is one process on one core.
        const int workers = std::min(data.cpu_cores, std::max(1, data.loader_workers));
        delivery = std::min(delivery, workers * data.cpu_samples_per_s_per_core);
    } else if (data.decode == Decode::cpu) {
        setting.notes.push_back("data.cpu_samples_per_s_per_core not given: CPU decode assumed not limiting");
    }
    if (data.sample_bytes > 0) {
        const auto storage = setting.platform.storage_bytes_per_s.find(data.storage);
        if (storage != setting.platform.storage_bytes_per_s.end()) {
            delivery = std::min(delivery, storage->second / data.sample_bytes);
        }
    }
    const double input_time_s = std::isfinite(delivery) ? node_samples_per_step / delivery : 0;
    if (std::isfinite(delivery)) {
        pipeline.samples_per_s = delivery * nodes;
    }
    // Host-to-device copy of each GPU's samples: decoded float32 tensors after CPU decode,
    // the compressed bytes when the GPU decodes.
    const double elements = input_elements(workload.model.input);
    const double copy_bytes = data.decode == Decode::cpu && elements > 0 ? elements * 4 : data.sample_bytes;
    const double copy_s = static_cast<double>(global_batch) / dp * copy_bytes / host_link_bytes_per_s;
    // Pinned memory copies asynchronously behind compute; pageable copies block the training
    // loop. Loader workers prefetch in parallel with both, so the step is the slower of the
    // loop and the loaders.
    pipeline.blocking_copy_s = data.pin_memory ? std::max(0.0, copy_s - gpu_step_s) : copy_s;
    pipeline.wait_s = std::max(0.0, input_time_s - gpu_step_s - pipeline.blocking_copy_s);
    return pipeline;
}

// Dataset size over throughput, against the deadline.
void time_to_train(const TrainingSpec& spec, double tokens_per_sample, TrainingPerf& result,
                   std::vector<std::string>& notes) {
    double samples_total = 0;
    if (spec.dataset_tokens > 0 && tokens_per_sample > 0) {
        samples_total = spec.dataset_tokens / tokens_per_sample;
    } else if (spec.dataset_samples > 0) {
        samples_total = spec.dataset_samples;
    } else if (spec.dataset_tokens > 0) {
        notes.push_back("dataset_tokens given for a model without tokens; give dataset_samples");
    }
    if (samples_total > 0) {
        result.time_to_train_s = samples_total * spec.epochs / result.samples_per_s;
        result.meets_deadline = spec.deadline_seconds <= 0 || *result.time_to_train_s <= spec.deadline_seconds;
    } else {
        notes.push_back("no dataset size (dataset_tokens or dataset_samples): no time to train");
    }
}

// "data parallel 8 over nvlink4 (…)": every estimate with data parallelism writes it, and a
// search's layouts share it over their ZeRO stages and micro-batches, so it is formatted once
// per thread for the figures it names and copied while they stay the same.
const std::string& data_parallel_note(int dp, const std::string& link, double bytes_per_s) {
    struct Written {
        int dp = 0;
        std::string link;
        double bytes_per_s = -1;
        std::string text;
    };
    thread_local Written written;
    if (written.dp != dp || written.bytes_per_s != bytes_per_s || written.link != link) {
        written.dp = dp;
        written.link = link;
        written.bytes_per_s = bytes_per_s;
        written.text =
            fmt::format("data parallel {} over {} ({:.0f} GB/s per GPU achieved)", dp, link, bytes_per_s / 1e9);
    }
    return written.text;
}

}  // namespace

TransformerTrainingOps transformer_training_ops(const Workload& workload, Precision precision,
                                                Checkpointing checkpointing, const GpuSpec& gpu,
                                                const EfficiencyFactors& factors, std::vector<std::string>& notes) {
    const ModelSpec& model = workload.model;
    const TrainingSpec& spec = workload.training;
    TransformerTrainingOps ops;
    if (!model.is_transformer() || model.layers <= 0 || model.heads <= 0 || model.hidden <= 0) {
        return ops;
    }
    ops.valid = true;
    const double h = model.hidden;
    const double layers = model.layers;
    const double head_dim = model.attention_head_dim();
    const double width = model.heads * head_dim;
    const double kv_width = model.attention_kv_heads() * head_dim;
    ops.layers = layers;
    ops.seq = std::max(1, spec.seq_len);
    ops.context_parallel = std::max(1, spec.context_parallel);
    ops.sequence_tokens = ops.seq / ops.context_parallel;
    ops.hidden = h;
    ops.kv_width = kv_width;
    ops.qkv_width = width + 2 * kv_width;
    ops.attention_width = width;
    // The FFN is what the matrix-multiply parameters leave after attention and the logits, so
    // that the GEMM FLOPs add up to 2·Ψ_mm per token forward (MoE: the active experts).
    const double matmul = matmul_params(model);
    ops.vocab = model.vocab > 0 ? model.vocab : 0;
    const double attention_params = h * ops.qkv_width + width * h;
    const double ffn_params = std::max(0.0, matmul - ops.vocab * h - layers * attention_params) / layers;
    ops.ffn_width = ffn_params / ((model.ffn_gated ? 3.0 : 2.0) * h);
    ops.ffn_in_width = ops.ffn_width * (model.ffn_gated ? 2.0 : 1.0);
    const bool causal = model.family != ModelFamily::encoder;
    // QKᵀ and AV, 2·s·width FLOPs each per token; flash attention skips the masked half of a
    // causal square, other kernels compute and mask it.
    ops.attention_flops_per_token = 4.0 * ops.seq * width * (causal && spec.flash_attention ? 0.5 : 1.0);
    // Element-wise kernels of one layer, forward, in elements read + written per token:
    // two norms (read, write), two residual adds (2 reads, a write), the activation (gated: two
    // reads, a write), dropout after attention and FFN (read, write, a 1-byte mask) when the
    // model trains with it, rotary embedding of q and k for gated (Llama-family) decoders, and
    // without flash attention the scores' softmax (read, write; + dropout). Biases are fused
    // into the GEMM epilogues.
    double elements = 2 * 2 * h + 2 * 3 * h + (model.ffn_gated ? 3.0 : 2.0) * ops.ffn_width;
    double kernels = 5;
    const bool dropout = memory_detail::trains_with_dropout(model);
    const bool fp32_training = precision == Precision::fp32 || precision == Precision::tf32;
    ops.activation_bytes = fp32_training ? 4 : 2;
    if (dropout) {
        elements += 2 * (2 * h + h / ops.activation_bytes);
        kernels += 2;
    }
    if (model.ffn_gated && causal) {
        elements += 2 * (width + kv_width);
        kernels += 1;
    }
    if (!spec.flash_attention) {
        elements += (dropout ? 4.0 : 2.0) * model.heads * ops.seq;
        kernels += dropout ? 2 : 1;
    }
    ops.elementwise_elements_per_token = elements;
    ops.elementwise_kernels = kernels;
    ops.gemm_passes = spec.lora.enabled() ? 2 : 3;  // a frozen base has no weight gradients
    ops.gemm_recompute = checkpointing == Checkpointing::full ? 1 : 0;
    ops.attention_recompute = checkpointing == Checkpointing::none ? 0 : 1;

    // Rates: FP8 GEMMs on the FP8 peak at their own plateau; attention and element-wise stay
    // 16-bit (Transformer Engine recipes).
    const bool fp8 = precision == Precision::fp8 && gpu.supports(Precision::fp8);
    if (precision == Precision::fp8 && !fp8) {
        notes.push_back(fmt::format("{} has no FP8 tensor cores; training runs in BF16", gpu.id));
    }
    const Precision wide = precision == Precision::fp8 ? Precision::bf16 : precision;
    const double wide_peak = matmul_peak_flops_per_s(gpu, wide, notes);
    ops.bandwidth_bytes_per_s = gpu.memory_bandwidth_bytes_per_s * factors.decode_bandwidth;
    ops.floor_s = factors.kernel_floor_s;
    ops.gemm.peak_flops_per_s = fp8 ? gpu.peak_flops_per_s(Precision::fp8) : wide_peak;
    ops.gemm.plateau = fp8 ? factors.training_gemm_fp8 : factors.training_gemm;
    ops.gemm.half_time_s = factors.gemm_half_work_s;
    ops.gemm.bytes_per_s = ops.bandwidth_bytes_per_s;
    ops.gemm.element_bytes = fp8 ? 1 : ops.activation_bytes;
    ops.gemm.floor_s = factors.kernel_floor_s;
    ops.attention_flops_per_s = wide_peak * factors.attention_compute;
    // A sample's GEMM and attention FLOPs at their ceilings: no kernel runs faster.
    const double logits_params = ops.vocab * h;
    const double gemm_flops_per_token =
        2 * std::max(0.0, matmul - logits_params) * (ops.gemm_passes + ops.gemm_recompute) +
        2 * logits_params * ops.gemm_passes;
    const double attention_flops_per_token = layers * ops.attention_flops_per_token * (3 + ops.attention_recompute);
    ops.lower_bound_sample_s = ops.seq * (gemm_flops_per_token / (ops.gemm.peak_flops_per_s * ops.gemm.plateau) +
                                          attention_flops_per_token / ops.attention_flops_per_s);
    return ops;
}

MicroBatchTimes transformer_micro_batch_times(const TransformerTrainingOps& ops, int tp, int pp, int micro_batch) {
    const double t = std::max(1, tp);
    const double tokens = static_cast<double>(std::max(1, micro_batch)) * ops.sequence_tokens;
    const double h = ops.hidden;
    // One layer's four GEMMs, forward, on this GPU's shard (column- then row-parallel).
    const double layer_gemms_s = training_gemm_time_s(tokens, ops.qkv_width / t, h, ops.gemm) +
                                 training_gemm_time_s(tokens, h, ops.attention_width / t, ops.gemm) +
                                 training_gemm_time_s(tokens, ops.ffn_in_width / t, h, ops.gemm) +
                                 training_gemm_time_s(tokens, h, ops.ffn_width / t, ops.gemm);
    const double logits_s = ops.vocab > 0 ? training_gemm_time_s(tokens, ops.vocab / t, h, ops.gemm) : 0.0;
    const double attention_s =
        std::max(tokens * ops.attention_flops_per_token / t / ops.attention_flops_per_s, ops.floor_s);
    // Element-wise kernels (sequence parallel splits the norms, adds and dropout over t too).
    const double elementwise_s =
        std::max(tokens * ops.elementwise_elements_per_token * ops.activation_bytes / t / ops.bandwidth_bytes_per_s,
                 ops.elementwise_kernels * ops.floor_s);
    // Backward: two GEMMs per forward GEMM (one under LoRA), attention backward ≈ 2× forward,
    // element-wise backward ≈ 2× the forward bytes (gradient in and out plus the saved input).
    const double layer_compute_s =
        layer_gemms_s * (ops.gemm_passes + ops.gemm_recompute) + attention_s * (3 + ops.attention_recompute);
    const double layer_memory_s = elementwise_s * (3 + ops.gemm_recompute);
    MicroBatchTimes times;
    times.compute_s = (ops.layers * layer_compute_s + ops.gemm_passes * logits_s) / pp;
    times.memory_s = ops.layers * layer_memory_s / pp;
    return times;
}

double context_parallel_exchange_s(const TransformerTrainingOps& ops, int tp, int pp, int micro_batch,
                                   double link_bytes_per_s, double link_latency_s) {
    if (!ops.valid || ops.context_parallel <= 1) {
        return 0;
    }
    const double t = std::max(1, tp);
    const double tokens = static_cast<double>(std::max(1, micro_batch)) * ops.sequence_tokens;
    // One ring step forward: this rank's K and V chunk (kv heads split over t) to the next rank,
    // while the attention of the chunk it holds runs: 1/cp of its attention (load-balanced
    // chunks, so every step has equal causal work). Backward sends K, V and their gradients
    // against twice the attention work: twice both; a recomputed forward repeats the forward.
    const double step_bytes = 2 * tokens * ops.kv_width / t * ops.activation_bytes;
    const double step_s = step_bytes / link_bytes_per_s + link_latency_s;
    const double attention_s =
        std::max(tokens * ops.attention_flops_per_token / t / ops.attention_flops_per_s, ops.floor_s);
    const double exposed_step_s = std::max(0.0, step_s - attention_s / ops.context_parallel);
    return ops.layers / std::max(1, pp) * (3 + ops.attention_recompute) * (ops.context_parallel - 1) * exposed_step_s;
}

int effective_virtual_stages(const Workload& workload, int pp) {
    return workload.training.scheduled_virtual_stages(pp, workload.model.layers);
}

double exposed_tensor_share(const Workload& workload, const EfficiencyFactors& factors) {
    return workload.runtime.framework == Framework::megatron ? 1 - factors.tp_comm_overlap : 1.0;
}

int data_parallel_ranks_per_node(int gpus_per_node, int tp, int dp) {
    return std::clamp(gpus_per_node / std::max(1, tp), 1, std::max(1, dp));
}

double exposed_after_overlap(double comm_s, double hiding_s, double layers_per_stage) {
    const double chunk_s = layers_per_stage >= 1 ? comm_s / layers_per_stage : comm_s;
    return std::max(comm_s - hiding_s, chunk_s);
}

double optimizer_bytes_per_param(const Workload& workload, Precision precision) {
    const TrainingSpec& training = workload.training;
    const bool fp32_training = precision == Precision::fp32 || precision == Precision::tf32;
    const double gradient_bytes = fp32_training ? 4 : 2;
    double state_bytes = 0;  // optimizer states per parameter, fp32
    switch (training.optimizer) {
        case Optimizer::adamw:
        case Optimizer::adam:
            state_bytes = 8;  // m and v (docs/reference/formulas.md, "optimizer")
            break;
        case Optimizer::adamw_8bit:
            state_bytes = 2;
            break;
        case Optimizer::sgd_momentum:
        case Optimizer::lion:
            state_bytes = 4;
            break;
        case Optimizer::sgd:
        case Optimizer::adafactor:  // factored second moment: negligible next to the weights
            state_bytes = 0;
            break;
    }
    const bool master = training.master_weights && !fp32_training;
    if (!master && !fp32_training) {
        state_bytes /= 2;  // pure 16-bit training keeps its states in 16-bit
    }
    const double weight_bytes = fp32_training ? 4 : 2;
    // One read and one write of every state, one read of the gradient, and the weights:
    // master copy read and written plus the 16-bit copy written, or the weights read and written.
    return 2 * state_bytes + gradient_bytes + (master ? 4 + 4 + 2 : 2 * weight_bytes);
}

TrainingPerf estimate_training(const Setting& setting, int micro_batch_override, ResourceTimes& times) {
    const Workload& workload = setting.workload;
    const GpuSpec& gpu = setting.gpu;
    const EfficiencyFactors& factors = setting.factors;
    const Layout& layout = setting.layout;
    std::vector<std::string>& notes = setting.notes;
    TrainingPerf result;

    const int tp = std::max(1, layout.tensor_parallel);
    const int pp = std::max(1, layout.pipeline_parallel);
    const int dp = std::max(1, layout.data_parallel);
    const int gpus = tp * pp * dp;
    const TrainingBatches batches = training_batches(
        workload.training, checked_sequence_replicas(workload.training, dp, notes), micro_batch_override, notes);
    const int accumulation = batches.accumulation;
    result.micro_batch = batches.micro_batch;
    result.gradient_accumulation = accumulation;
    result.global_batch = batches.global_batch;

    // Transformers: per-operator kernels (docs/perf-model.md, "Training"); other models: FLOPs at
    // the achieved fraction of the dense peak against their DRAM traffic.
    const Precision precision = setting.precision;
    const bool fp8 = precision == Precision::fp8 && gpu.supports(Precision::fp8);
    const Precision wide = precision == Precision::fp8 ? Precision::bf16 : precision;
    const TransformerTrainingOps ops =
        transformer_training_ops(workload, precision, setting.checkpointing, gpu, factors, notes);
    const double base_peak = matmul_peak_flops_per_s(gpu, wide, notes);
    const double mfu_peak = fp8 ? gpu.peak_flops_per_s(Precision::fp8) : base_peak;
    const double bandwidth = gpu.memory_bandwidth_bytes_per_s * factors.decode_bandwidth;

    const SampleWork work = sample_work(workload, setting.checkpointing, factors, notes);
    if (!work.known) {
        return result;
    }

    // One micro-batch on one GPU.
    const MicroBatchKernels kernels =
        micro_batch_kernels(ops, work, tp, pp, batches.micro_batch, base_peak * factors.training_compute, bandwidth);
    const double micro_compute_s = kernels.times.compute_s;
    const double micro_memory_s = kernels.times.memory_s;
    const double micro_kernel_s = kernels.total_s;
    const bool memory_bound_kernels = micro_memory_s > micro_compute_s;
    const double activation_bytes = micro_batch_activation_bytes(workload, batches.micro_batch, work.tokens, wide);
    const double micro_s =
        micro_kernel_s + micro_batch_communication_s(setting, ops, tp, pp, batches.micro_batch, activation_bytes);

    // Pipeline: m + (p − 1)/v micro-batch slots per step (v = 1 without interleaving).
    const int virtual_stages = scheduled_virtual_stages(workload, pp, notes);
    result.bubble_fraction = pipeline_bubble_fraction(pp, accumulation, virtual_stages);
    const double bubble_slots = (pp - 1.0) / virtual_stages;
    const double pipeline_s = (accumulation + bubble_slots) * micro_s;

    const bool fp32_training = precision == Precision::fp32 || precision == Precision::tf32;
    const double gradient_bytes = work.trainable_params / (tp * pp) * (fp32_training ? 4 : 2);
    const DataParallelSync sync = data_parallel_sync(setting, gpus, gradient_bytes, micro_kernel_s, accumulation);

    // Optimizer step: bandwidth-bound over the trainable parameters this GPU owns.
    const double owned_params = work.trainable_params / (tp * pp) / (layout.sharding != Sharding::none ? dp : 1);
    double optimizer_s = owned_params * optimizer_bytes_per_param(workload, precision) / bandwidth;
    double host_transfer_s = 0;
    const double host_link_bytes_per_s = gpu.host_link_bytes_per_s() * factors.host_link *
                                         (workload.data.pin_memory ? 1 : setting.platform.pageable_copy_fraction);
    if (layout.offload != Offload::none) {
        // ZeRO-Offload: gradients down and updated 16-bit weights up every step; the CPU runs Adam.
        optimizer_s = 0;
        host_transfer_s += owned_params * ((fp32_training ? 4 : 2) + 2) / host_link_bytes_per_s;
        if (layout.offload == Offload::optimizer_and_params) {
            host_transfer_s += accumulation * 2 * workload.model.params / (tp * pp) * 2 / host_link_bytes_per_s;
        }
        notes.push_back("offloaded optimizer: the CPU's Adam step is not modelled, only the PCIe traffic");
    }

    const double gpu_step_s = pipeline_s + sync.exposed_s + optimizer_s + host_transfer_s;
    double input_wait_s = 0;
    if (const std::optional<DataSpec> data = modelled_input(setting, gpus)) {
        const InputPipeline input =
            input_pipeline(setting, *data, gpus, dp, result.global_batch, gpu_step_s, host_link_bytes_per_s);
        result.input_data = data;
        result.input_samples_per_s = input.samples_per_s;
        host_transfer_s += input.blocking_copy_s;
        input_wait_s = input.wait_s;
    }

    result.step_time_s = pipeline_s + sync.exposed_s + optimizer_s + host_transfer_s + input_wait_s;
    result.samples_per_s = result.global_batch / result.step_time_s;
    result.tokens_per_s = result.samples_per_s * work.tokens;
    result.model_flops_per_step = work.model_flops * result.global_batch;
    result.mfu = result.model_flops_per_step / (result.step_time_s * mfu_peak * gpus);

    const double bubble_s = bubble_slots * micro_s;
    const double micro_batches_s = accumulation * micro_s;
    const double kernels_s = accumulation * micro_kernel_s;
    if (ops.valid) {
        // Per-operator: GEMMs and attention are compute, element-wise kernels memory.
        result.compute_s = accumulation * micro_compute_s + bubble_s;
        result.memory_s = accumulation * micro_memory_s + optimizer_s;
    } else {
        result.compute_s = (memory_bound_kernels ? 0 : kernels_s) + bubble_s;
        result.memory_s = (memory_bound_kernels ? kernels_s : 0) + optimizer_s;
    }
    result.communication_s = micro_batches_s - kernels_s + sync.exposed_s;
    // What the GPUs lose to collectives and the pipeline bubble, against the same work with free
    // communication: the data-parallel scaling efficiency.
    result.scaling_efficiency = std::clamp(1 - (result.communication_s + bubble_s) / result.step_time_s, 0.0, 1.0);
    result.host_transfer_s = host_transfer_s;
    result.input_s = input_wait_s;
    times = ResourceTimes{};
    times.compute_s = result.compute_s;
    times.memory_bandwidth_s = result.memory_s;
    times.interconnect_s = result.communication_s;
    times.host_link_s = host_transfer_s;
    times.input_pipeline_s = input_wait_s;

    time_to_train(workload.training, work.tokens, result, notes);
    add_context_parallel_note(setting, ops, batches.micro_batch);
    if (dp > 1) {
        notes.push_back(data_parallel_note(dp, sync.link.name, sync.link.bytes_per_s));
    }
    return result;
}

}  // namespace gpusel::perf_detail
