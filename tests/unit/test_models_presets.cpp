// The 2025-26 serving presets in data/models.yaml against their published Hugging Face configs
// (tests/data/hf/, provenance in tests/data/hf/SOURCES.md): every architecture field the config
// importer reads must equal the preset's, and the count the config implies must sit within a
// stated bound of the published figure the preset carries.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "inputs/models.hpp"
#include "memory/memory.hpp"
#include "report/models_render.hpp"
#include "support/test_support.hpp"

using gpusel::kv_cache_bytes_per_sequence;
using gpusel::ModelSpec;
using gpusel::test::source_path;

namespace {

ModelSpec fixture(const std::string& file) {
    return gpusel::model_from_hf_config_file(source_path("tests/data/hf/" + file));
}

const ModelSpec& preset(const char* name) {
    static const gpusel::ModelLibrary library = gpusel::builtin_models();
    const ModelSpec* model = library.find(name);
    REQUIRE(model != nullptr);
    return *model;
}

// Every field the importer fills, compared one by one so a failure names the field; in three
// groups: the dense shape, attention, experts.
void check_same_shape(const ModelSpec& from_config, const ModelSpec& from_preset) {
    CHECK(from_config.family == from_preset.family);
    CHECK(from_config.layers == from_preset.layers);
    CHECK(from_config.hidden == from_preset.hidden);
    CHECK(from_config.ffn == from_preset.ffn);
    CHECK(from_config.ffn_gated == from_preset.ffn_gated);
    CHECK(from_config.vocab == from_preset.vocab);
    CHECK(from_config.tied_embeddings == from_preset.tied_embeddings);
    CHECK(from_config.max_context == from_preset.max_context);
}

void check_same_attention(const ModelSpec& from_config, const ModelSpec& from_preset) {
    CHECK(from_config.heads == from_preset.heads);
    CHECK(from_config.kv_heads == from_preset.kv_heads);
    CHECK(from_config.head_dim == from_preset.head_dim);
    CHECK(from_config.kv_lora_rank == from_preset.kv_lora_rank);
    CHECK(from_config.q_lora_rank == from_preset.q_lora_rank);
    CHECK(from_config.qk_rope_head_dim == from_preset.qk_rope_head_dim);
    CHECK(from_config.qk_nope_head_dim == from_preset.qk_nope_head_dim);
    CHECK(from_config.v_head_dim == from_preset.v_head_dim);
    CHECK(from_config.sliding_window == from_preset.sliding_window);
    CHECK(from_config.sliding_layers == from_preset.sliding_layers);
    CHECK(from_config.attention_chunked == from_preset.attention_chunked);
    CHECK(from_config.attention_sinks == from_preset.attention_sinks);
}

void check_same_experts(const ModelSpec& from_config, const ModelSpec& from_preset) {
    CHECK(from_config.experts == from_preset.experts);
    CHECK(from_config.top_k == from_preset.top_k);
    CHECK(from_config.shared_ffn == from_preset.shared_ffn);
    CHECK(from_config.dense_layers == from_preset.dense_layers);
    CHECK(from_config.moe_layer_step == from_preset.moe_layer_step);
    // The importer keeps a MoE config's dense intermediate_size even where no layer is dense
    // (Qwen3-MoE); it matters only where dense layers exist.
    if (from_preset.dense_layers > 0 || from_preset.moe_layer_step > 1) {
        CHECK(from_config.dense_ffn == from_preset.dense_ffn);
    }
    // The checkpoint's weight format: the preset's `checkpoint` is what the config's
    // quantization_config reads as (DeepSeek block FP8, gpt-oss MXFP4; none for bf16 releases).
    CHECK(from_config.checkpoint_weights == from_preset.checkpoint_weights);
}

bool within(double value, double published, double tolerance) {
    return value >= published * (1 - tolerance) && value <= published * (1 + tolerance);
}

struct PresetCase {
    const char* preset;
    const char* config;
    double total_tolerance;   // relative, of the published total
    double active_tolerance;  // relative, of the published active count (MoE)
    double total_offset;      // parameters the published total has that the config does not describe
    double active_offset;     // parameters the config's active count has that the published one leaves out
};

// Bounds from hand arithmetic on each config (the comment gives the config-derived count).
const PresetCase cases[] = {
    {"llama-3.3-70b", "hf-config-llama-3.3-70b-instruct.json", 0.005, 0, 0, 0},  // 70.55B of 70.6B
    {"qwen3-8b", "hf-config-qwen3-8b.json", 0.005, 0, 0, 0},                     // 8.190B of 8.2B
    {"qwen3-32b", "hf-config-qwen3-32b.json", 0.005, 0, 0, 0},                   // 32.76B of 32.8B
    {"qwen3-30b-a3b", "hf-config-qwen3-30b-a3b.json", 0.005, 0.02, 0, 0},        // 30.53B / 3.353B of 30.5B / 3.3B
    {"qwen3-235b-a22b", "hf-config-qwen3-235b-a22b.json", 0.005, 0.01, 0, 0},    // 235.09B / 22.19B of 235B / 22B
    {"deepseek-v3", "hf-config-deepseek-v3.json", 0.005, 0.02, 0, 0},            // 671.03B / 37.55B of 671B / 37B
    {"deepseek-r1", "hf-config-deepseek-r1.json", 0.005, 0.02, 0, 0},            // same config as V3
    // gpt-oss: the card's active count leaves out the input embedding (201,088 × 2,880 = 0.579B).
    {"gpt-oss-20b", "hf-config-gpt-oss-20b.json", 0.005, 0.005, 0, 201088.0 * 2880},    // 20.908B / 3.607B
    {"gpt-oss-120b", "hf-config-gpt-oss-120b.json", 0.005, 0.005, 0, 201088.0 * 2880},  // 116.79B / 5.131B
    // Llama-4 Scout: the card's 109B includes the vision encoder the text_config does not describe.
    {"llama-4-scout", "hf-config-llama-4-scout-17b-16e-instruct.json", 0.015, 0.015, 0, 0},  // 107.77B / 17.17B
    {"llama-4-maverick", "hf-config-llama-4-maverick-17b-128e-instruct.json", 0.005, 0.015, 0,
     0},  // 400.71B / 17.18B of 400B / 17B
    // Gemma 3 report Table 1: the 27B total includes a 417M SigLIP vision encoder.
    {"gemma-3-27b", "hf-config-gemma-3-27b-it.json", 0.005, 0, 417e6, 0},  // 27.008B + 0.417B of 27.4B
};

}  // namespace

