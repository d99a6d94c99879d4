// Today's architectures read from their configs (tests/data/hf/SOURCES.md), with parameter
// counts against the published figures and KV-cache bytes against hand arithmetic.

#include <catch2/catch.hpp>

#include "inputs/models.hpp"
#include "support/test_support.hpp"

using gpusel::kv_cache_bytes_per_sequence;
using gpusel::ModelFamily;
using gpusel::ModelSpec;
using gpusel::test::source_path;

namespace {

ModelSpec fixture(const char* name) {
    return gpusel::model_from_hf_config_file(source_path(std::string("tests/data/hf/") + name));
}

// Within `tolerance` (relative) of a published figure: the count leaves out norms and biases,
// and papers round.
bool near(double value, double published, double tolerance = 0.01) {
    return value > published * (1 - tolerance) && value < published * (1 + tolerance);
}

}  // namespace

TEST_CASE("architectures: DeepSeek-V3 reads MLA, routed and shared experts, dense first layers", "[models]") {
    const ModelSpec model = fixture("hf-config-deepseek-v3.json");
    CHECK(model.family == ModelFamily::moe_decoder);
    CHECK(model.experts == 256);
    CHECK(model.top_k == 8);
    CHECK(model.ffn == 2048);
    CHECK(model.dense_ffn == 18432);
    CHECK(model.shared_ffn == 2048);
    CHECK(model.dense_layers == 3);
    CHECK(model.kv_lora_rank == 512);
    CHECK(model.qk_rope_head_dim == 64);
    CHECK(near(model.params, 671e9));                // published 671B (MTP module excluded)
    CHECK(near(model.active_params, 37e9, 0.03));    // published 37B activated
    CHECK(model.checkpoint_weights == "fp8-block");  // weight_block_size [128, 128]
    CHECK(model.quantization == "fp8, 128×128 block scales");
    // MLA caches (512 latent + 64 RoPE key) per layer: 61 × 576 × 2 B = 70,272 B per token.
    CHECK(kv_cache_bytes_per_sequence(model, 2, 1) == 70272.0);
    CHECK(kv_cache_bytes_per_sequence(model, 2, 1000) == 70272000.0);
}

TEST_CASE("architectures: DeepSeek-V2 no longer fails on experts 0", "[models]") {
    const ModelSpec model = fixture("hf-config-deepseek-v2.json");
    CHECK(model.experts == 160);
    CHECK(model.top_k == 6);
    CHECK(model.shared_ffn == 2 * 1536);
    CHECK(model.dense_layers == 1);
    CHECK(near(model.params, 236e9));                                   // published 236B
    CHECK(near(model.active_params, 21e9, 0.03));                       // published 21B
    CHECK(kv_cache_bytes_per_sequence(model, 2, 1) == 60.0 * 576 * 2);  // 69,120 B
}

TEST_CASE("architectures: Qwen2-MoE and Qwen3-MoE", "[models]") {
    const ModelSpec qwen2 = fixture("hf-config-qwen1.5-moe-a2.7b.json");
    CHECK(qwen2.experts == 60);
    CHECK(qwen2.ffn == 1408);
    CHECK(qwen2.shared_ffn == 5632);
    CHECK(qwen2.sliding_window == 0);  // use_sliding_window: false
    CHECK(near(qwen2.params, 14.3e9));
    CHECK(near(qwen2.active_params, 2.7e9, 0.02));
    // 2 × 16 KV heads × 128 × 24 layers × 2 B = 196,608 B per token.
    CHECK(kv_cache_bytes_per_sequence(qwen2, 2, 1) == 196608.0);

    const ModelSpec qwen3 = fixture("hf-config-qwen3-30b-a3b.json");
    CHECK(qwen3.experts == 128);
    CHECK(qwen3.head_dim == 128);  // not hidden / heads = 64
    CHECK(near(qwen3.params, 30.5e9));
    CHECK(near(qwen3.active_params, 3.3e9, 0.02));
    CHECK(qwen3.max_context == 40960);
    // 2 × 4 × 128 × 48 × 2 B = 98,304 B per token.
    CHECK(kv_cache_bytes_per_sequence(qwen3, 2, 1) == 98304.0);
}

