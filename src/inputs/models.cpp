#include "inputs/models.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/units.hpp"
#include "catalog/precision.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_models_yaml();
}

namespace gpusel {

namespace {

constexpr std::pair<ModelFamily, std::string_view> family_names[] = {{ModelFamily::decoder, "decoder"},
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
constexpr int max_count = 100000;       // layers, heads, kv_heads, head_dim, experts, top_k
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
    reader.integer("kv_lora_rank", model.kv_lora_rank, 1, max_dimension);
    reader.integer("q_lora_rank", model.q_lora_rank, 1, max_dimension);
    reader.integer("qk_rope_head_dim", model.qk_rope_head_dim, 1, max_count);
    reader.integer("qk_nope_head_dim", model.qk_nope_head_dim, 1, max_count);
    reader.integer("v_head_dim", model.v_head_dim, 1, max_count);
    reader.integer("shared_ffn", model.shared_ffn, 1, max_dimension);
    reader.integer("dense_layers", model.dense_layers, 0, max_count);
    reader.integer("dense_ffn", model.dense_ffn, 1, max_dimension);
    reader.integer("moe_layer_step", model.moe_layer_step, 1, max_count);
    reader.integer("sliding_window", model.sliding_window, 1, max_context_tokens);
    reader.integer("sliding_layers", model.sliding_layers, 0, max_count);
    reader.boolean("attention_chunked", model.attention_chunked);
    reader.boolean("attention_sinks", model.attention_sinks);
    reader.number("activation_per_sample", model.activation_bytes_per_sample, UnitKind::bytes, 0, 1e13, true);
    reader.number("flops_per_sample", model.flops_per_sample, UnitKind::flops, 0, 1e18, true);
    reader.number("decoder_flops_per_sample", model.decoder_flops_per_sample, UnitKind::flops, 0, 1e18, true);
    reader.text("input", model.input);
    // The weight format the published checkpoint ships in (DeepSeek-V3/R1 block FP8, gpt-oss
    // MXFP4): a workload without `weights:` serves that, as one resolved from the config does.
    if (std::string checkpoint; reader.text("checkpoint", checkpoint)) {
        if (parse_weight_format(checkpoint)) {
            model.checkpoint_weights = checkpoint;
            model.quantization = "the published checkpoint (preset)";
        } else {
            reader.error("checkpoint", fmt::format("'{}' is not a weight format ({})", checkpoint,
                                                   "fp8, fp8-block, nvfp4, mxfp4, int4, awq, gptq, ..."));
        }
    }
}

// Fills derived fields (head_dim, kv_heads, active_params) and checks consistency.
void complete_model(ModelSpec& model, MapReader& reader);
void complete_model(ModelSpec& model, MapReader& reader) {
    if (model.heads > 0 && model.kv_heads == 0) {
        model.kv_heads = model.heads;
    }
    if (model.is_mla() && model.head_dim == 0 && model.qk_nope_head_dim > 0) {
        model.head_dim = model.qk_nope_head_dim + model.qk_rope_head_dim;  // as the config importer derives it
    }
    if (model.heads > 0 && model.hidden > 0) {
        model.head_dim = model.attention_head_dim();
    }
    if (model.heads > 0 && model.kv_heads > model.heads) {
        reader.error("kv_heads", fmt::format("kv_heads {} exceeds heads {}", model.kv_heads, model.heads));
    } else if (model.kv_heads > 0 && model.heads % model.kv_heads != 0) {
        reader.error("kv_heads", fmt::format("heads {} is not a multiple of kv_heads {}", model.heads, model.kv_heads));
    }
    if (model.top_k > model.experts) {
        reader.error("top_k", fmt::format("top_k {} exceeds experts {}", model.top_k, model.experts));
    }
    if (model.dense_layers > model.layers && model.layers > 0) {
        reader.error("dense_layers",
                     fmt::format("dense_layers {} exceeds layers {}", model.dense_layers, model.layers));
    }
    if (model.sliding_layers > model.layers && model.layers > 0) {
        reader.error("sliding_layers",
                     fmt::format("sliding_layers {} exceeds layers {}", model.sliding_layers, model.layers));
    }
    if (model.attention_chunked && model.sliding_window == 0) {
        reader.error("attention_chunked", "attention_chunked needs sliding_window, the chunk length in tokens");
    }
    if (model.params == 0) {
        const ParamCounts counts = transformer_params(model);
        model.params = counts.total;
        if (model.active_params == 0) {
            model.active_params = counts.active;
        }
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

namespace {

// A model name as people vary it: lower case, letters and digits only ("Llama-3.1-8B" and
// "llama3.1_8b" are both "llama318b"), its family (the leading letters, "llama") and its size
// (the last number followed by b or m, "8b"; "8x7b" for Mixtral).
struct NameParts {
    std::string compact;
    std::string family;
    std::string version;  // the digits between family and size: "31" in llama-3.1-8b
    std::string size;
};

NameParts name_parts(std::string_view name) {
    NameParts parts;
    const std::string lower = to_lower(name);
    for (const char c : lower) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            parts.compact += c;
        }
    }
    for (const char c : parts.compact) {
        if (c < 'a' || c > 'z') {
            break;
        }
        parts.family += c;
    }
    // Scan the separated words for the last one shaped like a size: digits (x digits) then b/m.
    std::size_t start = 0;
    while (start <= lower.size()) {
        std::size_t end = lower.find_first_of("-_ ./:", start);
        if (end == std::string::npos) {
            end = lower.size();
        }
        const std::string word = lower.substr(start, end - start);
        if (word.size() >= 2 && (word.back() == 'b' || word.back() == 'm') && word[0] >= '0' && word[0] <= '9' &&
            word.find_first_not_of("0123456789x.", 0) == word.size() - 1) {
            parts.size = word;
        }
        start = end + 1;
    }
    std::string compact_size;
    for (const char c : parts.size) {
        compact_size += c == '.' ? "" : std::string(1, c);
    }
    std::string rest = parts.compact.substr(parts.family.size());
    if (!compact_size.empty() && rest.size() >= compact_size.size() &&
        rest.compare(rest.size() - compact_size.size(), compact_size.size(), compact_size) == 0) {
        rest.resize(rest.size() - compact_size.size());
    }
    for (const char c : rest) {
        if (c < '0' || c > '9') {
            break;
        }
        parts.version += c;
    }
    return parts;
}

}  // namespace

std::string ModelLibrary::suggest(std::string_view name) const {
    // Edit distance alone ranks "llama-2-7b" nearest to "llama3-8b" (same length, few edits);
    // people mean the same family and size first, so those weigh as edits do on compact names.
    const NameParts wanted = name_parts(name);
    if (wanted.compact.empty() || wanted.compact.size() > 200) {
        return {};
    }
    const std::size_t limit = std::max<std::size_t>(3, wanted.compact.size() / 2);
    std::string best;
    std::size_t best_score = limit + 1;
    for (const ModelSpec& model : m_models) {
        const NameParts candidate = name_parts(model.name);
        std::size_t score = edit_distance(wanted.compact, candidate.compact);
        if (!wanted.family.empty() && candidate.family != wanted.family) {
            score += 3;
        }
        // A version given as "3" matches "3.1" and "3.2"; "2" does not.
        const std::string& shorter =
            wanted.version.size() < candidate.version.size() ? wanted.version : candidate.version;
        const std::string& longer = &shorter == &wanted.version ? candidate.version : wanted.version;
        if (!shorter.empty() && longer.rfind(shorter, 0) != 0) {
            score += 2;
        }
        if (!wanted.size.empty() && candidate.size != wanted.size) {
            score += 1;
        }
        if (score < best_score) {
            best_score = score;
            best = model.name;
        }
    }
    if (!best.empty()) {
        return best;
    }
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
    top.format_version();
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

// One layer's attention parameters. MLA (DeepSeek-V2 §2.1; modeling_deepseek.py): q_a h×q_lora,
// q_b q_lora×heads·(nope+rope) (or one h×heads·(nope+rope) without q_lora), kv_a h×(kv_lora+rope),
// kv_b kv_lora×heads·(nope+v), o heads·v×h. Otherwise Q and O are heads×head_dim wide, K and V
// kv_heads×head_dim (GQA/MQA).
double attention_params(const ModelSpec& model) {
    const double hidden = model.hidden;
    const double heads = model.heads;
    if (model.is_mla()) {
        const double nope = model.qk_nope_head_dim > 0 ? model.qk_nope_head_dim : model.head_dim;
        const double rope = model.qk_rope_head_dim;
        const double v = model.v_head_dim > 0 ? model.v_head_dim : nope;
        const double q = model.q_lora_rank > 0 ? hidden * model.q_lora_rank + model.q_lora_rank * heads * (nope + rope)
                                               : hidden * heads * (nope + rope);
        const double kv = hidden * (model.kv_lora_rank + rope) + model.kv_lora_rank * heads * (nope + v);
        return q + kv + heads * v * hidden;
    }
    const double kv_heads = model.attention_kv_heads();
    const double head_dim = model.attention_head_dim();
    return hidden * head_dim * (2.0 * heads + 2.0 * kv_heads);
}

int moe_layer_count(const ModelSpec& model) {
    if (!model.is_moe()) {
        return 0;
    }
    const int after_dense = model.layers - std::min(model.dense_layers, model.layers);
    return model.moe_layer_step > 1 ? after_dense / model.moe_layer_step : after_dense;
}

ParamCounts transformer_params(const ModelSpec& model) {
    if (!model.is_transformer() || model.ffn == 0) {
        return {};
    }
    const double hidden = model.hidden;
    const double matrices = model.ffn_gated ? 3.0 : 2.0;
    // gpt-oss sinks: one learned logit per head and layer (modeling_gpt_oss.py self_attn.sinks).
    const double sinks = model.attention_sinks ? static_cast<double>(model.heads) : 0.0;
    const double attention = (attention_params(model) + sinks) * model.layers;
    const double embeddings = static_cast<double>(model.vocab) * hidden * (model.tied_embeddings ? 1.0 : 2.0);
    if (model.experts <= 1) {
        const double total = model.layers * matrices * hidden * model.ffn + attention + embeddings;
        return {total, total};
    }
    // MoE layers: routed experts of width ffn, the shared experts, the router (h × experts).
    // The first dense_layers are plain FFNs of dense_ffn (DeepSeek first_k_dense_replace); with
    // moe_layer_step n only every n-th layer after them has experts, the rest are dense too
    // (Llama-4 Maverick: 24 MoE and 24 dense layers of intermediate_size_mlp).
    const double moe_layers = moe_layer_count(model);
    const double dense_layers = model.layers - moe_layers;
    const double dense = dense_layers * matrices * hidden * (model.dense_ffn > 0 ? model.dense_ffn : model.ffn);
    const double expert = matrices * hidden * model.ffn;
    const double always = matrices * hidden * model.shared_ffn + hidden * model.experts;
    const double top_k = model.top_k > 0 ? std::min(model.top_k, model.experts) : 1;
    const double fixed = attention + embeddings + dense;
    return {fixed + moe_layers * (model.experts * expert + always), fixed + moe_layers * (top_k * expert + always)};
}

double transformer_param_count(const ModelSpec& model) {
    return transformer_params(model).total;
}

double kv_cache_bytes_per_sequence(const ModelSpec& model, double element_bytes, double tokens) {
    if (!model.is_transformer()) {
        return 0;
    }
    // MLA caches the compressed latent and the decoupled RoPE key, once for all heads
    // (DeepSeek-V2 Table 1: (d_c + d_h^R) × l elements per token; vLLM and SGLang cache this form).
    // Otherwise K and V for each KV head.
    double per_layer_token = 0;
    if (model.is_mla()) {
        per_layer_token = static_cast<double>(model.kv_lora_rank) + model.qk_rope_head_dim;
    } else {
        per_layer_token = 2.0 * model.attention_kv_heads() * model.attention_head_dim();
    }
    // Sliding-window layers keep only the last `window` tokens (Mistral's rolling buffer, Gemma's
    // local layers); the others, all of them.
    double layer_tokens = model.layers * tokens;
    if (model.sliding_window > 0) {
        const int sliding = model.sliding_layers > 0 ? std::min(model.sliding_layers, model.layers) : model.layers;
        layer_tokens = (model.layers - sliding) * tokens + sliding * std::min<double>(tokens, model.sliding_window);
    }
    return per_layer_token * layer_tokens * element_bytes;
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

namespace {

// Llama-4 chunked attention (modeling_llama4.py): the RoPE layers attend within chunks of
// attention_chunk_size tokens, the NoPE layers to the whole context. no_rope_layers lists 1 for
// a RoPE layer; empty, it defaults to every no_rope_layer_interval-th (4) layer being NoPE
// (configuration_llama4.py), i.e. 36 chunked layers of 48. Newer configs list layer_types.
void read_chunked_attention(const Json& config, HfConfigReader& fields, ModelSpec& model) {
    model.sliding_window = fields.integer({"attention_chunk_size"}, max_context_tokens);
    if (model.sliding_window == 0) {
        return;
    }
    model.attention_chunked = true;
    int chunked = -1;
    const auto layer_types = config.find("layer_types");
    const auto no_rope = config.find("no_rope_layers");
    if (layer_types != config.end() && layer_types->is_array() && !layer_types->empty()) {
        chunked = 0;
        for (const Json& entry : *layer_types) {
            chunked += entry.is_string() && entry.get<std::string>() == "chunked_attention" ? 1 : 0;
        }
    } else if (no_rope != config.end() && no_rope->is_array() && !no_rope->empty()) {
        chunked = 0;
        for (const Json& entry : *no_rope) {
            chunked += entry.is_number() && entry.get<double>() != 0 ? 1 : 0;
        }
    }
    if (chunked < 0) {
        const int interval = std::max(fields.integer({"no_rope_layer_interval"}, max_count, 4), 1);
        chunked = model.layers - model.layers / interval;
    }
    model.sliding_layers = std::min(chunked, model.layers);
    if (model.sliding_layers == 0) {
        model.sliding_window = 0;
        model.attention_chunked = false;
    }
}

// Sliding-window layers of a decoder config. Mistral, Mixtral and Phi-3 slide on every layer
// when `sliding_window` is set; Qwen2/Qwen3 only with `use_sliding_window`; Gemma-2 on every
// other layer (modeling_gemma2.py: layer_idx % 2 == 0); Gemma-3 on all but each
// sliding_window_pattern-th (default 6, configuration_gemma3.py); newer configs list layer_types.
void read_sliding_window(const Json& config, const std::string& type, HfConfigReader& fields, ModelSpec& model) {
    if (!json_bool(config, "use_sliding_window", true)) {
        return;
    }
    if (type == "llama4_text" || type == "llama4") {
        read_chunked_attention(config, fields, model);
        return;
    }
    model.sliding_window = fields.integer({"sliding_window"}, max_context_tokens);
    if (model.sliding_window == 0) {
        return;
    }
    const auto layer_types = config.find("layer_types");
    if (layer_types != config.end() && layer_types->is_array()) {
        int sliding = 0;
        for (const Json& entry : *layer_types) {
            sliding += entry.is_string() && entry.get<std::string>() == "sliding_attention" ? 1 : 0;
        }
        model.sliding_layers = std::min(sliding, model.layers);
        if (sliding == 0) {
            model.sliding_window = 0;
        }
    } else if (type == "gemma2") {
        model.sliding_layers = (model.layers + 1) / 2;
    } else if (type == "gemma3" || type == "gemma3_text") {
        const int pattern = std::max(fields.integer({"sliding_window_pattern"}, max_count, 6), 1);
        model.sliding_layers = model.layers - model.layers / pattern;
    }
    if (model.max_context > 0 && model.sliding_window >= model.max_context) {
        model.sliding_window = 0;  // a window as long as the context limits nothing
        model.sliding_layers = 0;
    }
}

// Mixture-of-experts fields: routed experts (num_local_experts in Mixtral, num_experts in Qwen,
// n_routed_experts in DeepSeek), their width (moe_intermediate_size when the config also has
// a dense intermediate_size), shared experts and DeepSeek's first dense layers.
void read_experts(const Json& config, HfConfigReader& fields, ModelSpec& model) {
    model.experts = fields.integer({"num_local_experts", "num_experts", "n_routed_experts"}, max_count);
    model.top_k = fields.integer({"num_experts_per_tok", "moe_topk"}, max_count);
    if (model.experts <= 1) {
        return;
    }
    const int moe_ffn = fields.integer({"moe_intermediate_size"}, max_dimension);
    if (moe_ffn > 0) {
        model.dense_ffn = model.ffn;
        model.ffn = moe_ffn;
    }
    const long long shared = static_cast<long long>(fields.integer({"n_shared_experts"}, max_count)) * model.ffn;
    model.shared_ffn = shared > 0 ? static_cast<int>(std::min<long long>(shared, max_dimension))
                                  : fields.integer({"shared_expert_intermediate_size"}, max_dimension);
    model.dense_layers = std::min(fields.integer({"first_k_dense_replace"}, max_count), model.layers);
    if (json_text(config, "model_type") == "llama4_text" || json_text(config, "model_type") == "llama4") {
        // Llama-4 (modeling_llama4.py Llama4TextMoe): each MoE layer has one shared expert of
        // intermediate_size beside the routed ones; the layers between MoE layers are dense MLPs
        // of intermediate_size_mlp (interleave_moe_layer_step 2 on Maverick, 1 on Scout).
        model.shared_ffn = model.ffn;
        const int step = fields.integer({"interleave_moe_layer_step"}, max_count, 1);
        if (step > 1) {
            model.moe_layer_step = step;
            model.dense_ffn = fields.integer({"intermediate_size_mlp"}, max_dimension);
        }
    }
    const auto mlp_only = config.find("mlp_only_layers");  // Qwen MoE: layers with a dense MLP
    if (mlp_only != config.end() && mlp_only->is_array() && !mlp_only->empty() && model.dense_layers == 0) {
        model.dense_layers = std::min(static_cast<int>(mlp_only->size()), model.layers);
    }
}

// Llama, Mistral, Mixtral, Qwen2/3 (MoE), DeepSeek-V2/V3, Gemma, Phi-3, BERT and most others.
void read_decoder_config(const Json& config, HfConfigReader& fields, ModelSpec& model) {
    const std::string type = json_text(config, "model_type");
    const bool encoder = type == "bert" || type == "roberta" || type == "distilbert" || type == "deberta";
    const bool gemma3 = type == "gemma3" || type == "gemma3_text";
    model.layers = fields.integer({"num_hidden_layers", "n_layers"}, max_count);
    model.hidden = fields.integer({"hidden_size", "dim"}, max_dimension);
    model.heads = fields.integer({"num_attention_heads", "n_heads"}, max_count);
    model.kv_heads = fields.integer({"num_key_value_heads"}, max_count, model.heads);
    model.head_dim = fields.integer({"head_dim"}, max_count);
    model.ffn = fields.integer({"intermediate_size", "ffn_dim"}, max_dimension);
    // Gemma-3's published text_config leaves vocabulary and context to the class defaults
    // (configuration_gemma3.py: 262,208 and 131,072).
    model.vocab = fields.integer({"vocab_size"}, max_vocab, gemma3 ? 262208 : 0);
    model.max_context = fields.integer({"max_position_embeddings"}, max_context_tokens, gemma3 ? 131072 : 0);
    model.kv_lora_rank = fields.integer({"kv_lora_rank"}, max_dimension);
    if (model.is_mla()) {
        model.q_lora_rank = fields.integer({"q_lora_rank"}, max_dimension);
        model.qk_rope_head_dim = fields.integer({"qk_rope_head_dim"}, max_count);
        model.qk_nope_head_dim = fields.integer({"qk_nope_head_dim"}, max_count);
        model.v_head_dim = fields.integer({"v_head_dim"}, max_count);
        model.head_dim = model.qk_nope_head_dim + model.qk_rope_head_dim;
    }
    read_experts(config, fields, model);
    read_sliding_window(config, type, fields, model);
    model.attention_sinks = type == "gpt_oss";  // modeling_gpt_oss.py: self_attn.sinks on every layer
    model.ffn_gated = !encoder;
    model.tied_embeddings =
        json_bool(config, "tie_word_embeddings", encoder || type == "gemma" || type == "gemma2" || gemma3);
    model.family = encoder ? ModelFamily::encoder : model.experts > 1 ? ModelFamily::moe_decoder : ModelFamily::decoder;
}

// GPT-2, GPT-J, GPT-NeoX names.
void read_gpt2_config(const Json& config, HfConfigReader& fields, ModelSpec& model) {
    const std::string type = json_text(config, "model_type");
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
}

// T5 and mT5 names.
void read_t5_config(const Json& config, HfConfigReader& fields, ModelSpec& model) {
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
}

std::string rope_scaling_note(const Json& config) {
    const auto rope = config.find("rope_scaling");
    if (rope == config.end() || !rope->is_object()) {
        return {};
    }
    std::string kind = json_text(*rope, "rope_type");
    if (kind.empty()) {
        kind = json_text(*rope, "type");
    }
    const auto original = rope->find("original_max_position_embeddings");
    return fmt::format("rope scaling {}{}; max context is max_position_embeddings", kind.empty() ? "?" : kind,
                       original != rope->end() && original->is_number_integer()
                           ? fmt::format(" from {} trained positions", original->get<long long>())
                           : "");
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
    // Multimodal checkpoints (Gemma-3, LLaVA, Llama-4) nest the language model in text_config;
    // only that decoder is modelled.
    const auto text_config = config.find("text_config");
    const bool multimodal = text_config != config.end() && text_config->is_object() && !config.contains("hidden_size");
    const Json& language = multimodal ? *text_config : config;
    Diagnostics diagnostics(file_name);
    HfConfigReader fields(language, json_text_value, diagnostics);
    ModelSpec model;
    const std::string outer_type = json_text(config, "model_type");
    const std::string type = json_text(language, "model_type");
    model.name = !outer_type.empty() ? outer_type : type.empty() ? file_name : type;
    model.source = file_name;
    if (type == "gpt2" || type == "gptj" || type == "gpt_neox" || language.contains("n_embd")) {
        read_gpt2_config(language, fields, model);
    } else if (type == "t5" || type == "mt5" || language.contains("d_model")) {
        read_t5_config(language, fields, model);
    } else {
        read_decoder_config(language, fields, model);
    }
    diagnostics.throw_if_any();
    if (model.kv_heads == 0) {
        model.kv_heads = model.heads;
    }
    model.head_dim = model.attention_head_dim();
    if (!model.is_transformer() || model.ffn == 0 || model.vocab == 0) {
        throw InputError(
            Diagnostic{file_name,
                       {},
                       {},
                       "not a recognised transformer config: need layers, hidden size, attention heads, "
                       "FFN size and vocabulary (Llama, Mistral, Mixtral, Qwen2, Gemma, GPT-2, BERT, T5 names)"});
    }
    if (model.heads % model.kv_heads != 0) {
        throw InputError(Diagnostic{file_name, {}, {}, "num_attention_heads is not a multiple of num_key_value_heads"});
    }
    if (model.top_k > model.experts) {
        throw InputError(Diagnostic{
            file_name,
            {},
            {},
            fmt::format("num_experts_per_tok {} exceeds the {} routed experts", model.top_k, model.experts)});
    }
    const ParamCounts counts = transformer_params(model);
    model.params = counts.total;
    model.active_params = counts.active;
    std::vector<std::string> notes;
    if (multimodal) {
        notes.push_back("language model only (text_config); the vision tower is not modelled");
    }
    if (const std::string rope = rope_scaling_note(language); !rope.empty()) {
        notes.push_back(rope);
    }
    const auto quantization = config.find("quantization_config");
    if (quantization != config.end() && quantization->is_object()) {
        const CheckpointQuantization read = quantization_from_config_text(quantization->dump());
        model.checkpoint_weights = read.weights;
        model.quantization = read.description;
    }
    for (const std::string& note : notes) {
        model.notes += (model.notes.empty() ? "" : "; ") + note;
    }
    return model;
}

namespace {

// compressed-tensors: config_groups.*.weights: {"num_bits": 8, "type": "float"} is FP8 (strategy
// block: fp8-block); 4-bit floats are NVFP4 (group 16) or MXFP4 (group 32); 4-bit ints are W4A16.
CheckpointQuantization compressed_tensors_quantization(const Json& config) {
    const auto groups = config.find("config_groups");
    if (groups != config.end() && groups->is_object()) {
        for (const auto& [name, group] : groups->items()) {
            const auto weights = group.find("weights");
            if (weights == group.end() || !weights->is_object()) {
                continue;
            }
            const auto num_bits = weights->find("num_bits");
            const int width = num_bits != weights->end() && num_bits->is_number_integer() ? num_bits->get<int>() : 0;
            const std::string kind = json_text(*weights, "type");
            const auto group_field = weights->find("group_size");
            const int group_size =
                group_field != weights->end() && group_field->is_number_integer() ? group_field->get<int>() : 0;
            // llm-compressor's FP4 schemes: NVFP4 is 4-bit floats in groups of 16 (format
            // nvfp4-pack-quantized), MXFP4 in groups of 32 (mxfp4-pack-quantized).
            if (width == 4 && kind == "float") {
                if (group_size == 32 || json_text(config, "format") == "mxfp4-pack-quantized") {
                    return {"mxfp4", "compressed-tensors MXFP4"};
                }
                return {"nvfp4", "compressed-tensors NVFP4"};
            }
            if (width == 8 && kind == "float" && json_text(*weights, "strategy") == "block") {
                return {"fp8-block", "compressed-tensors FP8, block scales"};
            }
            if (width == 8 && kind == "float") {
                return {"fp8", "compressed-tensors FP8"};
            }
            if (width == 8) {
                return {"int8", "compressed-tensors INT8"};
            }
            if (width == 4) {
                return {"int4", "compressed-tensors INT4 (W4A16)"};
            }
        }
    }
    return {"", "compressed-tensors (format not recognised; weights as the workload says)"};
}

}  // namespace

CheckpointQuantization quantization_from_config_text(std::string_view json_text_value) {
    const Json parsed = Json::parse(json_text_value, nullptr, false);
    if (!parsed.is_object()) {
        return {};
    }
    // ModelOpt's hf_quant_config.json: {"quantization": {"quant_algo": "FP8"}}.
    const auto modelopt = parsed.find("quantization");
    const Json& config = modelopt != parsed.end() && modelopt->is_object() ? *modelopt : parsed;
    const std::string method = to_lower(json_text(config, "quant_method"));
    const std::string algo = to_lower(json_text(config, "quant_algo"));
    const auto bits_field = config.find(config.contains("bits") ? "bits" : "w_bit");
    const int bits = bits_field != config.end() && bits_field->is_number_integer() ? bits_field->get<int>() : 0;
    if (method == "awq" || (method.empty() && config.contains("w_bit"))) {
        return {bits == 8 ? "int8" : "awq", fmt::format("AWQ {}-bit", bits > 0 ? bits : 4)};
    }
    if (method == "gptq" || (method.empty() && config.contains("bits") && config.contains("group_size"))) {
        return {bits == 8 ? "int8" : "gptq", fmt::format("GPTQ {}-bit", bits > 0 ? bits : 4)};
    }
    // ModelOpt: quant_algo NVFP4 (nvidia/DeepSeek-R1-0528-FP4's hf_quant_config.json, or a
    // config.json quantization_config with quant_method modelopt); W4A8_MXFP4_FP8 is MXFP4.
    const std::string modelopt_name = method.empty() || method == "modelopt" ? "ModelOpt " + algo : method;
    if (algo.find("nvfp4") != std::string::npos) {
        return {"nvfp4", modelopt_name};
    }
    if (method == "mxfp4" || algo.find("mxfp4") != std::string::npos) {
        // gpt-oss: {quant_method: mxfp4, modules_to_not_convert: [attention, router, embeddings, lm_head]}.
        return {"mxfp4", method == "mxfp4" ? std::string(config.contains("modules_to_not_convert")
                                                             ? "MXFP4 (modules_to_not_convert stay 16-bit)"
                                                             : "MXFP4")
                                           : modelopt_name};
    }
    if (method == "fp8" || method == "fbgemm_fp8" || algo.rfind("fp8", 0) == 0) {
        // DeepSeek-V3 and Qwen3 FP8: {quant_method: fp8, fmt: e4m3, weight_block_size: [128, 128]}.
        const auto block = config.find("weight_block_size");
        if (block != config.end() && block->is_array() && block->size() == 2 && (*block)[0].is_number_integer() &&
            (*block)[1].is_number_integer()) {
            return {"fp8-block", fmt::format("{}, {}×{} block scales", method.empty() ? "ModelOpt " + algo : method,
                                             (*block)[0].get<int>(), (*block)[1].get<int>())};
        }
        return {"fp8", method.empty() ? "ModelOpt " + algo : modelopt_name};
    }
    if (method == "bitsandbytes" || json_bool(config, "load_in_4bit", false) ||
        json_bool(config, "load_in_8bit", false)) {
        if (json_bool(config, "load_in_8bit", false)) {
            return {"int8", "bitsandbytes 8-bit"};
        }
        const bool double_quant = json_bool(config, "bnb_4bit_use_double_quant", false);
        return {double_quant ? "nf4-dq" : "nf4",
                std::string("bitsandbytes 4-bit") + (double_quant ? " with double quantization" : "")};
    }
    if (method == "compressed-tensors") {
        return compressed_tensors_quantization(config);
    }
    if (!method.empty() || !algo.empty()) {
        return {"", (method.empty() ? algo : method) + " (not recognised; weights as the workload says)"};
    }
    return {};
}

ModelSpec model_from_hf_config_file(const std::string& path) {
    return model_from_hf_config_text(read_input_file(path, 1u << 20), path);
}

}  // namespace gpusel
