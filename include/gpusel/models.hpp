#pragma once
// Model architectures: the preset library (data/models.yaml, compiled in) and the
// Hugging Face config.json importer.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusel/error.hpp"

namespace gpusel {

enum class ModelFamily { decoder, encoder, encoder_decoder, moe_decoder, cnn, vit, diffusion, other };

std::string_view to_string(ModelFamily family);

// Architecture of one model. Counts are plain numbers; 0 means "not given".
struct ModelSpec {
    std::string name;
    ModelFamily family = ModelFamily::decoder;
    double params = 0;         // total parameters
    double active_params = 0;  // parameters used per token (MoE); = params for dense models
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;  // = heads for multi-head attention, 1 for multi-query
    int head_dim = 0;
    int ffn = 0;
    bool ffn_gated = false;  // SwiGLU / GeGLU: three FFN matrices instead of two
    int vocab = 0;
    int experts = 0;
    int top_k = 0;
    bool tied_embeddings = false;
    int max_context = 0;
    // Non-transformer models: published per-sample figures at the stated input size.
    double activation_bytes_per_sample = 0;  // kept for backward, fp32
    double flops_per_sample = 0;             // forward FLOPs (2 per multiply-add)
    std::string input;
    std::string source;
    std::string notes;

    // True when the architecture fields (layers, hidden, heads) describe a transformer.
    bool is_transformer() const { return layers > 0 && hidden > 0 && heads > 0; }
    bool is_moe() const { return experts > 1 && top_k > 0; }
};

class ModelLibrary {
public:
    const std::vector<ModelSpec>& models() const { return m_models; }
    // Case-insensitive lookup; nullptr when absent.
    const ModelSpec* find(std::string_view name) const;
    std::string suggest(std::string_view name) const;
    void upsert(ModelSpec model);

private:
    std::vector<ModelSpec> m_models;
    std::unordered_map<std::string, std::size_t> m_index;  // lower-case name -> position
};

// Parses models YAML text and merges it into `library`: an entry replaces the library's model
// of the same name (names are compared ignoring case). Throws InputError, also when one file
// names a model twice (at the second entry's name, naming the first's line).
void merge_models_text(ModelLibrary& library, std::string_view text, const std::string& file_name);
void merge_models_file(ModelLibrary& library, const std::string& path);

// The library compiled into the binary from data/models.yaml.
ModelLibrary builtin_models();

// Reads a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2, Gemma, GPT-2, BERT, T5
// field names) into a ModelSpec. The parameter count is computed from the architecture.
// Throws InputError with the file name on unreadable or unrecognised configs.
ModelSpec model_from_hf_config_text(std::string_view json_text, const std::string& file_name);
ModelSpec model_from_hf_config_file(const std::string& path);

// Parameter count implied by the transformer fields (embeddings, attention with GQA, gated or
// plain FFN, MoE experts, norms ignored). Returns 0 when the fields are incomplete.
double transformer_param_count(const ModelSpec& model);

}  // namespace gpusel