TEST_CASE("architectures: Mistral's sliding window caps the cache, Mixtral has none", "[models]") {
    const ModelSpec mistral = fixture("hf-config-mistral-7b-instruct-v0.1.hfpage.json");
    CHECK(mistral.sliding_window == 4096);
    CHECK(mistral.sliding_layers == 0);  // all layers
    // 2 × 8 × 128 × 32 × 2 B = 131,072 B per token, for at most 4,096 tokens.
    CHECK(kv_cache_bytes_per_sequence(mistral, 2, 1000) == 131072.0 * 1000);
    CHECK(kv_cache_bytes_per_sequence(mistral, 2, 32768) == 131072.0 * 4096);
    const ModelSpec mixtral = fixture("hf-config-mixtral-8x7b-instruct-v0.1.hfpage.json");
    CHECK(mixtral.sliding_window == 0);
    CHECK(kv_cache_bytes_per_sequence(mixtral, 2, 32768) == 131072.0 * 32768);
}

TEST_CASE("architectures: Gemma-2 and Gemma-3 local/global layers", "[models]") {
    const ModelSpec gemma2 = fixture("hf-config-gemma-2-9b.json");
    CHECK(gemma2.head_dim == 256);
    CHECK(gemma2.tied_embeddings);
    CHECK(gemma2.sliding_window == 4096);
    CHECK(gemma2.sliding_layers == 21);
    CHECK(near(gemma2.params, 9.24e9));
    // Per layer and token 2 × 8 × 256 × 2 B = 8,192 B; at 8,192 tokens 21 global layers hold
    // 8,192 tokens and 21 local ones 4,096.
    CHECK(kv_cache_bytes_per_sequence(gemma2, 2, 8192) == 8192.0 * (21 * 8192 + 21 * 4096));

    const ModelSpec gemma3 = fixture("hf-config-gemma-3-27b-it.json");
    CHECK(gemma3.name == "gemma3");
    CHECK(gemma3.layers == 62);
    CHECK(gemma3.vocab == 262208);        // the class default
    CHECK(gemma3.max_context == 131072);  // the class default
    CHECK(gemma3.sliding_window == 1024);
    CHECK(gemma3.sliding_layers == 52);  // 5 local per global: 62 − ⌊62/6⌋
    CHECK(near(gemma3.params, 27.0e9));  // language model; the card's 27B includes ≈0.4B vision
    CHECK_THAT(gemma3.notes, Catch::Matchers::Contains("vision tower is not modelled"));
    // 2 × 16 × 128 × 2 B = 8,192 B per layer and token; 10 global layers × 131,072 + 52 × 1,024.
    CHECK(kv_cache_bytes_per_sequence(gemma3, 2, 131072) == 8192.0 * (10 * 131072.0 + 52 * 1024.0));
}

TEST_CASE("architectures: Phi-3 and Llama-3.1 context", "[models]") {
    const ModelSpec phi3 = fixture("hf-config-phi-3-mini-4k-instruct.json");
    CHECK(near(phi3.params, 3.82e9));  // published 3.8B
    CHECK(phi3.max_context == 4096);
    CHECK(phi3.sliding_window == 2047);  // every layer: 2 × 32 × 96 × 32 × 2 B per token, at most 2,047 tokens
    CHECK(kv_cache_bytes_per_sequence(phi3, 2, 4096) == 2.0 * 32 * 96 * 32 * 2 * 2047);
    const ModelSpec llama = fixture("hf-config-llama-3.1-8b.json");
    CHECK(llama.max_context == 131072);  // rope scaling llama3 from 8,192 trained positions
    CHECK_THAT(llama.notes, Catch::Matchers::Contains("llama3"));
}

