#pragma once
// Model architectures: the preset library (data/models.yaml, compiled in) and the
// Hugging Face config.json importer.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"

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
    int head_dim = 0;  // 0 until the loader derives it (attention_head_dim)
    int ffn = 0;
    bool ffn_gated = false;  // SwiGLU / GeGLU: three FFN matrices instead of two
    int vocab = 0;
    int experts = 0;
    int top_k = 0;
    bool tied_embeddings = false;
    int max_context = 0;
    // Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1): the cache holds one
    // latent of kv_lora_rank plus a decoupled RoPE key of qk_rope_head_dim per token and layer,
    // shared by all heads. q_lora_rank 0 means an uncompressed query projection.
    int kv_lora_rank = 0;
    int q_lora_rank = 0;
    int qk_rope_head_dim = 0;
    int qk_nope_head_dim = 0;
    int v_head_dim = 0;
    // Mixture-of-experts refinements: the width of the shared experts every token passes through
    // (DeepSeek n_shared_experts × moe_intermediate_size, Qwen2-MoE shared_expert_intermediate_size),
    // and the first dense layers (DeepSeek first_k_dense_replace) with their FFN width.
    int shared_ffn = 0;
    int dense_layers = 0;
    int dense_ffn = 0;
    // Interleaved MoE (Llama-4 interleave_moe_layer_step): after the first dense_layers, every
    // moe_layer_step-th layer is a MoE layer and the others are dense FFNs of dense_ffn, so
    // (layers − dense_layers) / moe_layer_step layers hold experts. 0 or 1: every layer.
    int moe_layer_step = 0;
    // Sliding-window attention: the window in tokens and how many layers use it (the others
    // attend to the whole context). 0 layers with a window means all layers.
    int sliding_window = 0;
    int sliding_layers = 0;
    // Chunked local attention (Llama-4 attention_chunk_size): the sliding_layers attend within
    // fixed chunks of sliding_window tokens instead of a window sliding with each token. A layer
    // caches at most a chunk either way; a query attends to half a chunk on average, not a window.
    bool attention_chunked = false;
    // Attention sinks (gpt-oss): one learned logit per head and layer added to each softmax's
    // denominator; parameters, no cached tokens.
    bool attention_sinks = false;
    // Read from a checkpoint's quantization config: the weight format it implies (a
    // parse_weight_format name, empty for none) and what was read, for `models show`.
    std::string checkpoint_weights;
    std::string quantization;
    // A model resolved from a Hugging Face id: the id and the snapshot's commit.
    std::string hf_id;
    std::string revision;
    // Non-transformer models: published per-sample figures at the stated input size.
    double activation_bytes_per_sample = 0;  // kept for backward, fp32
    double flops_per_sample = 0;             // forward FLOPs (2 per multiply-add)
    // Diffusion: FLOPs of the decoder (VAE) run once per image after the denoising loop.
    double decoder_flops_per_sample = 0;
    std::string input;
    std::string source;
    std::string notes;

    // True when the architecture fields (layers, hidden, heads) describe a transformer.
    bool is_transformer() const { return layers > 0 && hidden > 0 && heads > 0; }
    bool is_moe() const { return experts > 1 && top_k > 0; }
    bool is_mla() const { return kv_lora_rank > 0; }
    // The width of one attention head: head_dim when given, else hidden / heads rounded down, as
    // every loader derives it (Hugging Face's default for configs without head_dim); 0 without heads.
    int attention_head_dim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
    // Key/value heads: kv_heads when given, else heads (multi-head attention).
    int attention_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
};

class ModelLibrary {
public:
    const std::vector<ModelSpec>& models() const { return m_models; }
    // Case-insensitive lookup; nullptr when absent.
    const ModelSpec* find(std::string_view name) const;
    // The closest preset name, ranked by family and size before edit distance: "llama3-8b"
    // suggests "llama-3.1-8b", not the nearer "llama-2-7b". Empty when none is close.
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

// Reads a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2/3 and their MoE, DeepSeek-V2/V3,
// Gemma 1-3, Phi-3, GPT-2, BERT, T5 field names; a multimodal config's text_config) into a
// ModelSpec, with the quantization_config's weight format. The parameter count is computed from
// the architecture. Throws InputError with the file name on unreadable or unrecognised configs.
ModelSpec model_from_hf_config_text(std::string_view json_text, const std::string& file_name);
ModelSpec model_from_hf_config_file(const std::string& path);

// The weight format a quantization config implies (AWQ, GPTQ, FP8 as `fp8`, `fbgemm_fp8` or
// `compressed-tensors` — `fp8-block` with weight_block_size —, bitsandbytes, MXFP4 as gpt-oss's
// quant_method mxfp4, NVFP4 as ModelOpt's quant_algo NVFP4 or compressed-tensors 4-bit floats),
// as {weight format name, description}; empty names when the config is not one of these.
// `json_text` is a quantization_config object, or a whole quant_config.json /
// hf_quant_config.json (ModelOpt's {"quantization": {"quant_algo": ...}}).
struct CheckpointQuantization {
    std::string weights;  // parse_weight_format name
    std::string description;
};
CheckpointQuantization quantization_from_config_text(std::string_view json_text);

// Parameter counts implied by the transformer fields: embeddings, attention (GQA, or MLA with
// its low-rank projections), gated or plain FFN, routed and shared experts with their router,
// dense first layers; norms and biases ignored. `active` counts top_k routed experts. Zero
// when the fields are incomplete.
struct ParamCounts {
    double total = 0;
    double active = 0;
};
ParamCounts transformer_params(const ModelSpec& model);
// One layer's attention projections (parameters): Q, K, V and O for GQA/MQA; MLA's down- and
// up-projections of the query and the latent, and O. Zero without transformer fields.
double attention_params(const ModelSpec& model);
// The layers that hold routed experts: those after dense_layers, every moe_layer_step-th of
// them (Llama-4 places them at step−1, 2·step−1, …); 0 for a dense model.
int moe_layer_count(const ModelSpec& model);
double transformer_param_count(const ModelSpec& model);

// KV-cache bytes of one sequence holding `tokens` tokens at `element_bytes` per element: K and V
// per KV head and layer, or for MLA the latent and RoPE key once per layer; a sliding-window
// layer holds at most the window. Zero for non-transformers and encoders are the caller's call.
double kv_cache_bytes_per_sequence(const ModelSpec& model, double element_bytes, double tokens);

}  // namespace gpusel
