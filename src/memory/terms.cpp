// The per-term formulas of the memory estimator. Sources: docs/memory-model.md.

#include "memory/terms.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "base/text.hpp"
#include "inputs/models.hpp"

namespace gpusel {

namespace memory_detail {

TransformerWidths transformer_widths(const ModelSpec& model) {
    TransformerWidths widths;
    widths.hidden = model.hidden;
    // Without heads (a model given by its widths alone) one head spans the hidden width.
    const double head_dim = model.heads > 0 ? model.attention_head_dim() : widths.hidden;
    const double heads = model.heads > 0 ? model.heads : 1;
    const double kv_heads = model.kv_heads > 0 ? model.kv_heads : heads;
    widths.q_width = heads * head_dim;
    widths.kv_width = kv_heads * head_dim;
    // 4h is the FFN width of the original Transformer and of GPT-2/BERT, used when a preset omits it.
    widths.ffn = model.ffn > 0 ? model.ffn : 4.0 * widths.hidden;
    if (model.is_moe()) {
        widths.moe_top_k = model.top_k;
        widths.experts = model.experts;
    }
    return widths;
}

ShardParams shard_parameters(const ModelSpec& model, const ParameterSplit& split, const Layout& layout) {
    const double t = std::max(layout.tensor_parallel, 1);
    const double p = std::max(layout.pipeline_parallel, 1);
    const double ep = std::max(layout.expert_parallel, 1);
    ShardParams shard;
    const double dense_layers = split.layers - split.experts;
    const double stage_embedding =
        p == 1 ? split.embedding : std::min(split.embedding, static_cast<double>(model.vocab) * model.hidden);
    shard.embedding = stage_embedding / t;
    shard.total = (dense_layers / p + split.experts / (p * ep) + stage_embedding) / t;
    shard.fraction = 1.0 / (p * t);
    return shard;
}

double stored_weight_bytes(const ShardParams& shard, WeightFormat format) {
    const double bytes_per_param = bits_per_weight(format) / 8.0;
    // Formats below 16 bits keep the embeddings and output layer in 16-bit; fp8-block's scales put
    // it a hair above 8 bits, so the test is the format, not the bit count.
    if (!is_float_format(format) && !is_whole_file_format(format)) {
        return (shard.total - shard.embedding) * bytes_per_param + shard.embedding * 2.0;
    }
    return shard.total * bytes_per_param;
}

bool is_whole_file_format(WeightFormat format) {
    return format == WeightFormat::q4_0 || format == WeightFormat::q4_k_m || format == WeightFormat::q8_0;
}

double activation_element_bytes(Precision precision) {
    return precision == Precision::fp32 || precision == Precision::tf32 ? 4.0 : 2.0;
}

bool is_float_format(WeightFormat format) {
    return format == WeightFormat::fp32 || format == WeightFormat::fp16 || format == WeightFormat::bf16;
}

bool trains_with_dropout(const ModelSpec& model) {
    return model.family == ModelFamily::encoder || model.family == ModelFamily::encoder_decoder;
}

bool uses_per_sample_activations(const ModelSpec& model) {
    if (!model.is_transformer()) {
        return true;
    }
    return model.activation_bytes_per_sample > 0 &&
           (model.family == ModelFamily::cnn || model.family == ModelFamily::vit ||
            model.family == ModelFamily::diffusion || model.family == ModelFamily::other);
}

double largest_matrix_params(const ModelSpec& model) {
    if (!model.is_transformer()) {
        return 0;
    }
    const TransformerWidths w = transformer_widths(model);
    return w.hidden * std::max({w.ffn, w.q_width + 2 * w.kv_width, w.hidden});
}

namespace {

struct Projection {
    double in = 0;
    double out = 0;
    bool in_ffn = false;  // replicated per expert in MoE models
};

// What a LoRA target names: the output head, one projection of a block, or nothing known.
enum class TargetRole { head, q, k, v, o, qkv, gate, up, gate_up, down, fc1, fc2, unknown };

// Module names as Hugging Face PEFT, LitGPT and torchtune spell them, in any case. A name's
// role depends only on the name and on whether the FFN is gated (w1, fc_1, proj … mean
// different matrices in a plain MLP).
TargetRole target_role(std::string_view name, bool ffn_gated) {
    const auto is = [&](std::initializer_list<std::string_view> names) {
        return std::any_of(names.begin(), names.end(),
                           [&](std::string_view candidate) { return equals_ignore_case(name, candidate); });
    };
    if (is({"lm_head", "output", "head"})) {
        return TargetRole::head;
    }
    if (is({"q_proj", "q", "query", "wq", "to_q"})) {
        return TargetRole::q;
    }
    if (is({"k_proj", "k", "key", "wk", "to_k"})) {
        return TargetRole::k;
    }
    if (is({"v_proj", "v", "value", "wv", "to_v"})) {
        return TargetRole::v;
    }
    if (is({"o_proj", "o", "out_proj", "output_proj", "wo", "to_out", "attn_proj"})) {
        return TargetRole::o;
    }
    if (is({"qkv_proj", "qkv", "c_attn", "query_key_value", "wqkv", "attn"})) {
        return TargetRole::qkv;
    }
    if (is({"gate_proj", "w1", "fc_1"}) && ffn_gated) {
        return TargetRole::gate;
    }
    if (is({"up_proj", "w3", "fc_2"}) && ffn_gated) {
        return TargetRole::up;
    }
    if (is({"gate_up_proj"})) {
        return TargetRole::gate_up;
    }
    if (is({"down_proj", "w2", "proj", "mlp_proj"}) && ffn_gated) {
        return TargetRole::down;
    }
    if (is({"fc1", "fc_1", "c_fc", "up_proj", "intermediate", "w1", "dense_h_to_4h"})) {
        return TargetRole::fc1;
    }
    if (is({"fc2", "fc_2", "down_proj", "mlp_proj", "w2", "dense_4h_to_h", "proj"})) {
        return TargetRole::fc2;
    }
    return TargetRole::unknown;
}

// An unknown target counts as an h→h projection.
Projection projection_of(TargetRole role, const TransformerWidths& w) {
    switch (role) {
        case TargetRole::q:
            return {w.hidden, w.q_width, false};
        case TargetRole::k:
        case TargetRole::v:
            return {w.hidden, w.kv_width, false};
        case TargetRole::o:
            return {w.q_width, w.hidden, false};
        case TargetRole::qkv:
            return {w.hidden, w.q_width + 2 * w.kv_width, false};
        case TargetRole::gate:
        case TargetRole::up:
        case TargetRole::fc1:
            return {w.hidden, w.ffn, true};
        case TargetRole::gate_up:
            return {w.hidden, 2 * w.ffn, true};
        case TargetRole::down:
        case TargetRole::fc2:
            return {w.ffn, w.hidden, true};
        case TargetRole::head:
        case TargetRole::unknown:
            break;
    }
    return {w.hidden, w.hidden, false};
}

// The targets of a LoRA spec (all-linear expanded) with their roles.
struct ResolvedTargets {
    std::vector<std::string> given;  // LoraSpec::targets
    bool ffn_gated = false;
    std::vector<std::pair<std::string, TargetRole>> targets;
};

ResolvedTargets resolve_targets(const std::vector<std::string>& given, bool ffn_gated) {
    // PEFT's all-linear: every linear layer of the blocks, not the output head.
    static const std::vector<std::string> all_linear_gated{"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                           "gate_proj", "up_proj", "down_proj"};
    static const std::vector<std::string> all_linear{"q_proj", "k_proj", "v_proj", "o_proj", "fc1", "fc2"};
    const std::vector<std::string>& targets = std::find(given.begin(), given.end(), "all-linear") == given.end() ? given
                                              : ffn_gated ? all_linear_gated
                                                          : all_linear;
    ResolvedTargets resolved{given, ffn_gated, {}};
    for (const std::string& target : targets) {
        resolved.targets.emplace_back(target, target_role(target, ffn_gated));
    }
    return resolved;
}

// Every memory breakdown of a LoRA workload asks for its shape, several times (thousands per
// plan), always with the same few target lists: their roles are remembered per thread (the
// planner's sections run on several), by the list and the FFN's gating they depend on alone.
const ResolvedTargets& targets_of(const LoraSpec& lora, bool ffn_gated) {
    thread_local std::vector<ResolvedTargets> seen;
    for (const ResolvedTargets& resolved : seen) {
        if (resolved.ffn_gated == ffn_gated && resolved.given == lora.targets) {
            return resolved;
        }
    }
    if (seen.size() >= 16) {
        seen.clear();
    }
    seen.push_back(resolve_targets(lora.targets, ffn_gated));
    return seen.back();
}

}  // namespace

LoraShape lora_shape(const ModelSpec& model, const LoraSpec& lora) {
    LoraShape shape;
    if (!lora.enabled() || !model.is_transformer()) {
        return shape;
    }
    const TransformerWidths w = transformer_widths(model);
    const double rank = lora.rank;
    for (const auto& [target, role] : targets_of(lora, model.ffn_gated).targets) {
        if (role == TargetRole::head) {
            shape.head_params += rank * (w.hidden + model.vocab);
            continue;
        }
        if (role == TargetRole::unknown) {
            shape.unknown.push_back(target);
        }
        const Projection projection = projection_of(role, w);
        const double copies = projection.in_ffn ? w.experts : 1.0;
        shape.params_per_layer += copies * rank * (projection.in + projection.out);
        shape.input_width_per_layer += (projection.in_ffn ? w.moe_top_k : 1.0) * projection.in;
    }
    return shape;
}

}  // namespace memory_detail

using memory_detail::TransformerWidths;

ParameterSplit split_parameters(const ModelSpec& model) {
    ParameterSplit split;
    split.total = model.params;
    if (model.is_transformer() && model.vocab > 0) {
        const double embedding = static_cast<double>(model.vocab) * model.hidden * (model.tied_embeddings ? 1.0 : 2.0);
        split.embedding = std::min(embedding, split.total);
    }
    split.layers = split.total - split.embedding;
    if (model.is_transformer()) {
        const TransformerWidths w = memory_detail::transformer_widths(model);
        if (model.is_moe()) {
            const double matrices = model.ffn_gated ? 3.0 : 2.0;
            // Only the layers that hold routed experts (DeepSeek's first dense layers and Llama-4's
            // interleaved dense ones do not).
            split.experts = std::min(split.layers, moe_layer_count(model) * w.experts * matrices * w.hidden * w.ffn);
        }
        const double per_layer = model.layers > 0 ? split.layers / model.layers : split.layers;
        // The untied output projection (V×h) is one matrix; when it outgrows a block it is the largest gather.
        const double output_matrix = static_cast<double>(model.vocab) * model.hidden;
        split.largest_layer = std::max(per_layer, output_matrix);
    }
    // Without the architecture the largest layer is unknown; ZeRO-3 gather buffers are then not counted.
    return split;
}

double lora_trainable_params(const ModelSpec& model, const LoraSpec& lora, std::vector<std::string>* unknown) {
    const memory_detail::LoraShape shape = memory_detail::lora_shape(model, lora);
    if (unknown != nullptr) {
        *unknown = shape.unknown;
    }
    return shape.params_per_layer * model.layers + shape.head_params;
}

double kv_cache_bytes(const ModelSpec& model, double element_bytes, double tokens_per_sequence, double sequences) {
    if (!model.is_transformer()) {
        return 0;
    }
    return kv_cache_bytes_per_sequence(model, element_bytes, tokens_per_sequence) * sequences;
}

double transformer_layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape) {
    if (!model.is_transformer()) {
        return 0;
    }
    const TransformerWidths w = memory_detail::transformer_widths(model);
    const double t = std::max(shape.tensor_parallel, 1);
    const double e = shape.element_bytes;
    const double tokens = shape.seq_len * shape.micro_batch;
    // Korthikanti et al. 2022 §4.1, per token, in elements of the activation dtype:
    // kept whole on every tensor-parallel rank: two LayerNorm inputs (2h), the shared QKV input (h),
    // the MLP input (h; a MoE token is dispatched to top_k experts);
    const double norm_inputs = 2.0 * w.hidden;
    const double linear_inputs = w.hidden + w.moe_top_k * w.hidden;
    // split across tensor-parallel ranks: Q, K, V (K and V narrower under GQA/MQA), the output
    // projection's input, and the FFN intermediates: GeLU input and fc2 input (2f) for a plain MLP;
    // gate output, SiLU output, up output and their product (4f) for an unfused SwiGLU, as PyTorch
    // autograd saves them.
    const double ffn_tensors = (model.ffn_gated ? 4.0 : 2.0) - (shape.recompute_ffn_activation ? 1.0 : 0.0);
    const double split = 2.0 * w.q_width + 2.0 * w.kv_width + w.moe_top_k * ffn_tensors * w.ffn;
    // Dropout after attention and after the MLP keeps a 1-byte mask per element.
    const double masks = shape.dropout ? 2.0 * w.hidden : 0.0;
    // Under autocast the residual stream (LayerNorm inputs) stays fp32; matmul inputs are 16-bit casts.
    const double norm_bytes = shape.autocast ? 4.0 : e;
    double bytes = tokens * (norm_inputs * norm_bytes + (linear_inputs + split / t) * e + masks);
    // Attention scores: softmax output (+ dropout mask and dropout output) per head, a·s² per
    // sample; flash attention never materialises them, selective recompute recomputes them.
    if (!shape.flash_attention && !shape.selective_recompute) {
        const double heads = model.heads;
        // Autocast: fp32 softmax output, fp32 dropout output, and the 16-bit copy the next matmul saves.
        const double per_score =
            shape.autocast ? 4.0 + (shape.dropout ? 1.0 + 4.0 : 0.0) + 2.0 : e + (shape.dropout ? e + 1.0 : 0.0);
        bytes += heads * shape.seq_len * shape.seq_len * shape.micro_batch * per_score / t;
    }
    return bytes;
}

double cuda_context_bytes(const RuntimeSpec& runtime) {
    if (runtime.cuda_context_bytes > 0) {
        return runtime.cuda_context_bytes;
    }
    // PyTorch 1.x loaded every kernel of its CUDA libraries at context creation: 1343 MiB measured on
    // a V100 (HF "model memory anatomy", torch.ones((1, 1)).to("cuda"), PyTorch 1.1x era).
    if (runtime.framework == Framework::pytorch_1) {
        return 1343.0 * 1024 * 1024;
    }
    // CUDA lazy module loading (CUDA >= 11.7, on by default with PyTorch 2.x) loads kernels on first
    // use: 0.3–0.6 GB (docs/reference/formulas.md); the midpoint. No figure specific to Megatron, llm.c or llama.cpp
    // was found; they link the same CUDA libraries.
    return 0.45e9;
}

}  // namespace gpusel
