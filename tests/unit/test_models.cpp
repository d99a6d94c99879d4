#include <catch2/catch.hpp>

#include "inputs/models.hpp"
#include "support/test_support.hpp"

using gpusel::model_from_hf_config_file;
using gpusel::ModelFamily;
using gpusel::ModelSpec;
using gpusel::test::input_errors;
using gpusel::test::source_path;

// Expected parameter counts are computed by hand from the configs: per layer
// attention h·d_h·(2a + 2kv) + FFN (3 if gated else 2)·h·f, plus embeddings V·h (×2 if untied);
// norms and biases are not counted (a few hundred thousand parameters).
TEST_CASE("models::hf_config imports Llama-2-7B", "[models]") {
    const ModelSpec model = model_from_hf_config_file(source_path("tests/data/hf/hf-config-llama-2-7b-hf.json"));
    CHECK(model.family == ModelFamily::decoder);
    CHECK(model.layers == 32);
    CHECK(model.hidden == 4096);
    CHECK(model.heads == 32);
    CHECK(model.kv_heads == 32);
    CHECK(model.head_dim == 128);
    CHECK(model.ffn == 11008);
    CHECK(model.ffn_gated);
    CHECK(model.vocab == 32000);
    CHECK_FALSE(model.tied_embeddings);
    CHECK(model.max_context == 4096);
    CHECK(model.params == 6738149376.0);  // published 6.74B
    CHECK(model.active_params == model.params);
}

TEST_CASE("models::hf_config imports Llama-3.1-8B with GQA", "[models]") {
    const ModelSpec model = model_from_hf_config_file(source_path("tests/data/hf/hf-config-llama-3.1-8b.json"));
    CHECK(model.kv_heads == 8);
    CHECK(model.vocab == 128256);
    CHECK(model.params == 8029995008.0);  // published 8.03B
}

TEST_CASE("models::hf_config imports Qwen2.5-7B", "[models]") {
    const ModelSpec model = model_from_hf_config_file(source_path("tests/data/hf/hf-config-qwen2.5-7b.json"));
    CHECK(model.layers == 28);
    CHECK(model.hidden == 3584);
    CHECK(model.kv_heads == 4);
    CHECK(model.params == 7615283200.0);  // published 7.61B
}

TEST_CASE("models::hf_config imports Mixtral-8x7B as a mixture of experts", "[models]") {
    const ModelSpec model =
        model_from_hf_config_file(source_path("tests/data/hf/hf-config-mixtral-8x7b-instruct-v0.1.hfpage.json"));
    CHECK(model.family == ModelFamily::moe_decoder);
    CHECK(model.experts == 8);
    CHECK(model.top_k == 2);
    CHECK(model.params == 46702526464.0);         // published 46.7B
    CHECK(model.active_params == 12879659008.0);  // published 12.9B; with the router h × experts per layer
}

TEST_CASE("models::hf_config imports BERT-base as an encoder", "[models]") {
    const ModelSpec model =
        model_from_hf_config_file(source_path("tests/data/hf/hf-config-bert-base-uncased.hfpage.json"));
    CHECK(model.family == ModelFamily::encoder);
    CHECK_FALSE(model.ffn_gated);
    CHECK(model.tied_embeddings);
    CHECK(model.params == 108375552.0);  // published 110M incl. position/type embeddings
}

TEST_CASE("models::hf_config imports GPT-2 and T5 field names", "[models]") {
    const ModelSpec gpt2 = gpusel::model_from_hf_config_text(
        R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": null,
            "vocab_size": 50257, "n_positions": 1024})",
        "gpt2.json");
    CHECK(gpt2.ffn == 3072);
    CHECK(gpt2.tied_embeddings);
    // 12·(4·768² + 2·768·3072) + 50257·768 = 84,934,656 + 38,597,376
    CHECK(gpt2.params == 123532032.0);
    const ModelSpec t5 = gpusel::model_from_hf_config_text(
        R"({"model_type": "t5", "num_layers": 12, "num_decoder_layers": 12, "d_model": 768, "num_heads": 12,
            "d_kv": 64, "d_ff": 3072, "vocab_size": 32128, "feed_forward_proj": "relu"})",
        "t5.json");
    CHECK(t5.family == ModelFamily::encoder_decoder);
    CHECK(t5.layers == 24);
    CHECK_FALSE(t5.ffn_gated);
}

TEST_CASE("models::hf_config rejects what it cannot read", "[models]") {
    CHECK(input_errors([] { gpusel::model_from_hf_config_text("{not json", "c.json"); }) ==
          std::vector<std::string>{"c.json: not valid JSON (byte 3)"});
    CHECK(input_errors([] { gpusel::model_from_hf_config_text("[1, 2]", "c.json"); }) ==
          std::vector<std::string>{"c.json: expected a JSON object (a Hugging Face config.json)"});
    CHECK(input_errors(
              [] { gpusel::model_from_hf_config_text(R"({"model_type": "llama", "hidden_size": 4096})", "c.json"); })
              .front()
              .rfind("c.json: not a recognised transformer config", 0) == 0);
}

