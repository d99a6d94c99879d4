// Inference terms of the memory estimator: the weights one GPU of a layout stores, the KV
// cache of a batch of requests and the prefill workspace (attention scores, the largest
// dequantized matrix). Formulas and sources: docs/memory-model.md (each term names its source).

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "memory/internal.hpp"
#include "memory/terms.hpp"

namespace gpusel::memory_detail {

namespace {

// KV heads split over tensor-parallel ranks, replicated when there are fewer heads than ranks.
// MLA's latent is shared by all heads, so every rank holds all of it (vLLM, SGLang). Under DP
// attention each rank holds its own sequences' whole cache: 1/t of the batch's.
double inference_kv_cache_bytes(const Workload& workload, const Layout& layout, int batch, int context_tokens,
                                NoteList& notes) {
    const ModelSpec& model = workload.model;
    const double t = std::max(layout.tensor_parallel, 1);
    const double p = std::max(layout.pipeline_parallel, 1);
    const double kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
    const double kv_share = workload.inference.dp_attention ? 1 / t
                            : model.is_mla()                ? 1.0
                                                            : std::ceil(kv_heads / t) / kv_heads;
    const double kv_cache =
        kv_cache_bytes(model, element_bytes(workload.kv_cache), context_tokens, batch) * kv_share / p;
    if (!notes.active()) {
        return kv_cache;
    }
    const std::string share = kv_share < 1 || p > 1 ? fmt::format(", this GPU's share {:.3g}", kv_share / p) : "";
    const std::string window =
        model.sliding_window > 0
            ? fmt::format(" ({} of them hold at most the {}-token window)",
                          model.sliding_layers > 0 ? model.sliding_layers : model.layers, model.sliding_window)
            : "";
    if (model.is_mla()) {
        notes.add(
            "KV cache (MLA latent): {} layers{} × ({} latent + {} RoPE key) × {:g} B × {} tokens × {} "
            "sequences{} = {}",
            model.layers, window, model.kv_lora_rank, model.qk_rope_head_dim, element_bytes(workload.kv_cache),
            context_tokens, batch, share, gb(kv_cache));
    } else {
        notes.add(
            "KV cache: 2 × {} layers{} × {} KV heads × {} head dim × {:g} B × {} tokens × {} sequences{} = "
            "{}",
            model.layers, window, model.kv_heads, model.head_dim, element_bytes(workload.kv_cache), context_tokens,
            batch, share, gb(kv_cache));
    }
    return kv_cache;
}

// Prefill workspace: one layer's transient (residual, normed input, FFN intermediates) for the
// whole prompt, plus the prompt's logits in the compute dtype (HF and LitGPT compute them all).
// Encoders (BERT, RoBERTa) encode each input in one pass: their outputs are hidden states for a
// small task head, not vocabulary logits (as in training).
double prefill_workspace_bytes(const Workload& workload, double compute_bytes, const Layout& layout, int batch,
                               int context_tokens, NoteList& notes) {
    const ModelSpec& model = workload.model;
    const bool encoder = model.family == ModelFamily::encoder;
    const double t = std::max(layout.tensor_parallel, 1);
    const TransformerWidths w = memory_detail::transformer_widths(model);
    const double prompt = std::min(workload.inference.input_tokens, context_tokens);
    const double tokens = prompt * batch;
    const double ffn_tensors = model.ffn_gated ? 3.0 : 2.0;
    const double layer = tokens * (2.0 * w.hidden + w.moe_top_k * ffn_tensors * w.ffn / t) * compute_bytes;
    const double logits = model.vocab > 0 && !encoder ? tokens * model.vocab * compute_bytes / t : 0.0;
    const double workspace = layer + logits;
    if (notes.active()) {
        notes.add("activation workspace: one layer's {} intermediates for {} tokens × {}{} = {}",
                  encoder ? "forward" : "prefill", static_cast<long long>(prompt), batch,
                  encoder ? " (encoder: no KV cache, no vocabulary logits)" : " + their logits", gb(workspace));
    }
    return workspace;
}

}  // namespace

InferenceResult inference_terms(const Workload& workload, Precision precision, const Layout& layout, int batch,
                                int context_tokens, NoteList& notes) {
    const ModelSpec& model = workload.model;
    InferenceResult result;
    const ParameterSplit split = split_parameters(model);
    const ShardParams shard = shard_parameters(model, split, layout);
    const double compute_bytes = activation_element_bytes(precision);
    result.peak.weights = stored_weight_bytes(shard, workload.weights);
    result.peak.weights_uncertainty =
        result.peak.weights *
        (is_float_format(workload.weights) ? float_weight_uncertainty : quantized_weight_uncertainty);
    const bool dequantized_copy = is_quantized(workload.weights) && !is_fp4_format(workload.weights) &&
                                  !memory_detail::is_whole_file_format(workload.weights);
    if (dequantized_copy) {
        // Weight-only kernels dequantize one matrix at a time to the compute dtype. The block-scaled
        // FP4 formats feed FP4 tensor cores, or are dequantized in registers inside the GEMM
        // (vLLM's FP4 Marlin path, docs/memory-model.md): no matrix-sized copy.
        result.peak.weights += largest_matrix_params(model) * compute_bytes / std::max(layout.tensor_parallel, 1);
    }
    if (notes.active()) {
        notes.add("weights: {} parameters{} × {:g} B ({}){} = {}", format_count(shard.total),
                  shard.fraction < 1 ? " on this GPU" : "", bits_per_weight(workload.weights) / 8,
                  to_string(workload.weights),
                  !model.is_transformer() || memory_detail::is_float_format(workload.weights) ||
                          memory_detail::is_whole_file_format(workload.weights)
                      ? ""
                  : dequantized_copy ? ", embeddings and output layer in 16-bit, + one dequantized matrix"
                                     : ", embeddings and output layer in 16-bit",
                  gb(result.peak.weights));
    }
    if (model.is_transformer()) {
        // Encoders (BERT, RoBERTa) encode each input in one pass: no KV cache.
        if (model.family != ModelFamily::encoder) {
            result.peak.kv_cache = inference_kv_cache_bytes(workload, layout, batch, context_tokens, notes);
        }
        result.peak.activations =
            prefill_workspace_bytes(workload, compute_bytes, layout, batch, context_tokens, notes);
    } else if (model.activation_bytes_per_sample > 0) {
        const double scale = compute_bytes == 2 ? half_precision_activation_factor : 1.0;
        result.peak.activations = model.activation_bytes_per_sample * scale * batch;
        if (notes.active()) {
            notes.add(
                "activation workspace: the per-sample training figure × batch {} = {}, an upper bound (inference "
                "frees activations layer by layer)",
                batch, gb(result.peak.activations));
        }
    } else {
        if (notes.active()) {
            notes.add("activation workspace: the model has no per-sample activation figure; counted as 0");
        }
    }
    return result;
}

}  // namespace gpusel::memory_detail
