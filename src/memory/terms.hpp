#pragma once
// Internal pieces of the memory estimator shared by its source files.

#include <string>
#include <vector>

#include "gpusel/memory.hpp"

namespace gpusel::memory_detail {

// LoRA adapters of one model, per transformer layer (and once for the output head).
struct LoraShape {
    double params_per_layer = 0;        // Σ_targets r·(d_in + d_out)
    double input_width_per_layer = 0;   // Σ_targets d_in: what LoRA dropout stores per token
    double head_params = 0;             // lm_head target: r·(h + V), once
    std::vector<std::string> unknown;   // target names not recognised (counted as h→h)
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

// Weight formats whose bits per weight is a whole-file average (llama.cpp GGUF), i.e. already
// includes the embedding and output layers.
bool is_whole_file_format(WeightFormat format);

}  // namespace gpusel::memory_detail
