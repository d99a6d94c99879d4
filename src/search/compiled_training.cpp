// The memory and step-time formulas of the full estimators, with everything that does not depend
// on the layout computed once. Each block names the function it mirrors; the sources of the
// formulas are cited there and in docs/memory-model.md and docs/perf-model.md.

#include "search/compiled_training.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "memory/memory.hpp"
#include "memory/terms.hpp"
#include "perf/training_ops.hpp"

namespace gpusel {

using memory_detail::activation_element_bytes;
using memory_detail::is_float_format;
using memory_detail::nccl_bytes_per_communicator;

namespace {

// Optimizer state per trainable parameter, without the master copy: optimizer_state() in
// src/memory/training.cpp.
double optimizer_state_bytes_per_param(Optimizer optimizer, const ModelSpec& model, double state_element) {
    switch (optimizer) {
        case Optimizer::adam:
        case Optimizer::adamw:
            return 2 * state_element;
        case Optimizer::sgd:
            return 0;
        case Optimizer::sgd_momentum:
        case Optimizer::lion:
            return state_element;
        case Optimizer::adamw_8bit:
            return 2;
        case Optimizer::adafactor: {
            const double width = model.hidden > 0 ? model.hidden : std::sqrt(std::max(model.params, 1.0));
            return state_element * 2.0 / width;
        }
    }
    return 0;
}

}  // namespace

std::optional<CompiledTraining> CompiledTraining::compile(const Workload& workload, const GpuSpec& gpu,
                                                          const EfficiencyTable& efficiency,
                                                          std::optional<Precision> precision,
                                                          std::optional<Checkpointing> checkpointing) {
    const ModelSpec& model = workload.model;
    const TrainingSpec& training = workload.training;
    if (!workload.is_training() || memory_detail::uses_per_sample_activations(model) || training.lora.enabled() ||
        !workload.calibration.memory.empty() || training.offload != Offload::none || workload.data.given ||
        workload.assumes_image_pipeline() || model.layers <= 0 || model.heads <= 0) {
        return std::nullopt;
    }
    CompiledTraining compiled;
    compiled.m_workload = &workload;
    compiled.m_gpu = &gpu;
    compiled.m_precision = precision.value_or(workload.precision);
    compiled.m_checkpointing = checkpointing.value_or(training.checkpointing);
    compiled.compile_memory(workload);
    const ServingStack stack = resolve_stack(workload, ServingStack::automatic);
    const EfficiencyFactors factors = efficiency.resolve(gpu, stack);
    compiled.compile_speed(workload, gpu, factors);
    compiled.compile_links(workload, gpu, factors, efficiency.platform);
    return compiled;
}

// --- memory: training_terms() in src/memory/training.cpp
void CompiledTraining::compile_memory(const Workload& workload) {
    const ModelSpec& model = workload.model;
    const TrainingSpec& training = workload.training;
    const ParameterSplit split = split_parameters(model);
    const memory_detail::TransformerWidths widths = memory_detail::transformer_widths(model);
    m_params = split.total;
    m_embedding = split.embedding;
    m_vocab_hidden = static_cast<double>(model.vocab) * model.hidden;
    m_dense_layer_params = split.layers - split.experts;
    m_expert_params = split.experts;
    m_largest_layer = split.largest_layer;
    m_largest_matrix = memory_detail::largest_matrix_params(model);
    m_layers = model.layers;
    m_hidden = model.hidden;
    m_seq = training.seq_len;
    m_context_parallel = std::max(1, training.context_parallel);
    m_sequence_tokens = m_seq / m_context_parallel;
    m_vocab = model.vocab;
    m_ffn_scratch_per_token = widths.moe_top_k * widths.ffn;
    m_experts = model.experts;
    m_moe = model.is_moe();
    m_logits_on_last_stage = model.vocab > 0 && model.family != ModelFamily::encoder;

    const double compute_bytes = activation_element_bytes(m_precision);
    m_compute_bytes = compute_bytes;
    WeightFormat stored = workload.weights;
    if (!is_float_format(stored)) {
        stored = compute_bytes == 4 ? WeightFormat::fp32 : WeightFormat::bf16;
    }
    const double weight_element = bits_per_weight(stored) / 8.0;
    m_weight_element = weight_element;
    m_autocast_copy = weight_element == 4 && compute_bytes == 2;
    m_gradient_element = training.gradient_dtype == GradientDtype::fp32 ? 4.0 : weight_element;
    const bool master = training.master_weights && weight_element < 4;
    const double state_element = (master || weight_element >= 4) ? 4.0 : weight_element;
    m_state_element = state_element;
    m_optimizer_bytes_per_param =
        optimizer_state_bytes_per_param(training.optimizer, model, state_element) + (master ? 4.0 : 0.0);
    m_adam_family = training.optimizer == Optimizer::adam || training.optimizer == Optimizer::adamw;
    m_optimizer_step = training.optimizer_step;
    m_zero_grad_keeps = training.zero_grad == ZeroGrad::zero;
    m_per_logit_bytes = training.loss == LossKind::standard  ? compute_bytes + 4.0
                        : training.loss == LossKind::chunked ? 2.0 * compute_bytes
                                                             : compute_bytes;
    // compute() in src/memory/estimate.cpp: context and the caching allocator's reserve.
    m_context_bytes = cuda_context_bytes(workload.runtime);
    m_reserve_fraction = workload.runtime.allocator == Allocator::caching
                             ? builtin_memory_assumptions().allocator_reserve_fraction
                             : 0.0;
}

// --- speed: estimate_training() in src/perf/training.cpp
void CompiledTraining::compile_speed(const Workload& workload, const GpuSpec& gpu, const EfficiencyFactors& factors) {
    const TrainingSpec& training = workload.training;
    std::vector<std::string> ignored_notes;
    m_ops = perf_detail::transformer_training_ops(workload, m_precision, m_checkpointing, gpu, factors, ignored_notes);
    m_tensor_share = perf_detail::exposed_tensor_share(workload, factors);
    m_bandwidth_bytes_per_s = gpu.memory_bandwidth_bytes_per_s * factors.decode_bandwidth;
    const double seq = std::max(1, training.seq_len);
    const bool fp8 = m_precision == Precision::fp8;
    m_activation_element = element_bytes(fp8 ? Precision::bf16 : m_precision);
    const bool fp32_training = m_precision == Precision::fp32 || m_precision == Precision::tf32;
    m_gradient_bytes_per_param = fp32_training ? 4 : 2;
    m_optimizer_traffic_per_param = perf_detail::optimizer_bytes_per_param(workload, m_precision);
    m_tensor_all_reduces = 4 + (m_checkpointing == Checkpointing::full ? 2 : 0);
    if (training.dataset_tokens > 0) {
        m_samples_total = training.dataset_tokens / seq;
    } else if (training.dataset_samples > 0) {
        m_samples_total = training.dataset_samples;
    }
    m_epochs = training.epochs;
    m_deadline_s = training.deadline_seconds;
}

// --- link_for_group() in src/perf/building_blocks.cpp, by its three cases.
void CompiledTraining::compile_links(const Workload& workload, const GpuSpec& gpu, const EfficiencyFactors& factors,
                                     const PlatformFactors& platform) {
    m_node = workload.constraints.gpus_per_node;
    m_domain = gpu.has_gpu_interconnect() ? gpu.interconnect.domain_size : 0;
    m_nvlink = gpu.has_gpu_interconnect() && workload.deployment.interconnect != NetworkKind::pcie;
    LinkTier nvlink{"", gpu.interconnect.bidirectional_bytes_per_s / 2 * factors.interconnect, factors.nvlink_latency_s,
                    true};
    m_nvlink_tier = {nvlink.bytes_per_s, nvlink.latency_s, collective_link(nvlink, gpu, factors)};
    const LinkTier pcie{"", gpu.host_link_bytes_per_s() * factors.host_link, factors.pcie_latency_s};
    m_pcie_tier = {pcie.bytes_per_s, pcie.latency_s, collective_link(pcie, gpu, factors)};
    const LinkTier cross = link_for_group(workload, gpu, std::max(1, m_node) + 1, factors, platform);
    m_cross_node_tier = {cross.bytes_per_s, cross.latency_s, collective_link(cross, gpu, factors)};
    m_cross_node_link = cross;
}

CompiledTraining::Tier CompiledTraining::tier_for_group(int group_size) const {
    if (group_size > m_node) {
        return m_cross_node_tier;
    }
    return m_nvlink && std::min(group_size, m_node) <= m_domain ? m_nvlink_tier : m_pcie_tier;
}

int CompiledTraining::global_batch(int micro_batch, int data_parallel) const {
    const int given = m_workload->training.global_batch;
    return given > 0 ? given : micro_batch * m_workload->training.sequence_replicas(data_parallel);
}

TrainingLayoutTerms CompiledTraining::layout_terms(int tensor_parallel, int pipeline_parallel,
                                                   int data_parallel) const {
    TrainingLayoutTerms terms;
    terms.tensor_parallel = std::max(1, tensor_parallel);
    terms.pipeline_parallel = std::max(1, pipeline_parallel);
    terms.data_parallel = std::max(1, data_parallel);
    terms.expert_parallel = m_moe ? std::max(1, std::min(terms.data_parallel, m_experts)) : 1;
    const double t = terms.tensor_parallel;
    const double p = terms.pipeline_parallel;
    const double ep = terms.expert_parallel;
    const TrainingSpec& training = m_workload->training;

    // shard_parameters(): the first pipeline stage holds the embedding (Megatron).
    const double stage_embedding = p == 1 ? m_embedding : std::min(m_embedding, m_vocab_hidden);
    terms.shard_params = (m_dense_layer_params / p + m_expert_params / (p * ep) + stage_embedding) / t;
    terms.gather_bytes = 2.0 * m_largest_layer / t * m_weight_element;
    terms.output_layer_params = m_logits_on_last_stage && p <= 1 ? m_vocab_hidden / t : 0.0;
    terms.largest_tensor_params = std::max(m_largest_matrix, m_vocab_hidden) / t;

    // Activations at micro-batch 1 by the same layer function the estimator calls.
    ActivationShape shape;
    shape.seq_len = m_sequence_tokens;
    shape.micro_batch = 1;
    shape.element_bytes = m_compute_bytes;
    shape.dropout = memory_detail::trains_with_dropout(m_workload->model);
    shape.flash_attention = training.flash_attention;
    shape.selective_recompute = m_checkpointing == Checkpointing::selective;
    shape.tensor_parallel = terms.tensor_parallel;
    shape.autocast = m_autocast_copy;
    shape.recompute_ffn_activation = training.recompute_ffn_activation;
    double per_sample = 0;
    if (m_checkpointing == Checkpointing::full) {
        ActivationShape working = shape;
        working.selective_recompute = false;
        per_sample = m_layers * m_sequence_tokens * m_hidden * m_compute_bytes +
                     transformer_layer_activation_bytes(m_workload->model, working);
    } else {
        per_sample = m_layers * transformer_layer_activation_bytes(m_workload->model, shape);
        if (training.recompute_ffn_activation) {
            per_sample += m_sequence_tokens * m_ffn_scratch_per_token * m_compute_bytes / t;
        }
    }
    if (p <= 1 && m_logits_on_last_stage) {
        per_sample += m_sequence_tokens * m_vocab * m_per_logit_bytes / t;
    }
    terms.activation_bytes_per_sample = per_sample;

    const int communicators =
        (terms.data_parallel > 1 ? 1 : 0) + (terms.tensor_parallel > 1 ? 1 : 0) + (terms.pipeline_parallel > 1 ? 1 : 0);
    terms.nccl_bytes = communicators * nccl_bytes_per_communicator;

    const Tier tensor = tier_for_group(terms.tensor_parallel);
    const Tier pipeline = tier_for_group(terms.tensor_parallel * terms.pipeline_parallel);
    const Tier data = tier_for_group(terms.tensor_parallel * terms.pipeline_parallel * terms.data_parallel);
    terms.tensor_link_bytes_per_s = tensor.bytes_per_s;
    terms.tensor_link_latency_s = tensor.latency_s;
    terms.pipeline_link_bytes_per_s = pipeline.bytes_per_s;
    terms.pipeline_link_latency_s = pipeline.latency_s;
    terms.data_link_bytes_per_s = data.bytes_per_s;
    terms.data_link_latency_s = data.latency_s;
    terms.tensor_collective = tensor.collective;
    const int data_group = terms.tensor_parallel * terms.pipeline_parallel * terms.data_parallel;
    terms.data_collective = data_group > m_node
                                ? spread_over_nics(data.collective, m_cross_node_link,
                                                   perf_detail::data_parallel_ranks_per_node(
                                                       m_node, terms.tensor_parallel, terms.data_parallel))
                                : data.collective;
    terms.virtual_stages = perf_detail::effective_virtual_stages(*m_workload, terms.pipeline_parallel);
    const Tier context = tier_for_group(terms.tensor_parallel * m_context_parallel);
    terms.context_link_bytes_per_s = context.bytes_per_s;
    terms.context_link_latency_s = context.latency_s;
    return terms;
}

double CompiledTraining::memory_total_bytes(const TrainingLayoutTerms& terms, Sharding sharding,
                                            int micro_batch) const {
    const double d = terms.data_parallel;
    const bool data_parallel = terms.data_parallel > 1;
    const bool sharded_weights = sharding == Sharding::zero3 && data_parallel;
    const bool sharded_gradients = (sharding == Sharding::zero2 || sharding == Sharding::zero3) && data_parallel;
    const bool sharded_optimizer = sharding != Sharding::none && data_parallel;
    const double trainable = terms.shard_params;

    double weights = trainable * m_weight_element;
    if (sharded_weights) {
        weights = weights / d + terms.gather_bytes;
    }
    const double cast_copy = m_autocast_copy && !sharded_weights ? trainable * 2.0 : 0.0;
    double gradients = trainable * m_gradient_element;
    if (sharded_gradients) {
        gradients /= d;
    }
    const double global = global_batch(micro_batch, terms.data_parallel);
    const bool accumulating =
        global > static_cast<double>(micro_batch) * m_workload->training.sequence_replicas(terms.data_parallel);
    const double backward_gradients = accumulating || m_zero_grad_keeps
                                          ? gradients
                                          : std::min(gradients, terms.output_layer_params * m_gradient_element);
    double optimizer = trainable * m_optimizer_bytes_per_param;
    double step_temporary = 0;
    if (m_adam_family && m_optimizer_step == OptimizerStep::foreach) {
        step_temporary = trainable * m_state_element;
    } else if (m_adam_family && m_optimizer_step == OptimizerStep::for_loop) {
        step_temporary = std::min(trainable, terms.largest_tensor_params) * m_state_element;
    }
    if (sharded_optimizer) {
        optimizer /= d;
        if (m_optimizer_step == OptimizerStep::foreach) {
            step_temporary /= d;
        }
    }
    const double activations = terms.activation_bytes_per_sample * micro_batch;
    // resolve_peak(): the optimizer step or the start of backward, whichever holds more.
    double allocated = 0;
    if (gradients + step_temporary > activations + cast_copy + backward_gradients) {
        allocated = weights + gradients + (optimizer + step_temporary);
    } else {
        allocated = weights + cast_copy + backward_gradients + optimizer + activations;
    }
    return allocated + (m_context_bytes + m_reserve_fraction * allocated + terms.nccl_bytes);
}

TrainingPointResult CompiledTraining::evaluate(const TrainingLayoutTerms& terms, Sharding sharding,
                                               int micro_batch) const {
    TrainingPointResult result;
    result.memory_total_bytes = memory_total_bytes(terms, sharding, micro_batch);
    const int tp = terms.tensor_parallel;
    const int pp = terms.pipeline_parallel;
    const int dp = terms.data_parallel;
    const double model_parallel = static_cast<double>(tp) * pp;
    const int global = global_batch(micro_batch, dp);
    const int replicas = m_workload->training.sequence_replicas(dp);
    const int accumulation =
        std::max(1, static_cast<int>(std::lround(static_cast<double>(global) / (micro_batch * replicas))));

    const perf_detail::MicroBatchTimes kernels = perf_detail::transformer_micro_batch_times(m_ops, tp, pp, micro_batch);
    const double micro_kernel_s = kernels.compute_s + kernels.memory_s;
    double micro_communication_s = 0;
    if (m_context_parallel > 1) {
        micro_communication_s = perf_detail::context_parallel_exchange_s(
            m_ops, tp, pp, micro_batch, terms.context_link_bytes_per_s, terms.context_link_latency_s);
    }
    const double activation_bytes =
        micro_batch * std::max(1.0, m_seq) / m_context_parallel * m_hidden * m_activation_element;
    if (tp > 1) {
        micro_communication_s += m_tensor_share * m_tensor_all_reduces * (m_layers / pp) *
                                 all_reduce_s(activation_bytes, tp, terms.tensor_collective);
    }
    if (pp > 1) {
        micro_communication_s +=
            2.0 * terms.virtual_stages *
            (activation_bytes / tp / terms.pipeline_link_bytes_per_s + terms.pipeline_link_latency_s);
    }
    const double micro_s = micro_kernel_s + micro_communication_s;
    const double pipeline_s = (accumulation + (pp - 1.0) / terms.virtual_stages) * micro_s;

    const double gradient_bytes = m_params / model_parallel * m_gradient_bytes_per_param;
    double exposed_communication_s = 0;
    if (dp > 1) {
        const CollectiveLink& link = terms.data_collective;
        const double layers_per_stage = m_layers / pp;
        if (sharding == Sharding::zero3) {
            const double weight_bytes_16 = m_params / model_parallel * 2;
            const double per_micro =
                2 * all_gather_s(weight_bytes_16, dp, link) + all_gather_s(gradient_bytes, dp, link);
            exposed_communication_s =
                accumulation * perf_detail::exposed_after_overlap(per_micro, micro_kernel_s, layers_per_stage);
        } else if (sharding == Sharding::none) {
            const double all_reduce = all_reduce_s(gradient_bytes, dp, link);
            exposed_communication_s =
                perf_detail::exposed_after_overlap(all_reduce, micro_kernel_s * 2.0 / 3.0, layers_per_stage);
        } else {
            const double scatter = all_gather_s(gradient_bytes, dp, link);
            const double gather = all_gather_s(gradient_bytes, dp, link);
            exposed_communication_s =
                perf_detail::exposed_after_overlap(scatter, micro_kernel_s * 2.0 / 3.0, layers_per_stage) +
                perf_detail::exposed_after_overlap(gather, micro_kernel_s / 3.0, layers_per_stage);
        }
    }
    const double owned_params = m_params / model_parallel / (sharding != Sharding::none ? dp : 1);
    const double optimizer_s = owned_params * m_optimizer_traffic_per_param / m_bandwidth_bytes_per_s;

    result.step_time_s = pipeline_s + exposed_communication_s + optimizer_s;
    result.samples_per_s = static_cast<double>(micro_batch) * replicas * accumulation / result.step_time_s;
    if (m_samples_total > 0) {
        result.time_to_train_s = m_samples_total * m_epochs / result.samples_per_s;
        result.meets_deadline = m_deadline_s <= 0 || result.time_to_train_s <= m_deadline_s;
    }
    return result;
}

double CompiledTraining::step_time_lower_bound_s(int tensor_parallel, int pipeline_parallel, int data_parallel) const {
    // pipeline_s = (m + (p − 1)/v) × micro_s with m = global / (b·dp) and micro_s ≥ b × S / (tp·pp)
    // (S: a sample's GEMM and attention FLOPs at their plateau rates on one GPU, which no kernel
    // beats): (global/dp + (p − 1)/v · b) × S / (tp·pp) ≥ (global/dp + (p − 1)/v) × S / (tp·pp) for
    // b ≥ 1. When the global batch is b × dp (not given), m = 1: ≥ (1 + (p − 1)/v) × b × S / (tp·pp).
    const int pp = std::max(1, pipeline_parallel);
    const double model_parallel = static_cast<double>(std::max(1, tensor_parallel)) * pp;
    const double bubble = (pp - 1.0) / perf_detail::effective_virtual_stages(*m_workload, pp);
    // Context parallelism: m = global / (b · dp/cp) micro-batches of 1/cp of a sample each.
    const double given = m_workload->training.global_batch;
    const double replicas = m_workload->training.sequence_replicas(data_parallel);
    const double slots = given > 0 ? given / replicas + bubble : 1 + bubble;
    return slots * m_ops.lower_bound_sample_s / (model_parallel * m_context_parallel);
}

}  // namespace gpusel
