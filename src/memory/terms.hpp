#pragma once
// The per-term formulas of the memory model (docs/memory-model.md), public to the performance
// model and the layout search: perf/training.cpp, perf/memory_bridge.cpp and
// search/compiled_training.cpp use them so that what they assume fits, and how much an
// activation or an optimizer state weighs, is what `gpusel memory` says. Units: bytes (`_bytes`,
// and every function whose name says bytes), parameters (`params`, counts of weights), widths in
// elements. The names stay in memory_detail: building blocks of the model; the estimator's API
// is memory/memory.hpp. The estimator's own shared parts are in memory/internal.hpp (private).

#include <algorithm>
#include <string>
#include <vector>

#include "memory/memory.hpp"

namespace gpusel::memory_detail {

// LoRA adapters of one model, per transformer layer (and once for the output head).
struct LoraShape {
    double params_per_layer = 0;       // Σ_targets r·(d_in + d_out)
    double input_width_per_layer = 0;  // Σ_targets d_in: what LoRA dropout stores per token
    double head_params = 0;            // lm_head target: r·(h + V), once
    std::vector<std::string> unknown;  // target names not recognised (counted as h→h)
};
LoraShape lora_shape(const ModelSpec& model, const LoraSpec& lora);

// Effective widths of a transformer (0 fields filled from the others).
struct TransformerWidths {
    double hidden = 0;
    double q_width = 0;    // heads × head_dim
    double kv_width = 0;   // kv_heads × head_dim
    double ffn = 0;        // 4 × hidden when not given
    double moe_top_k = 1;  // experts each token visits (1 for dense)
    double experts = 1;
};
TransformerWidths transformer_widths(const ModelSpec& model);

// Parameters held by the most loaded rank before ZeRO: Megatron's (Ψ_blocks/p + V·h)/t for the
// first pipeline stage (Megatron-LM theoretical_memory_usage.py), experts further split by EP.
struct ShardParams {
    double total = 0;      // parameters on this rank
    double embedding = 0;  // of which embedding/output (kept 16-bit by weight-only quantizers)
    double fraction = 1;   // of the model's blocks on this rank (for per-layer quantities)
};
ShardParams shard_parameters(const ModelSpec& model, const ParameterSplit& split, const Layout& layout);

// Stored bytes of the weights held on this rank, with the embedding and output layers in 16-bit
// for weight-only quantizers (bitsandbytes, AWQ, GPTQ and fp8 serving quantize only the linear
// layers of the blocks); GGUF bits per weight are whole-file averages that include them.
double stored_weight_bytes(const ShardParams& shard, WeightFormat format);

// Weight formats whose bits per weight is a whole-file average (llama.cpp GGUF), i.e. already
// includes the embedding and output layers.
bool is_whole_file_format(WeightFormat format);

// NCCL_BUFFSIZE is 4 MiB by default (NCCL environment-variable docs); a ring keeps a send and a
// receive buffer per channel, up to 32 channels: 256 MiB per communicator, outside PyTorch's allocator.
inline constexpr double nccl_bytes_per_communicator = 4.0 * 1024 * 1024 * 2 * 32;

// Bytes of a stored activation: 4 under fp32/tf32, else 2 (fp8 training keeps activations and
// most saved tensors in bf16: Transformer Engine).
double activation_element_bytes(Precision precision);

// fp32, fp16 or bf16 (not a quantized or fp8 format).
bool is_float_format(WeightFormat format);

// Encoders (BERT, RoBERTa, T5) train with dropout 0.1 in their published configs; current
// decoder LLMs (Llama, Mistral, Qwen, Phi, Falcon) set it to 0.
bool trains_with_dropout(const ModelSpec& model);

// Activations from the model's per-sample figure (not a transformer, or a CNN/ViT/diffusion
// preset that carries one) rather than Korthikanti's per-layer terms.
bool uses_per_sample_activations(const ModelSpec& model);

// The largest single dequantized or gathered matrix (parameters): the transient a quantized
// layer's matmul or a ZeRO-3 prefetch holds. 0 without transformer fields.
double largest_matrix_params(const ModelSpec& model);

// Largest value in [1, limit] for which `fits(value)` holds, assuming it is monotone (true up to
// some value, false beyond); 0 if none. Doubling, then bisection.
template <typename Fits>
int largest_fitting(int limit, Fits fits) {
    if (limit < 1 || !fits(1)) {
        return 0;
    }
    int good = 1;
    long long probe = 2;
    while (probe <= limit && fits(static_cast<int>(probe))) {
        good = static_cast<int>(probe);
        probe *= 2;
    }
    int bad = static_cast<int>(std::min<long long>(probe, limit));
    if (probe > limit) {
        if (good == limit || fits(limit)) {
            return limit;
        }
    }
    while (bad - good > 1) {
        const int middle = good + (bad - good) / 2;
        if (fits(middle)) {
            good = middle;
        } else {
            bad = middle;
        }
    }
    return good;
}

}  // namespace gpusel::memory_detail
