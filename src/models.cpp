#include "gpusel/models.hpp"

#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

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

// Bounds of the integer architecture fields, the same whether a models or workload file or a
// Hugging Face config.json gives them: far beyond any published model, so that what they
// reject is a unit slip or a corrupt file.
constexpr int max_count = 100000;  // layers, heads, kv_heads, head_dim, experts, top_k
constexpr int max_dimension = 1 << 24;  // hidden, ffn
constexpr int max_vocab = 100000000;
constexpr int max_context_tokens = 1 << 30;

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
    reader.integer("layers", model.layers, 1, max_count);
    reader.integer("hidden", model.hidden, 1, max_dimension);
    reader.integer("heads", model.heads, 1, max_count);
    reader.integer("kv_heads", model.kv_heads, 1, max_count);
    reader.integer("head_dim", model.head_dim, 1, max_count);
    reader.integer("ffn", model.ffn, 1, max_dimension);
    reader.boolean("ffn_gated", model.ffn_gated);
    reader.integer("vocab", model.vocab, 1, max_vocab);
    reader.integer("experts", model.experts, 0, max_count);
    reader.integer("top_k", model.top_k, 0, max_count);
    reader.boolean("tied_embeddings", model.tied_embeddings);
    reader.integer("max_context", model.max_context, 1, max_context_tokens);
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
            // Within one file a second entry of a name would silently replace the first (a
            // copied block left unedited); across files that replacement is the point of merging.
            std::unordered_map<std::string, std::pair<int, std::string>> first_entries;  // lower-case name
            for (std::size_t i = 0; i < models->items.size(); ++i) {
                MapReader reader(models->items[i], fmt::format("models[{}]", i), diagnostics);
                ModelSpec model;
                reader.require("name");
                reader.require("family");
                reader.require("source");
                reader.text("name", model.name);
                if (!model.name.empty()) {
                    const auto [first, inserted] = first_entries.emplace(
                        to_lower(model.name), std::make_pair(reader.position_of("name").line, model.name));
                    if (!inserted) {
                        const auto& [first_line, first_name] = first->second;
                        reader.error("name", first_name == model.name
                                                 ? fmt::format("duplicate model name '{}' (first at line {})",
                                                               model.name, first_line)
                                                 : fmt::format("duplicate model name '{}' (first at line {} as '{}'; "
                                                               "names are compared ignoring case)",
                                                               model.name, first_line, first_name));
                    }
                }
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

// Where the value of the top-level key `key` starts in `text`, a JSON object that has already
// parsed: 1-based line and column in characters; the last occurrence, as nlohmann keeps the last
// of duplicate keys. Line 0 when the key is not written plainly (with escapes in its name).
Position top_level_value_position(std::string_view text, std::string_view key) {
    Position found;
    Position here{1, 1};
    int depth = 0;
    std::size_t i = 0;
    // Bounds-checked: the scan also walks text the JSON parser never read (it stops at a NUL),
    // which may end inside a string or right after a backslash.
    const auto advance = [&] {
        if (i >= text.size()) {
            return;
        }
        if (text[i] == '\n') {
            ++here.line;
            here.column = 1;
        } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
            ++here.column;  // a UTF-8 continuation byte is part of the character before
        }
        ++i;
    };
    const auto skip_space = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
            advance();
        }
    };
    while (i < text.size()) {
        const char c = text[i];
        if (c == '{' || c == '[') {
            ++depth;
            advance();
        } else if (c == '}' || c == ']') {
            --depth;
            advance();
        } else if (c == '"') {
            const std::size_t start = i + 1;
            advance();
            while (i < text.size() && text[i] != '"') {
                if (text[i] == '\\') {
                    advance();
                }
                advance();
            }
            const std::string_view name = text.substr(start, i - start);
            advance();
            skip_space();
            if (depth == 1 && i < text.size() && text[i] == ':') {
                advance();
                skip_space();
                if (name == key) {
                    found = here;
                }
            }
        } else {
            advance();
        }
    }
    return found;
}

// The integer architecture fields of a config.json. Each field has a few names across model
// families; the first present as a number is used. A value beyond the bound of the same field
// in a models file is an error at its position, not a field left out.
class HfConfigReader {
public:
    HfConfigReader(const Json& config, std::string_view text, Diagnostics& diagnostics)
        : m_config(config), m_text(text), m_diagnostics(diagnostics) {}