TEST_CASE("models::hf_config refuses integer sizes beyond any real model, at their position", "[models]") {
    // Two fields too large: both reported, in file order, each at its value's line and column.
    const std::string config =
        "{\n"
        "  \"model_type\": \"llama\",\n"
        "  \"num_hidden_layers\": 200000,\n"
        "  \"hidden_size\": 4096, \"num_attention_heads\": 32,\n"
        "  \"intermediate_size\": 11008,\n"
        "  \"text_config\": {\"vocab_size\": 7},\n"
        "  \"vocab_size\": 1e12\n"
        "}\n";
    CHECK(input_errors([&] { gpusel::model_from_hf_config_text(config, "c.json"); }) ==
          std::vector<std::string>{
              "c.json:3:24: num_hidden_layers is 200000, beyond any real model (at most 100000)",
              "c.json:7:17: vocab_size is 1000000000000, beyond any real model (at most 100000000)"});
    // Above the old 1e9 cut-off, where the value used to be dropped without a word.
    CHECK(input_errors([] {
              gpusel::model_from_hf_config_text(
                  R"({"model_type": "gpt2", "n_layer": 1, "n_embd": 1000000000, "n_head": 1, "vocab_size": 1})",
                  "g.json");
          }) ==
          std::vector<std::string>{"g.json:1:48: n_embd is 1000000000, beyond any real model (at most 16777216)"});
    // The last of duplicate keys is the one nlohmann keeps, and the one pointed at.
    CHECK(input_errors([] {
              gpusel::model_from_hf_config_text("{\"num_hidden_layers\": 2,\n \"num_hidden_layers\": 100001}",
                                                "d.json");
          }).front() == "d.json:2:23: num_hidden_layers is 100001, beyond any real model (at most 100000)");
}

TEST_CASE("models::hf_config keeps legitimately large values", "[models]") {
    // Gemma-scale vocabulary, a 128k context, RoPE bases of 5e5 and 1e7 (rope_theta is not an
    // integer size and is not read), and the largest values each bound allows.
    const ModelSpec model = gpusel::model_from_hf_config_text(
        R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 256000,
            "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0}})",
        "l.json");
    CHECK(model.vocab == 256000);
    CHECK(model.max_context == 131072);
    CHECK(model.kv_heads == 8);
    CHECK(gpusel::model_from_hf_config_text(
              R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 1,
                  "intermediate_size": 16777216, "vocab_size": 100000000, "max_position_embeddings": 1073741824,
                  "rope_theta": 1e7})",
              "b.json")
              .max_context == 1073741824);
}

TEST_CASE("models::merge_models_text refuses a model named twice in one file", "[models]") {
    const std::string text =
        "format: 1\n"
        "models:\n"
        "  - name: my-7b\n"
        "    family: decoder\n"
        "    params: 7B\n"
        "    source: internal\n"
        "  - name: other\n"
        "    family: decoder\n"
        "    params: 1B\n"
        "    source: internal\n"
        "  - name: My-7B\n"
        "    family: decoder\n"
        "    params: 8B\n"
        "    source: internal\n"
        "  - name: other\n"
        "    family: decoder\n"
        "    params: 2B\n"
        "    source: internal\n";
    gpusel::ModelLibrary library = gpusel::builtin_models();
    const std::size_t before = library.models().size();
    CHECK(input_errors([&] { gpusel::merge_models_text(library, text, "m.yaml"); }) ==
          std::vector<std::string>{
              "m.yaml:11:11: models[2].name: duplicate model name 'My-7B' (first at line 3 as 'my-7b'; names are "
              "compared ignoring case)",
              "m.yaml:15:11: models[3].name: duplicate model name 'other' (first at line 7)"});
    CHECK(library.models().size() == before);  // nothing merged from a file with errors
    // Across files a name replaces the earlier model: that is what a models file is for.
    gpusel::merge_models_text(library,
                              "format: 1\nmodels:\n  - name: gpt2\n    family: decoder\n    params: 1B\n"
                              "    source: mine\n",
                              "override.yaml");
    CHECK(library.models().size() == before);
    CHECK(library.find("gpt2")->source == "mine");
}

TEST_CASE("models::builtin_models has every fixed preset name", "[models]") {
    const gpusel::ModelLibrary library = gpusel::builtin_models();
    for (const char* name :
         {"gpt2",         "gpt2-medium",   "gpt2-large",    "gpt2-xl",        "bert-base",    "bert-large",
          "roberta-base", "roberta-large", "t5-base",       "t5-xl",          "llama-2-7b",   "llama-2-13b",
          "llama-2-70b",  "llama-3.1-8b",  "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
          "mistral-7b",   "mixtral-8x7b",  "qwen2.5-7b",    "qwen2.5-14b",    "qwen2.5-32b",  "qwen2.5-72b",
          "phi-3-mini",   "gemma-2-9b",    "gemma-2-27b",   "falcon-7b",      "falcon-40b",   "gpt-j-6b",
          "vit-b-16",     "vit-l-16",      "resnet-50",     "yolov8-m",       "unet-3d",      "sdxl-unet",
          "dlrm"}) {
        INFO(name);
        const ModelSpec* model = library.find(name);
        REQUIRE(model != nullptr);
        CHECK(model->params > 0);
        CHECK_FALSE(model->source.empty());
    }
    CHECK(library.find("LLAMA-3.1-8B") != nullptr);  // case-insensitive
    CHECK(library.suggest("llama-3.1-7b") == "llama-3.1-8b");
}

TEST_CASE("models::builtin_models parameter counts agree with the architecture", "[models]") {
    // The published count and the count implied by the fields must agree within 10 %
    // (norms, biases and position embeddings account for the rest).
    const gpusel::ModelLibrary library = gpusel::builtin_models();
    for (const ModelSpec& model : library.models()) {
        const double implied = gpusel::transformer_param_count(model);
        if (implied == 0 || model.family == ModelFamily::vit || model.family == ModelFamily::encoder_decoder) {
            continue;
        }
        INFO(model.name << ": published " << model.params << ", implied " << implied);
        CHECK(implied == Approx(model.params).epsilon(0.10));
    }
}
