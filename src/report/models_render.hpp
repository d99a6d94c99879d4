#pragma once
// Renderers of `gpusel models list` and `models show`: pure functions of the model presets.

#include <iosfwd>
#include <vector>

#include "inputs/models.hpp"

namespace gpusel {

// One row per preset: family, parameters (active ones for a mixture of experts), layers, hidden
// size, heads/kv heads, FFN width and vocabulary; "—" where a value does not apply.
void render_models_list(const std::vector<ModelSpec>& models, std::ostream& out);

// A preset's or Hugging Face model's architecture: sizes, attention, experts, the KV cache per
// token, quantization, and where it was read.
void render_model_show(const ModelSpec& model, std::ostream& out);

}  // namespace gpusel
