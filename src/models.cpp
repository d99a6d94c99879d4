#include "gpusel/models.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpusel/text.hpp"
#include "gpusel/units.hpp"
#include "gpusel/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_models_yaml();
}

namespace gpusel {

namespace {

constexpr std::pair<ModelFamily, std::string_view> family_names[] = {
    {ModelFamily::decoder, "decoder"},
    {ModelFamily::encoder, "encoder"},
    {ModelFamily::encoder_decoder, "encoder-decoder"},
    {ModelFamily::moe_decoder, "moe-decoder"},
    {ModelFamily::cnn, "cnn"},
    {ModelFamily::vit, "vit"},
    {ModelFamily::diffusion, "diffusion"},
    {ModelFamily::other, "other"}};

constexpr int max_dimension = 1 << 24;

}  // namespace

std::string_view to_string(ModelFamily family) {
    for (const auto& [value, name] : family_names) {
        if (value == family) {
            return name;
        }
    }
    return "?";
}

void read_model_fields(MapReader& reader, ModelSpec& model);

// Shared by the preset library and the workload's `model:` section: the architecture fields.
void read_model_fields(MapReader& reader, ModelSpec& model) {
    reader.choice("family", model.family, family_names);
    // 1e15 parameters: beyond any model; rejects unit slips such as 7T for 7B only when absurd.
    reader.number("params", model.params, UnitKind::count, 0, 1e15, true);
    reader.number("active_params", model.active_params, UnitKind::count, 0, 1e15, true);
    reader.integer("layers", model.layers, 1, 100000);
    reader.integer("hidden", model.hidden, 1, max_dimension);
    reader.integer("heads", model.heads, 1, 100000);
    reader.integer("kv_heads", model.kv_heads, 1, 100000);
    reader.integer("head_dim", model.head_dim, 1, 100000);
    reader.integer("ffn", model.ffn, 1, max_dimension);
    reader.boolean("ffn_gated", model.ffn_gated);
    reader.integer("vocab", model.vocab, 1, 100000000);
    reader.integer("experts", model.experts, 0, 100000);
    reader.integer("top_k", model.top_k, 0, 100000);
    reader.boolean("tied_embeddings", model.tied_embeddings);
    reader.integer("max_context", model.max_context, 1, 1 << 30);
    reader.number("activation_per_sample", model.activation_bytes_per_sample, UnitKind::bytes, 0, 1e13, true);
    reader.number("flops_per_sample", model.flops_per_sample, UnitKind::flops, 0, 1e18, true);
    reader.text("input", model.input);
}

// Fills derived fields (head_dim, kv_heads, active_params) and checks consistency.
void complete_model(ModelSpec& model, MapReader& reader);
void complete_model(ModelSpec& model, MapReader& reader) {
    if (model.heads > 0 && model.kv_heads == 0) {
        model.kv_heads = model.heads;
    }
    if (model.heads > 0 && model.head_dim == 0 && model.hidden > 0) {
        model.head_dim = model.hidden / model.heads;
    }
    if (model.heads > 0 && model.kv_heads > model.heads) {
        reader.error("kv_heads", fmt::format("kv_heads {} exceeds heads {}", model.kv_heads, model.heads));
    } else if (model.kv_heads > 0 && model.heads % model.kv_heads != 0) {
        reader.error("kv_heads", fmt::format("heads {} is not a multiple of kv_heads {}", model.heads, model.kv_heads));
    }
    if (model.top_k > model.experts) {
        reader.error("top_k", fmt::format("top_k {} exceeds experts {}", model.top_k, model.experts));
    }
    if (model.params == 0) {
        model.params = transformer_param_count(model);
    }
    if (model.active_params == 0) {
        model.active_params = model.params;
    }
    if (model.active_params > model.params) {
        reader.error("active_params", "active_params exceeds params");
    }
}

const ModelSpec* ModelLibrary::find(std::string_view name) const {
    const auto found = m_index.find(to_lower(name));
    return found == m_index.end() ? nullptr : &m_models[found->second];
}

std::string ModelLibrary::suggest(std::string_view name) const {
    std::vector<std::string> names;
    for (const ModelSpec& model : m_models) {
        names.push_back(model.name);
    }
    return closest_match(name, names);
}

void ModelLibrary::upsert(ModelSpec model) {
    const auto [position, inserted] = m_index.emplace(to_lower(model.name), m_models.size());
    if (inserted) {
        m_models.push_back(std::move(model));
    } else {
        m_models[position->second] = std::move(model);
    }
}

void merge_models_text(ModelLibrary& library, std::string_view text, const std::string& file_name) {
    Diagnostics diagnostics(file_name);
    const YamlNode root = parse_yaml_text(text, file_name, &diagnostics);
    MapReader top(root, "", diagnostics);
    top.require("format");
    top.require("models");
    int format = 0;
    if (top.integer("format", format, 1, 1000) && format != 1) {
        top.error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
    }
    ModelLibrary merged = library;
    if (const YamlNode* models = top.node("models")) {
        if (models->kind != YamlNode::Kind::sequence) {
            top.error("models", fmt::format("expected a list of models, got {}", kind_name(models->kind)));
        } else {
            for (std::size_t i = 0; i < models->items.size(); ++i) {
                MapReader reader(models->items[i], fmt::format("models[{}]", i), diagnostics);
                ModelSpec model;
                reader.require("name");
                reader.require("family");
                reader.require("source");
                reader.text("name", model.name);
                read_model_fields(reader, model);
                reader.text("source", model.source);
                reader.text("notes", model.notes);
                complete_model(model, reader);
                if (model.params == 0 && reader.has("family")) {
                    reader.error("params", "params is required when the architecture fields do not give it");
                }
                reader.finish();
                if (!model.name.empty()) {
                    merged.upsert(std::move(model));
                }
            }
        }
    }
    top.finish();
    diagnostics.throw_if_any();
    library = std::move(merged);
}

void merge_models_file(ModelLibrary& library, const std::string& path) {
    merge_models_text(library, read_input_file(path), path);
}

ModelLibrary builtin_models() {
    ModelLibrary library;
    merge_models_text(library, embedded::builtin_models_yaml(), "data/models.yaml");
    return library;
}

double transformer_param_count(const ModelSpec& model) {
    if (!model.is_transformer() || model.ffn == 0) {
        return 0;
    }
    const double hidden = model.hidden;
    const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
    const double head_dim = model.head_dim > 0 ? model.head_dim : hidden / model.heads;
    // Attention: Q and O are heads×head_dim wide, K and V kv_heads×head_dim (GQA/MQA).
    const double attention = hidden * head_dim * (2.0 * model.heads + 2.0 * kv_heads);
    const double ffn_matrices = model.ffn_gated ? 3.0 : 2.0;
    const double expert_count = model.experts > 1 ? model.experts : 1;
    const double ffn = ffn_matrices * hidden * model.ffn * expert_count + (model.experts > 1 ? hidden * model.experts : 0);
    const double embeddings = static_cast<double>(model.vocab) * hidden * (model.tied_embeddings ? 1.0 : 2.0);
    return model.layers * (attention + ffn) + embeddings;
}

// ---------------------------------------------------------------------------------------
// Hugging Face config.json

namespace {

using Json = nlohmann::json;

std::optional<double> json_number(const Json& config, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        const auto found = config.find(key);
        if (found != config.end() && found->is_number()) {
            const double value = found->get<double>();
            if (std::isfinite(value) && value >= 0) {
                return value;
            }
        }
    }
    return std::nullopt;
}

int json_int(const Json& config, std::initializer_list<const char*> keys, int fallback = 0) {
    const std::optional<double> value = json_number(config, keys);
    if (!value || *value > 1e9) {
        return fallback;
    }
    return static_cast<int>(*value);
}

std::string json_text(const Json& config, const char* key) {
    const auto found = config.find(key);
    return found != config.end() && found->is_string() ? found->get<std::string>() : std::string();
}

bool json_bool(const Json& config, const char* key, bool fallback) {
    const auto found = config.find(key);
    return found != config.end() && found->is_boolean() ? found->get<bool>() : fallback;
}

}  // namespace