TEST_CASE("presets: each 2025-26 serving preset matches its Hugging Face config", "[models][presets]") {
    for (const PresetCase& each : cases) {
        INFO(each.preset << " vs " << each.config);
        const ModelSpec& from_preset = preset(each.preset);
        const ModelSpec from_config = fixture(each.config);
        check_same_shape(from_config, from_preset);
        check_same_attention(from_config, from_preset);
        check_same_experts(from_config, from_preset);
        INFO("config-derived " << from_config.params << " (+" << each.total_offset << "), published "
                               << from_preset.params);
        CHECK(within(from_config.params + each.total_offset, from_preset.params, each.total_tolerance));
        if (from_preset.is_moe()) {
            INFO("config-derived active " << from_config.active_params << " (−" << each.active_offset << "), published "
                                          << from_preset.active_params);
            CHECK(within(from_config.active_params - each.active_offset, from_preset.active_params,
                         each.active_tolerance));
        }
        // The preset's published counts must also pass the library's own 10 % agreement check
        // (tests/unit/test_models.cpp), and a preset's KV bytes are the config's.
        CHECK(kv_cache_bytes_per_sequence(from_preset, 2, 100000) ==
              kv_cache_bytes_per_sequence(from_config, 2, 100000));
    }
}

TEST_CASE("presets: gpt-oss alternates 128-token windows with full attention, with sinks", "[models][presets]") {
    const ModelSpec model = fixture("hf-config-gpt-oss-120b.json");
    CHECK(model.sliding_window == 128);
    CHECK(model.sliding_layers == 18);
    CHECK(model.attention_sinks);
    CHECK(model.experts == 128);
    CHECK(model.top_k == 4);
    // 2 × 8 KV heads × 64 × 2 B = 2,048 B per layer and token; at 8,192 tokens 18 full layers
    // hold 8,192 tokens and 18 banded ones 128.
    CHECK(kv_cache_bytes_per_sequence(model, 2, 8192) == 2048.0 * (18 * 8192 + 18 * 128));
    // Sinks are 64 logits per layer: 36 × 64 = 2,304 parameters beyond the same model without them.
    ModelSpec without = model;
    without.attention_sinks = false;
    CHECK(gpusel::transformer_params(model).total - gpusel::transformer_params(without).total == 36.0 * 64);
    CHECK(kv_cache_bytes_per_sequence(model, 2, 8192) == kv_cache_bytes_per_sequence(without, 2, 8192));
}