    int integer(std::initializer_list<const char*> keys, int max, int fallback = 0) {
        for (const char* key : keys) {
            const auto found = m_config.find(key);
            if (found == m_config.end() || !found->is_number()) {
                continue;
            }
            const double value = found->get<double>();
            if (!std::isfinite(value) || value < 0) {
                continue;
            }
            if (value > max) {
                // The field is named in the message, not only as the path: a workload quotes only
                // the message of a config's error.
                m_diagnostics.error(top_level_value_position(m_text, key), {},
                                    fmt::format("{} is {:.15g}, beyond any real model (at most {})", key, value, max));
                return 0;
            }
            return static_cast<int>(value);
        }
        return fallback;
    }

private:
    const Json& m_config;
    std::string_view m_text;
    Diagnostics& m_diagnostics;
};

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
    Diagnostics diagnostics(file_name);
    HfConfigReader fields(config, json_text_value, diagnostics);
    ModelSpec model;
    const std::string type = json_text(config, "model_type");
    model.name = type.empty() ? file_name : type;
    model.source = file_name;
    if (type == "gpt2" || type == "gptj" || type == "gpt_neox" || config.contains("n_embd")) {
        model.family = ModelFamily::decoder;
        model.layers = fields.integer({"n_layer", "num_hidden_layers"}, max_count);
        model.hidden = fields.integer({"n_embd", "hidden_size"}, max_dimension);
        model.heads = fields.integer({"n_head", "num_attention_heads"}, max_count);
        // GPT-2's default inner size is 4 × n_embd; n_embd is at most 2^24 here, so this fits an
        // int (it once overflowed: fuzz/regressions/hf_config/gpt2-default-ffn-overflow.json).
        model.ffn = fields.integer({"n_inner", "intermediate_size"}, max_dimension, 4 * model.hidden);
        model.vocab = fields.integer({"vocab_size"}, max_vocab);
        model.max_context = fields.integer({"n_positions", "n_ctx", "max_position_embeddings"}, max_context_tokens);
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", type == "gpt2");
        model.ffn_gated = false;
    } else if (type == "t5" || type == "mt5" || config.contains("d_model")) {
        model.family = ModelFamily::encoder_decoder;
        const int encoder_layers = fields.integer({"num_layers"}, max_count);
        model.layers = encoder_layers + fields.integer({"num_decoder_layers"}, max_count, encoder_layers);
        model.hidden = fields.integer({"d_model"}, max_dimension);
        model.heads = fields.integer({"num_heads"}, max_count);
        model.head_dim = fields.integer({"d_kv"}, max_count);
        model.ffn = fields.integer({"d_ff"}, max_dimension);
        model.vocab = fields.integer({"vocab_size"}, max_vocab);
        model.ffn_gated = json_text(config, "feed_forward_proj").rfind("gated", 0) == 0;
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", true);
    } else {
        // Llama, Mistral, Mixtral, Qwen2, Gemma, BERT and most others use these names.
        const bool encoder = type == "bert" || type == "roberta" || type == "distilbert" || type == "deberta";
        model.layers = fields.integer({"num_hidden_layers", "n_layers"}, max_count);
        model.hidden = fields.integer({"hidden_size", "dim"}, max_dimension);
        model.heads = fields.integer({"num_attention_heads", "n_heads"}, max_count);
        model.kv_heads = fields.integer({"num_key_value_heads"}, max_count, model.heads);
        model.head_dim = fields.integer({"head_dim"}, max_count);
        model.ffn = fields.integer({"intermediate_size", "ffn_dim"}, max_dimension);
        model.vocab = fields.integer({"vocab_size"}, max_vocab);
        model.max_context = fields.integer({"max_position_embeddings"}, max_context_tokens);
        model.experts = fields.integer({"num_local_experts", "num_experts"}, max_count);
        model.top_k = fields.integer({"num_experts_per_tok"}, max_count);
        model.ffn_gated = !encoder;
        model.tied_embeddings = json_bool(config, "tie_word_embeddings", encoder || type == "gemma" || type == "gemma2");
        model.family = encoder ? ModelFamily::encoder
                       : model.experts > 1 ? ModelFamily::moe_decoder
                                           : ModelFamily::decoder;
        if (model.experts > 1 && model.ffn == 0) {
            model.ffn = fields.integer({"moe_intermediate_size"}, max_dimension);
        }
    }
    diagnostics.throw_if_any();
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