TEST_CASE("architectures: quantized checkpoints from their configs", "[models]") {
    using gpusel::quantization_from_config_text;
    CHECK(quantization_from_config_text(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"})")
              .weights == "awq");
    CHECK(quantization_from_config_text(R"({"quant_method": "gptq", "bits": 4, "group_size": 128})").weights == "gptq");
    CHECK(quantization_from_config_text(R"({"quant_method": "gptq", "bits": 8})").weights == "int8");
    CHECK(quantization_from_config_text(R"({"quant_method": "fbgemm_fp8"})").weights == "fp8");
    CHECK(
        quantization_from_config_text(
            R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}})")
            .weights == "fp8");
    CHECK(quantization_from_config_text(
              R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_use_double_quant": true})")
              .weights == "nf4-dq");
    CHECK(quantization_from_config_text(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})").weights == "int8");
    // quant_config.json (AutoAWQ) and hf_quant_config.json (ModelOpt).
    CHECK(quantization_from_config_text(R"({"zero_point": true, "q_group_size": 128, "w_bit": 4})").weights == "awq");
    CHECK(quantization_from_config_text(R"({"quantization": {"quant_algo": "FP8"}})").weights == "fp8");
    CHECK(quantization_from_config_text(R"({"quant_method": "hqq"})").weights.empty());
}

TEST_CASE("architectures: FP4 and block-scaled FP8 checkpoints from their configs", "[models][fp4]") {
    using gpusel::CheckpointQuantization;
    using gpusel::quantization_from_config_text;
    // gpt-oss-120b config.json.
    const CheckpointQuantization gpt_oss = quantization_from_config_text(
        R"({"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
            "lm_head"], "quant_method": "mxfp4"})");
    CHECK(gpt_oss.weights == "mxfp4");
    CHECK(gpt_oss.description == "MXFP4 (modules_to_not_convert stay 16-bit)");
    // DeepSeek-V3 config.json.
    const CheckpointQuantization deepseek = quantization_from_config_text(
        R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]})");
    CHECK(deepseek.weights == "fp8-block");
    CHECK(deepseek.description == "fp8, 128×128 block scales");
    // nvidia/DeepSeek-R1-0528-FP4 hf_quant_config.json, and ModelOpt's config.json form.
    const CheckpointQuantization modelopt = quantization_from_config_text(
        R"({"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4",
            "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}})");
    CHECK(modelopt.weights == "nvfp4");
    CHECK(modelopt.description == "ModelOpt nvfp4");
    CHECK(quantization_from_config_text(R"({"quant_method": "modelopt", "quant_algo": "NVFP4"})").weights == "nvfp4");
    CHECK(quantization_from_config_text(R"({"quant_method": "modelopt", "quant_algo": "W4A8_MXFP4_FP8"})").weights ==
          "mxfp4");
    CHECK(quantization_from_config_text(R"({"quant_method": "modelopt", "quant_algo": "FP8"})").weights == "fp8");
    // llm-compressor (compressed-tensors) NVFP4 and MXFP4 schemes, FP8 with block scales.
    CHECK(quantization_from_config_text(
              R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {"group_0":
                  {"weights": {"num_bits": 4, "type": "float", "group_size": 16, "strategy": "tensor_group"}}}})")
              .weights == "nvfp4");
    CHECK(quantization_from_config_text(
              R"({"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized", "config_groups": {"group_0":
                  {"weights": {"num_bits": 4, "type": "float", "group_size": 32, "strategy": "group"}}}})")
              .weights == "mxfp4");
    CHECK(quantization_from_config_text(
              R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8,
                  "type": "float", "strategy": "block", "block_structure": [128, 128]}}}})")
              .weights == "fp8-block");
    CHECK(quantization_from_config_text(
              R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4,
                  "type": "int", "group_size": 128}}}})")
              .weights == "int4");
}

TEST_CASE("models: did-you-mean ranks family and size before edit distance", "[models]") {
    const gpusel::ModelLibrary library = gpusel::builtin_models();
    CHECK(library.suggest("llama3-8b") == "llama-3.1-8b");
    CHECK(library.suggest("Llama-3.1-8B") == "llama-3.1-8b");
    CHECK(library.suggest("mixtral-8x7") == "mixtral-8x7b");
}