TEST_CASE("presets: Llama-4 chunked attention and Maverick's interleaved experts", "[models][presets]") {
    const ModelSpec scout = fixture("hf-config-llama-4-scout-17b-16e-instruct.json");
    CHECK(scout.name == "llama4");
    CHECK(scout.attention_chunked);
    CHECK(scout.sliding_window == 8192);
    CHECK(scout.sliding_layers == 36);  // no_rope_layers empty: every 4th of 48 layers is global
    CHECK(scout.shared_ffn == 8192);
    CHECK(scout.moe_layer_step == 0);
    CHECK(gpusel::moe_layer_count(scout) == 48);
    CHECK_THAT(scout.notes, Catch::Matchers::Contains("vision tower is not modelled"));
    // 2 × 8 × 128 × 2 B = 4,096 B per layer and token; at 131,072 tokens 12 global layers hold all
    // of them and 36 chunked ones a chunk.
    CHECK(kv_cache_bytes_per_sequence(scout, 2, 131072) == 4096.0 * (12 * 131072.0 + 36 * 8192.0));

    const ModelSpec maverick = fixture("hf-config-llama-4-maverick-17b-128e-instruct.json");
    CHECK(maverick.moe_layer_step == 2);
    CHECK(maverick.dense_ffn == 16384);
    CHECK(gpusel::moe_layer_count(maverick) == 24);
    // Hand count: 24 MoE layers × (128 routed + 1 shared) × 3 × 5,120 × 8,192 + 24 routers
    // 5,120 × 128 + 24 dense layers × 3 × 5,120 × 16,384 + 48 × attention 5,120 × 128 × 96
    // + embeddings 2 × 202,048 × 5,120.
    const double expert = 3.0 * 5120 * 8192;
    const double expected =
        24 * (129 * expert + 5120.0 * 128) + 24 * 3.0 * 5120 * 16384 + 48 * 5120.0 * 128 * 96 + 2.0 * 202048 * 5120;
    CHECK(maverick.params == Approx(expected).epsilon(1e-12));
    CHECK(maverick.active_params == Approx(expected - 24 * 127 * expert).epsilon(1e-12));
    // The routed experts the memory split shards over expert parallelism: 24 layers × 128 × 3 ×
    // 5,120 × 8,192 = 386.5 B (before, every one of the 48 layers was counted: 773 B, capped at
    // all the blocks' parameters, so the dense half was sharded as if it were experts).
    CHECK(gpusel::split_parameters(maverick).experts == Approx(24 * 128 * expert).epsilon(1e-12));
    CHECK(gpusel::split_parameters(scout).experts == Approx(48 * 16 * 3.0 * 5120 * 8192).epsilon(1e-12));
}