ModelSpec model_from_hf_config_text(std::string_view json_text_value, const std::string& file_name) {
    Json config;
    try {
        config = Json::parse(json_text_value);
    } catch (const Json::parse_error& error) {
        throw InputError(Diagnostic{file_name, {}, {}, fmt::format("not valid JSON (byte {})", error.byte)});
    } catch (const Json::out_of_range&) {
        // nlohmann reports a number beyond double's range (1e400) as out_of_range.406, not as a
        // parse_error (found by fuzz/regressions/hf_config/number-overflow.json).
        throw InputError(Diagnostic{file_name, {}, {}, "not valid JSON: a number is out of range"});
    }
    if (!config.is_object()) {
        throw InputError(Diagnostic{file_name, {}, {}, "expected a JSON object (a Hugging Face config.json)"});
    }
    ModelSpec model;
    const std::string type = json_text(config, "model_type");
    model.name = type.empty() ? file_name : type;
    model.source = file_name;
    if (type == "gpt2" || type == "gptj" || type == "gpt_neox" || config.contains("n_embd")) {
        model.family = ModelFamily::decoder;
        model.layers = json_int(config, {"n_layer", "num_hidden_layers"});
        model.hidden = json_int(config, {"n_embd", "hidden_size"});
        model.heads = json_int(config, {"n_head", "num_attention_heads"});
        // GPT-2's default inner size is 4 × n_embd; in 64 bits, since n_embd may be up to 1e9
        // (4e9 overflowed int: fuzz/regressions/hf_config/gpt2-default-ffn-overflow.json).
        const long long default_ffn = 4LL * model.hidden;
        model.ffn = json_int(config, {"n_inner", "intermediate_size"},
                             default_ffn <= std::numeric_limits<int>::max() ? static_cast<int>(default_ffn) : 0);
        model.vocab = json_int(config, {"vocab_size"});
        model.max_context = json_int(config, {"n_positions", "n_ctx", "max_position_embeddings"});
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", type == "gpt2");
        model.ffn_gated = false;
    } else if (type == "t5" || type == "mt5" || config.contains("d_model")) {
        model.family = ModelFamily::encoder_decoder;
        const int encoder_layers = json_int(config, {"num_layers"});
        model.layers = encoder_layers + json_int(config, {"num_decoder_layers"}, encoder_layers);
        model.hidden = json_int(config, {"d_model"});
        model.heads = json_int(config, {"num_heads"});
        model.head_dim = json_int(config, {"d_kv"});
        model.ffn = json_int(config, {"d_ff"});
        model.vocab = json_int(config, {"vocab_size"});
        model.ffn_gated = json_text(config, "feed_forward_proj").rfind("gated", 0) == 0;
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", true);
    } else {
        // Llama, Mistral, Mixtral, Qwen2, Gemma, BERT and most others use these names.
        const bool encoder = type == "bert" || type == "roberta" || type == "distilbert" || type == "deberta";
        model.layers = json_int(config, {"num_hidden_layers", "n_layers"});
        model.hidden = json_int(config, {"hidden_size", "dim"});
        model.heads = json_int(config, {"num_attention_heads", "n_heads"});
        model.kv_heads = json_int(config, {"num_key_value_heads"}, model.heads);
        model.head_dim = json_int(config, {"head_dim"});
        model.ffn = json_int(config, {"intermediate_size", "ffn_dim"});
        model.vocab = json_int(config, {"vocab_size"});
        model.max_context = json_int(config, {"max_position_embeddings"});
        model.experts = json_int(config, {"num_local_experts", "num_experts"});
        model.top_k = json_int(config, {"num_experts_per_tok"});
        model.ffn_gated = !encoder;
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", encoder || type == "gemma" || type == "gemma2");
        model.family = encoder ? ModelFamily::encoder
                       : model.experts > 1 ? ModelFamily::moe_decoder
                                           : ModelFamily::decoder;
        if (model.experts > 1 && model.ffn == 0) {
            model.ffn = json_int(config, {"moe_intermediate_size"});
        }
    }
    if (model.kv_heads == 0) {
        model.kv_heads = model.heads;
    }
    if (model.head_dim == 0 && model.heads > 0) {
        model.head_dim = model.hidden / model.heads;
    }
    if (!model.is_transformer() || model.ffn == 0 || model.vocab == 0) {
        throw InputError(Diagnostic{file_name, {}, {},
                                    "not a recognised transformer config: need layers, hidden size, attention heads, "
                                    "FFN size and vocabulary (Llama, Mistral, Mixtral, Qwen2, Gemma, GPT-2, BERT, T5 names)"});
    }
    if (model.heads % model.kv_heads != 0) {
        throw InputError(Diagnostic{file_name, {}, {}, "num_attention_heads is not a multiple of num_key_value_heads"});
    }
    model.params = transformer_param_count(model);
    if (model.experts > 1) {
        ModelSpec active = model;
        active.experts = 1;
        // The experts a token passes through, as one wide FFN; checked in 64 bits
        // (fuzz/regressions/hf_config/moe-active-ffn-overflow.json).
        const long long active_ffn = static_cast<long long>(model.ffn) * std::max(model.top_k, 1);
        if (active_ffn > std::numeric_limits<int>::max()) {
            throw InputError(Diagnostic{file_name, {}, {},
                                        "intermediate_size × num_experts_per_tok is beyond any real model"});
        }
        active.ffn = static_cast<int>(active_ffn);
        model.active_params = transformer_param_count(active);
    } else {
        model.active_params = model.params;
    }
    return model;
}

ModelSpec model_from_hf_config_file(const std::string& path) {
    return model_from_hf_config_text(read_input_file(path, 1u << 20), path);
}

}  // namespace gpusel