TEST_CASE("presets: the models YAML reads the new architecture fields", "[models][presets]") {
    gpusel::ModelLibrary library;
    gpusel::merge_models_text(library,
                              "format: 1\nmodels:\n"
                              "  - name: tiny-interleaved\n"
                              "    family: moe-decoder\n"
                              "    layers: 4\n    hidden: 64\n    heads: 4\n    ffn: 32\n    ffn_gated: true\n"
                              "    vocab: 100\n    experts: 4\n    top_k: 1\n    shared_ffn: 32\n"
                              "    moe_layer_step: 2\n    dense_ffn: 128\n"
                              "    sliding_window: 16\n    sliding_layers: 3\n    attention_chunked: true\n"
                              "    attention_sinks: true\n"
                              "    source: test\n",
                              "m.yaml");
    const ModelSpec& model = *library.find("tiny-interleaved");
    CHECK(model.moe_layer_step == 2);
    CHECK(gpusel::moe_layer_count(model) == 2);
    CHECK(model.attention_chunked);
    CHECK(model.attention_sinks);
    // Attention 4 × (64 × 16 × 16 + 4 sinks); 2 dense layers 3 × 64 × 128; 2 MoE layers of
    // 4 experts + 1 shared of 3 × 64 × 32 and a 64 × 4 router; embeddings 2 × 100 × 64.
    const double total =
        4 * (64.0 * 16 * 16 + 4) + 2 * 3.0 * 64 * 128 + 2 * (5 * 3.0 * 64 * 32 + 64 * 4) + 2.0 * 100 * 64;
    CHECK(model.params == total);
    CHECK(model.active_params == total - 2 * 3 * 3.0 * 64 * 32);

    gpusel::ModelLibrary mla;
    gpusel::merge_models_text(mla,
                              "format: 1\nmodels:\n"
                              "  - name: tiny-mla\n    family: decoder\n    params: 1M\n"
                              "    layers: 2\n    hidden: 64\n    heads: 4\n    ffn: 32\n"
                              "    kv_lora_rank: 16\n    q_lora_rank: 24\n    qk_rope_head_dim: 8\n"
                              "    qk_nope_head_dim: 16\n    v_head_dim: 12\n    source: test\n",
                              "m.yaml");
    const ModelSpec& latent = *mla.find("tiny-mla");
    CHECK(latent.q_lora_rank == 24);
    CHECK(latent.qk_nope_head_dim == 16);
    CHECK(latent.v_head_dim == 12);
    CHECK(latent.head_dim == 24);  // nope + rope, as the config importer derives it

    gpusel::ModelLibrary bad;
    CHECK_THROWS_WITH(gpusel::merge_models_text(bad,
                                                "format: 1\nmodels:\n  - name: x\n    family: decoder\n"
                                                "    params: 1B\n    attention_chunked: true\n    source: test\n",
                                                "bad.yaml"),
                      Catch::Matchers::Contains("attention_chunked needs sliding_window"));
}

TEST_CASE("presets: models show names chunked attention, sinks and interleaved experts", "[models][presets]") {
    std::ostringstream maverick;
    gpusel::render_model_show(preset("llama-4-maverick"), maverick);
    CHECK_THAT(maverick.str(),
               Catch::Matchers::Contains("in 1 of every 2 layers (24 of 48); the others dense (ffn 16384)"));
    CHECK_THAT(maverick.str(),
               Catch::Matchers::Contains("chunked attention, chunks of 8192 tokens on 36 of 48 layers"));
    std::ostringstream oss;
    gpusel::render_model_show(preset("gpt-oss-20b"), oss);
    CHECK_THAT(oss.str(), Catch::Matchers::Contains("sliding window 128 tokens on 12 of 24 layers"));
    CHECK_THAT(oss.str(), Catch::Matchers::Contains("attention sinks"));
}
