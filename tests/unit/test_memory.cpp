// Memory estimator: exact values for simple configurations, computed by hand in the comments.

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "inputs/layout.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "memory/memory.hpp"

using namespace gpusel;

namespace {

Workload workload_from(const std::string& text) {
    const LoadContext context{nullptr, nullptr};
    return load_workload_text(text, "test.yaml", context);
}

GpuSpec test_gpu(const std::string& architecture = "hopper", double memory_bytes = 80e9) {
    GpuSpec gpu;
    gpu.id = "TEST-GPU";
    gpu.architecture = architecture;
    gpu.memory_bytes = memory_bytes;
    return gpu;
}

// Llama-2-7B (HF config) with the exact HF parameter count.
constexpr const char* llama2_7b_model = R"(model:
  family: decoder
  params: 6738415616
  layers: 32
  hidden: 4096
  heads: 32
  ffn: 11008
  ffn_gated: true
  vocab: 32000
)";

// Hugging Face generate unless `runtime` says otherwise (the per-request memory model).
std::string llama_inference(const std::string& weights, int input_tokens, int output_tokens, int batch,
                            const std::string& runtime = "{engine: hf-generate}") {
    return fmt::format(R"(format: 1
name: infer
kind: inference
{}precision: fp16
weights: {}
kv_cache: fp16
inference:
  input_tokens: {}
  output_tokens: {}
  batch: {}
runtime: {}
)",
                       llama2_7b_model, weights, input_tokens, output_tokens, batch, runtime);
}

// A model without transformer fields: 1e9 parameters and 20 GB of fp32 activations per sample,
// so that in 16-bit the activations (10 GB) outweigh the optimizer-step temporary (4 GB).
std::string cnn_training(const std::string& precision, const std::string& weights, const std::string& optimizer,
                         bool master_weights, const std::string& extra = "") {
    return fmt::format(R"(format: 1
name: cnn
kind: training
model:
  family: cnn
  params: 1000000000
  activation_per_sample: 20GB
precision: {}
weights: {}
training:
  optimizer: {}
  master_weights: {}
  micro_batch: 1
{})",
                       precision, weights, optimizer, master_weights ? "true" : "false", extra);
}

// A small transformer with round numbers: Ψ = 4 × (4,194,304 + 8,388,608) + 2 × 1000 × 1024 = 52,379,648.
constexpr const char* small_transformer = R"(model:
  family: decoder
  layers: 4
  hidden: 1024
  heads: 8
  ffn: 4096
  vocab: 1000
)";

std::string small_training(const std::string& sharding, int micro_batch = 1, const std::string& extra = "",
                           const std::string& optimizer = "adamw") {
    return fmt::format(R"(format: 1
name: small
kind: training
{}precision: bf16
weights: bf16
training:
  optimizer: {}
  master_weights: true
  micro_batch: {}
  seq_len: 512
  sharding: {}
{})",
                       small_transformer, optimizer, micro_batch, sharding, extra);
}

MemoryQuery layout_query(int data_parallel, Sharding sharding, int tensor_parallel = 1) {
    MemoryQuery query;
    query.layout.data_parallel = data_parallel;
    query.layout.tensor_parallel = tensor_parallel;
    query.layout.sharding = sharding;
    return query;
}

}  // namespace

TEST_CASE("weights of a 7B model in bf16 are 2 bytes per parameter", "[memory]") {
    const Workload workload = workload_from(llama_inference("bf16", 512, 1536, 1));
    const MemoryBreakdown breakdown = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(breakdown.weights_bytes == 6738415616.0 * 2);  // 13,476,831,232
}

TEST_CASE("KV cache of the llama.cpp V100 case is exactly 1024 MiB", "[memory]") {
    // 2 × 32 layers × 4096 (32 KV heads × 128) × 2 B × 2048 tokens × 1 sequence.
    const Workload workload = workload_from(llama_inference("fp16", 512, 1536, 1));
    CHECK(kv_cache_bytes(workload.model, 2.0, 2048, 1) == 1024.0 * 1024 * 1024);
    const MemoryBreakdown breakdown = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(breakdown.kv_cache_bytes == 1024.0 * 1024 * 1024);
    // Grouped and multi-query attention shrink it by heads / kv_heads.
    ModelSpec gqa = workload.model;
    gqa.kv_heads = 8;
    CHECK(kv_cache_bytes(gqa, 2.0, 2048, 1) == 256.0 * 1024 * 1024);
    gqa.kv_heads = 1;
    CHECK(kv_cache_bytes(gqa, 1.0, 2048, 4) == 2.0 * 32 * 128 * 1 * 2048 * 4);
}

TEST_CASE("mixed-precision AdamW holds 16 bytes per parameter", "[memory]") {
    // bf16 weights 2 + bf16 gradients 2 + fp32 m, v 8 + fp32 master 4 (ZeRO paper, K = 12); gradients
    // kept allocated between steps (zero_grad zeroes them in place).
    const Workload workload = workload_from(cnn_training("bf16", "bf16", "adamw", true, "  zero_grad: zero\n"));
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(b.weights_bytes == 2e9);
    CHECK(b.gradients_bytes == 2e9);
    CHECK(b.optimizer_bytes == 12e9);
    CHECK(b.weights_bytes + b.gradients_bytes + b.optimizer_bytes == 16e9);
    CHECK(b.activations_bytes == 10e9);  // 20 GB fp32 per sample, halved in 16-bit
    CHECK(b.allocated_bytes == 26e9);
    // total = allocated + CUDA context (0.45 GB on Hopper) + 10 % allocator reserve
    CHECK(b.total_bytes == Approx(26e9 + 0.45e9 + 2.6e9).epsilon(1e-12));
}

TEST_CASE("optimizer bytes per parameter by optimizer and precision", "[memory]") {
    const GpuSpec gpu = test_gpu();
    const auto optimizer_bytes = [&](const std::string& precision, const std::string& weights,
                                     const std::string& optimizer, bool master) {
        return memory_breakdown(workload_from(cnn_training(precision, weights, optimizer, master)), gpu, MemoryQuery{})
            .optimizer_bytes;
    };
    CHECK(optimizer_bytes("bf16", "bf16", "adamw", false) == 4e9);        // pure bf16: 2 × 2 B
    CHECK(optimizer_bytes("fp32", "fp32", "adamw", false) == 8e9);        // fp32 m, v
    CHECK(optimizer_bytes("bf16", "bf16", "sgd", true) == 4e9);           // master copy only
    CHECK(optimizer_bytes("bf16", "bf16", "sgd-momentum", true) == 8e9);  // 4 + 4
    CHECK(optimizer_bytes("bf16", "bf16", "adamw-8bit", true) == 6e9);    // 2 + 4
    CHECK(optimizer_bytes("bf16", "bf16", "lion", false) == 2e9);         // one bf16 state
    CHECK(optimizer_bytes("fp32", "fp32", "sgd", false) == 0);
}

TEST_CASE("fp32 weights under autocast keep a 16-bit copy (6 B/param)", "[memory]") {
    const Workload workload = workload_from(cnn_training("fp16", "fp32", "sgd", false, "  zero_grad: zero\n"));
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(b.weights_bytes == 6e9);
    CHECK(b.gradients_bytes == 4e9);
}

TEST_CASE("the peak moves to the optimizer step when its temporary outweighs the activations", "[memory]") {
    // No activations: the foreach AdamW step's sqrt(v) temporary (4 B/param) sets the peak.
    const Workload workload = workload_from(R"(format: 1
name: step
kind: training
model: {family: cnn, params: 1000000000}
precision: bf16
training: {optimizer: adamw, micro_batch: 1}
)");
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(b.activations_bytes == 0);
    CHECK(b.optimizer_bytes == 16e9);  // 12 B/param states + master, + 4 B/param temporary
    CHECK(b.allocated_bytes == 20e9);
    // Low end: a fused step (no temporary) and the parameter count −2 %, which scales weights,
    // gradients and states alike: (2 + 2 + 12) × 0.98 GB.
    CHECK(b.allocated_low_bytes == Approx(15.68e9).epsilon(1e-12));
    // High end: everything proportional to the parameter count +2 %: 20 × 1.02 GB.
    CHECK(b.allocated_high_bytes == Approx(20.4e9).epsilon(1e-12));
}

TEST_CASE("ZeRO stages divide optimizer, gradients and weights by the data-parallel degree", "[memory]") {
    const GpuSpec gpu = test_gpu();
    // Micro-batch 8: the activations (≈ 0.56 GB) outweigh the step temporary (0.21 GB), so the
    // optimizer component holds the states alone.
    const Workload workload = workload_from(small_training("zero3", 8, "  zero_grad: zero\n"));
    const double params = 52379648;
    REQUIRE(workload.model.params == params);
    const MemoryBreakdown none = memory_breakdown(workload, gpu, layout_query(4, Sharding::none));
    const MemoryBreakdown zero1 = memory_breakdown(workload, gpu, layout_query(4, Sharding::zero1));
    const MemoryBreakdown zero2 = memory_breakdown(workload, gpu, layout_query(4, Sharding::zero2));
    const MemoryBreakdown zero3 = memory_breakdown(workload, gpu, layout_query(4, Sharding::zero3));
    CHECK(none.weights_bytes == params * 2);
    CHECK(none.gradients_bytes == params * 2);
    CHECK(none.optimizer_bytes == params * 12);
    CHECK(zero1.optimizer_bytes == params * 12 / 4);
    CHECK(zero1.gradients_bytes == params * 2);
    CHECK(zero2.gradients_bytes == params * 2 / 4);
    CHECK(zero3.gradients_bytes == params * 2 / 4);
    CHECK(zero3.optimizer_bytes == params * 12 / 4);
    // ZeRO-3: the weight shard plus two gathered copies of the largest block (12,582,912 params, bf16).
    CHECK(zero3.weights_bytes == params * 2 / 4 + 2 * 12582912.0 * 2);
    // Offloading the optimizer leaves no optimizer state and, with ZeRO-2+, no gradients on the GPU.
    MemoryQuery offload = layout_query(4, Sharding::zero2);
    offload.layout.offload = Offload::optimizer;
    const MemoryBreakdown offloaded = memory_breakdown(workload, gpu, offload);
    CHECK(offloaded.optimizer_bytes == 0);
    CHECK(offloaded.gradients_bytes == 0);
}

TEST_CASE("more GPUs never mean more per-GPU memory under ZeRO-3", "[memory]") {
    const Workload workload = workload_from(fmt::format(R"(format: 1
name: z3
kind: training
{}precision: bf16
training: {{optimizer: adamw, micro_batch: 2, seq_len: 2048, checkpointing: full, sharding: zero3}}
)",
                                                        llama2_7b_model));
    const GpuSpec gpu = test_gpu();
    double previous_total = memory_breakdown(workload, gpu, layout_query(1, Sharding::zero3)).total_bytes;
    double previous_allocated = memory_breakdown(workload, gpu, layout_query(1, Sharding::zero3)).allocated_bytes;
    for (int gpus = 2; gpus <= 1024; gpus *= 2) {
        const MemoryBreakdown b = memory_breakdown(workload, gpu, layout_query(gpus, Sharding::zero3));
        INFO(gpus << " GPUs");
        CHECK(b.total_bytes <= previous_total);
        CHECK(b.allocated_bytes <= previous_allocated);
        previous_total = b.total_bytes;
        previous_allocated = b.allocated_bytes;
    }
}

TEST_CASE("more batch, sequence or context never means less memory", "[memory]") {
    const GpuSpec gpu = test_gpu();
    // Until the activations outgrow the optimizer step's temporary the peak stays at the step:
    // memory never falls with the batch, and grows once the activations dominate.
    const Workload training = workload_from(small_training("none"));
    double previous = 0;
    for (int micro_batch = 1; micro_batch <= 64; ++micro_batch) {
        MemoryQuery query;
        query.micro_batch = micro_batch;
        const MemoryBreakdown b = memory_breakdown(training, gpu, query);
        CHECK(b.allocated_bytes >= previous);
        if (b.activations_bytes > 0) {
            CHECK(b.allocated_bytes > previous);
        }
        previous = b.allocated_bytes;
    }
    const Workload sgd = workload_from(small_training("none", 1, "", "sgd"));
    previous = 0;
    for (int micro_batch = 1; micro_batch <= 64; ++micro_batch) {
        MemoryQuery query;
        query.micro_batch = micro_batch;
        const double allocated = memory_breakdown(sgd, gpu, query).allocated_bytes;
        CHECK(allocated > previous);
        previous = allocated;
    }
    const Workload inference = workload_from(llama_inference("bf16", 512, 512, 1));
    double previous_batch = 0;
    double previous_context = 0;
    for (int step = 1; step <= 32; ++step) {
        MemoryQuery by_batch;
        by_batch.batch = step;
        MemoryQuery by_context;
        by_context.context_tokens = 256 * step;
        const double batch_bytes = memory_breakdown(inference, gpu, by_batch).total_bytes;
        const double context_bytes = memory_breakdown(inference, gpu, by_context).total_bytes;
        CHECK(batch_bytes > previous_batch);
        CHECK(context_bytes > previous_context);
        previous_batch = batch_bytes;
        previous_context = context_bytes;
    }
}

TEST_CASE("LoRA trainable parameters: r·(d_in + d_out) per target per layer", "[memory]") {
    const Workload workload = workload_from(llama_inference("bf16", 1, 1, 1));
    LoraSpec lora;
    lora.rank = 8;
    lora.targets = {"q_proj", "v_proj"};
    CHECK(lora_trainable_params(workload.model, lora) == 4194304);  // 32 × 2 × 8 × (4096 + 4096), as LitGPT prints
    lora.targets = {"all-linear"};
    // q, k, v, o: 4 × 8 × 8192; gate, up, down: 3 × 8 × (4096 + 11008); × 32 layers
    CHECK(lora_trainable_params(workload.model, lora) == 32.0 * (4 * 8 * 8192 + 3 * 8 * (4096 + 11008)));
    ModelSpec gqa = workload.model;  // Llama-3.1-8B attention: 8 KV heads of 128
    gqa.kv_heads = 8;
    gqa.head_dim = 128;
    lora.rank = 16;
    lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
    CHECK(lora_trainable_params(gqa, lora) == 32.0 * 16 * (8192 + 5120 + 5120 + 8192));  // 13,631,488
    std::vector<std::string> unknown;
    lora.targets = {"q_proj", "frobnicator"};
    lora_trainable_params(gqa, lora, &unknown);
    REQUIRE(unknown.size() == 1);
    CHECK(unknown.front() == "frobnicator");
}

TEST_CASE("LoRA fine-tuning keeps gradients and optimizer states for the adapters only", "[memory]") {
    const Workload workload = workload_from(fmt::format(R"(format: 1
name: lora
kind: fine-tuning
{}precision: bf16
weights: bf16
training:
  optimizer: adamw
  master_weights: false
  micro_batch: 1
  global_batch: 8
  seq_len: 1024
  lora: {{rank: 8, targets: [q_proj, v_proj]}}
)",
                                                        llama2_7b_model));
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(b.gradients_bytes == 4194304.0 * 2);
    CHECK(b.optimizer_bytes == 4194304.0 * 4);  // bf16 m and v
    CHECK(b.weights_bytes == 6738415616.0 * 2 + 4194304.0 * 2);
}

TEST_CASE("Korthikanti per-layer activation terms", "[memory]") {
    // GPT-style layer: h 1024, 16 heads, FFN 4h, dropout, 16-bit, s 2048, b 1 → s·b·h = 2,097,152.
    ModelSpec model;
    model.layers = 1;
    model.hidden = 1024;
    model.heads = 16;
    model.kv_heads = 16;
    model.head_dim = 64;
    model.ffn = 4096;
    ActivationShape shape;
    shape.seq_len = 2048;
    shape.micro_batch = 1;
    shape.element_bytes = 2;
    shape.dropout = true;
    shape.flash_attention = false;
    const double sbh = 2048.0 * 1024;
    const double as_over_h = 16.0 * 2048 / 1024;
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * (34 + 5 * as_over_h));
    shape.tensor_parallel = 2;  // sbh(10 + 24/t + 5as/(ht))
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * (10 + 24.0 / 2 + 5 * as_over_h / 2));
    shape.tensor_parallel = 1;
    shape.selective_recompute = true;  // the score term is recomputed
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 34);
    shape.selective_recompute = false;
    shape.flash_attention = true;  // flash attention never stores the scores
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 34);
    shape.dropout = false;  // no masks: 16 elements × 2 B
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 32);
    shape.element_bytes = 4;  // fp32: 16 elements × 4 B
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 64);
    // Gated FFN (SwiGLU) of width f keeps 4f per token instead of 2f; GQA narrows K and V.
    model.ffn = 2816;
    model.ffn_gated = true;
    model.kv_heads = 4;
    shape.element_bytes = 2;
    const double per_token = 4.0 * 1024 + 2 * 1024 + 2 * 256 + 4 * 2816;
    CHECK(transformer_layer_activation_bytes(model, shape) == 2048 * per_token * 2);
}

TEST_CASE("full recompute keeps layer inputs and one layer", "[memory]") {
    const Workload none = workload_from(
        small_training("none", 1, "  checkpointing: none\n  flash_attention: true\n  zero_grad: zero\n", "sgd"));
    const Workload full = workload_from(
        small_training("none", 1, "  checkpointing: full\n  flash_attention: true\n  zero_grad: zero\n", "sgd"));
    const GpuSpec gpu = test_gpu();
    const MemoryBreakdown b_none = memory_breakdown(none, gpu, MemoryQuery{});
    const MemoryBreakdown b_full = memory_breakdown(full, gpu, MemoryQuery{});
    ActivationShape shape;
    shape.seq_len = 512;
    shape.micro_batch = 1;
    const double layer = transformer_layer_activation_bytes(none.model, shape);
    const double logits = 512.0 * 1000 * (2 + 4);
    CHECK(b_none.activations_bytes == 4 * layer + logits);
    CHECK(b_full.activations_bytes == 4 * 512.0 * 1024 * 2 + layer + logits);
}

TEST_CASE("quantized inference keeps embeddings in 16-bit and dequantizes one matrix at a time", "[memory]") {
    const Workload workload = workload_from(llama_inference("nf4-dq", 1, 1, 1));
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    const double embedding = 2.0 * 32000 * 4096;
    const double largest_matrix = 4096.0 * 12288;  // the widest projection counted: fused QKV (3 × 4096)
    CHECK(b.weights_bytes ==
          Approx((6738415616.0 - embedding) * 4.127 / 8 + embedding * 2 + largest_matrix * 2).epsilon(1e-12));
    // Without double quantization each block of 64 keeps an fp32 absmax: 4 + 32/64 = 4.5 bits.
    const Workload plain = workload_from(llama_inference("nf4", 1, 1, 1));
    CHECK(memory_breakdown(plain, test_gpu(), MemoryQuery{}).weights_bytes ==
          Approx((6738415616.0 - embedding) * 4.5 / 8 + embedding * 2 + largest_matrix * 2).epsilon(1e-12));
    // GGUF bits per weight already average over the whole file.
    const Workload gguf = workload_from(llama_inference("q4_0", 1, 1, 1));
    CHECK(memory_breakdown(gguf, test_gpu(), MemoryQuery{}).weights_bytes ==
          Approx(6738415616.0 * 4.54 / 8).epsilon(1e-12));
}

TEST_CASE("FP4 and block-scaled FP8 weights: their bits per weight, embeddings in 16-bit", "[memory][fp4]") {
    // Llama-2-7B: 6,738,415,616 params, of which 2 × 32000 × 4096 = 262,144,000 in the untied
    // embedding and output layer, kept in 16-bit (524,288,000 B); 6,476,271,616 quantized.
    // nvfp4: 4 + 8/16 = 4.5 bits → 3,642,902,784 B + 524,288,000 B = 4,167,190,784 B; no
    // dequantized matrix (FP4 GEMMs, or tiles dequantized in registers).
    CHECK(memory_breakdown(workload_from(llama_inference("nvfp4", 1, 1, 1)), test_gpu(), MemoryQuery{}).weights_bytes ==
          Approx(4167190784.0).epsilon(1e-12));
    // mxfp4: 4 + 8/32 = 4.25 bits → 3,440,519,296 B; total 3,964,807,296 B.
    CHECK(memory_breakdown(workload_from(llama_inference("mxfp4", 1, 1, 1)), test_gpu(), MemoryQuery{}).weights_bytes ==
          Approx(3964807296.0).epsilon(1e-12));
    // fp8-block: 8 + 32/16384 bits → 6,477,852,737 B; a native FP8 matmul input, nothing
    // dequantized: 7,002,140,737 B (per-tensor fp8: 7,000,559,616 B).
    CHECK(memory_breakdown(workload_from(llama_inference("fp8-block", 1, 1, 1)), test_gpu(), MemoryQuery{})
              .weights_bytes == Approx(7002140737.0).epsilon(1e-12));
    CHECK(memory_breakdown(workload_from(llama_inference("fp8", 1, 1, 1)), test_gpu(), MemoryQuery{}).weights_bytes ==
          Approx(7000559616.0).epsilon(1e-12));
}

TEST_CASE("CUDA context by framework, or as measured", "[memory]") {
    RuntimeSpec runtime;
    CHECK(cuda_context_bytes(runtime) == 0.45e9);  // PyTorch 2.x, lazy module loading
    runtime.framework = Framework::pytorch_1;
    CHECK(cuda_context_bytes(runtime) == 1343.0 * 1024 * 1024);  // HF V100 measurement
    runtime.framework = Framework::llm_c;
    CHECK(cuda_context_bytes(runtime) == 0.45e9);
    runtime.cuda_context_bytes = 800.0 * 1024 * 1024;
    CHECK(cuda_context_bytes(runtime) == 800.0 * 1024 * 1024);
}

TEST_CASE("fits, headroom and the largest micro-batch that fits", "[memory]") {
    const Workload workload = workload_from(small_training("none"));
    const GpuSpec gpu = test_gpu("hopper", 4e9);
    MemoryQuery query;
    query.headroom_fraction = 0.1;
    const MemoryEstimate estimate = estimate_memory(workload, gpu, query);
    CHECK(estimate.capacity_bytes == 4e9);
    CHECK(estimate.headroom_bytes == 4e9 - estimate.per_gpu.total_bytes);
    CHECK(estimate.fits == (estimate.per_gpu.total_bytes <= 3.6e9));
    REQUIRE(estimate.max_micro_batch > 1);
    MemoryQuery at_max = query;
    at_max.micro_batch = estimate.max_micro_batch;
    CHECK(memory_breakdown(workload, gpu, at_max).total_bytes <= 3.6e9);
    at_max.micro_batch = estimate.max_micro_batch + 1;
    CHECK(memory_breakdown(workload, gpu, at_max).total_bytes > 3.6e9);
}

TEST_CASE("inference: largest batch and context that fit", "[memory]") {
    const Workload workload = workload_from(llama_inference("bf16", 512, 512, 1));
    const GpuSpec gpu = test_gpu("ampere", 40e9);
    MemoryQuery query;
    query.headroom_fraction = 0;
    const MemoryEstimate estimate = estimate_memory(workload, gpu, query);
    REQUIRE(estimate.max_batch > 1);
    MemoryQuery probe = query;
    probe.batch = estimate.max_batch;
    CHECK(memory_breakdown(workload, gpu, probe).total_bytes <= 40e9);
    probe.batch = estimate.max_batch + 1;
    CHECK(memory_breakdown(workload, gpu, probe).total_bytes > 40e9);
    REQUIRE(estimate.max_context_tokens > 1024);
    probe = query;
    probe.context_tokens = estimate.max_context_tokens;
    CHECK(memory_breakdown(workload, gpu, probe).total_bytes <= 40e9);
    probe.context_tokens = estimate.max_context_tokens + 1;
    CHECK(memory_breakdown(workload, gpu, probe).total_bytes > 40e9);
}

TEST_CASE("calibration points replace the activation estimate with a least-squares line", "[memory]") {
    const Workload workload = workload_from(cnn_training("bf16", "bf16", "adamw", true, R"(calibration:
  memory:
    - {gpu: TEST-GPU, micro_batch: 1, peak: 20GB}
    - {gpu: TEST-GPU, micro_batch: 3, peak: 30GB}
    - {gpu: TEST-GPU, micro_batch: 5, peak: 40GB}
)"));
    MemoryQuery query;
    query.micro_batch = 7;
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), query);
    CHECK(b.allocated_bytes == Approx(50e9).epsilon(1e-12));  // 15 GB + 5 GB per sample
    CHECK(b.activations_bytes == Approx(50e9 - 16e9).epsilon(1e-12));
}

TEST_CASE("describe and layout_as_written", "[memory][layout]") {
    Layout layout;
    layout.tensor_parallel = 2;
    layout.data_parallel = 4;
    layout.sharding = Sharding::zero1;
    CHECK(describe(layout) == "tp2 pp1 dp4 zero1");
    CHECK(describe(Layout{}) == "tp1 pp1 dp1");
    layout.context_parallel = 2;  // inside dp, like ep
    CHECK(describe(layout) == "tp2 pp1 dp4 cp2 zero1");

    const Workload data_parallel = workload_from(small_training("zero2"));
    const std::optional<Layout> eight = layout_as_written(data_parallel, 8);
    REQUIRE(eight);
    CHECK(eight->data_parallel == 8);
    CHECK(eight->tensor_parallel == 1);
    CHECK(eight->sharding == Sharding::zero2);

    const Workload fixed_tp = workload_from(small_training("none", 1, "  tensor_parallel: 2\n"));
    const std::optional<Layout> split = layout_as_written(fixed_tp, 8);
    REQUIRE(split);
    CHECK(split->tensor_parallel == 2);
    CHECK(split->data_parallel == 4);
    CHECK_FALSE(layout_as_written(fixed_tp, 3).has_value());

    const Workload inference = workload_from(llama_inference("bf16", 1, 1, 1));
    const std::optional<Layout> tensor = layout_as_written(inference, 4);
    REQUIRE(tensor);
    CHECK(tensor->tensor_parallel == 4);
    CHECK(tensor->data_parallel == 1);
}

TEST_CASE("gradients exist only from backward to the step without accumulation or in-place zeroing", "[memory]") {
    const GpuSpec gpu = test_gpu();
    // 1e9 parameters, bf16 + fp32 master AdamW: W 2, G 2, S 12, foreach temporary 4, activations 10 GB.
    const MemoryBreakdown transient =
        memory_breakdown(workload_from(cnn_training("bf16", "bf16", "adamw", true)), gpu, MemoryQuery{});
    // Backward start: W + S + A (no output-layer gradient for a model without a vocabulary) = 24 GB,
    // more than the step's W + S + G + temporary = 20 GB.
    CHECK(transient.gradients_bytes == 0);
    CHECK(transient.activations_bytes == 10e9);
    CHECK(transient.allocated_bytes == 24e9);
    // Accumulating over 4 micro-batches keeps the gradients: W + G + S + A = 26 GB.
    const MemoryBreakdown accumulated = memory_breakdown(
        workload_from(cnn_training("bf16", "bf16", "adamw", true, "  global_batch: 4\n")), gpu, MemoryQuery{});
    CHECK(accumulated.gradients_bytes == 2e9);
    CHECK(accumulated.allocated_bytes == 26e9);
    // A transformer's backward starts with the output layer's gradient: V × h × 2 B = 1000 × 1024 × 2.
    const Workload small = workload_from(small_training("none", 8));
    const MemoryBreakdown b = memory_breakdown(small, gpu, MemoryQuery{});
    CHECK(b.gradients_bytes == 1000.0 * 1024 * 2);
}

TEST_CASE("fp32 gradient buffers hold 4 bytes per trainable parameter", "[memory]") {
    const Workload workload =
        workload_from(cnn_training("bf16", "bf16", "adamw", true, "  zero_grad: zero\n  gradient_dtype: fp32\n"));
    CHECK(memory_breakdown(workload, test_gpu(), MemoryQuery{}).gradients_bytes == 4e9);
}

TEST_CASE("the optimizer step's temporary by implementation", "[memory]") {
    // Sequence 8 with full recompute leaves activations (< 1 MB) below any step temporary, so the peak
    // is at the step and the optimizer component shows states + temporary. Ψ = 52,379,648.
    const double params = 52379648;
    const auto optimizer_at_step = [&](const std::string& step) {
        const Workload workload = workload_from(fmt::format(R"(format: 1
name: step
kind: training
{}precision: bf16
weights: bf16
training:
  optimizer: adamw
  micro_batch: 1
  seq_len: 8
  checkpointing: full
  zero_grad: zero
  optimizer_step: {}
)",
                                                            small_transformer, step));
        return memory_breakdown(workload, test_gpu(), MemoryQuery{}).optimizer_bytes;
    };
    // States: fp32 m, v and master copy, 12 B/param.
    CHECK(optimizer_at_step("foreach") == params * 12 + params * 4);          // sqrt(v) of every parameter
    CHECK(optimizer_at_step("for-loop") == params * 12 + 1024.0 * 4096 * 4);  // the largest tensor: h × f
    CHECK(optimizer_at_step("fused") == params * 12);
}

TEST_CASE("the output layer's loss by implementation", "[memory]") {
    // Per logit (s·b·V = 512 × 1000): standard e + 4 = 6 B, chunked 2e = 4 B, fused e = 2 B.
    const auto activations = [&](const std::string& loss) {
        const Workload workload =
            workload_from(small_training("none", 1, fmt::format("  zero_grad: zero\n  loss: {}\n", loss), "sgd"));
        return memory_breakdown(workload, test_gpu(), MemoryQuery{}).activations_bytes;
    };
    const double logits = 512.0 * 1000;
    CHECK(activations("standard") - activations("chunked") == logits * 2);
    CHECK(activations("standard") - activations("fused") == logits * 4);
}

TEST_CASE("recomputing the FFN activation drops one f-wide tensor per layer", "[memory]") {
    ModelSpec model;
    model.layers = 1;
    model.hidden = 1024;
    model.heads = 16;
    model.head_dim = 64;
    model.ffn = 4096;
    ActivationShape shape;
    shape.seq_len = 2048;
    shape.micro_batch = 1;
    shape.dropout = true;
    const double sbh = 2048.0 * 1024;
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 34);
    shape.recompute_ffn_activation = true;  // GeLU output (4h elements of 2 B) not kept
    CHECK(transformer_layer_activation_bytes(model, shape) == sbh * 26);
    // The estimator adds back one layer's recomputed activation: s·b·f·e.
    const auto activations = [&](bool recompute) {
        const Workload workload = workload_from(small_training(
            "none", 1, fmt::format("  zero_grad: zero\n  recompute_ffn_activation: {}\n", recompute ? "true" : "false"),
            "sgd"));
        return memory_breakdown(workload, test_gpu(), MemoryQuery{}).activations_bytes;
    };
    CHECK(activations(false) - activations(true) == 4 * 512.0 * 4096 * 2 - 512.0 * 4096 * 2);
}

TEST_CASE("a static allocator keeps no reserve and a measured context is taken as given", "[memory]") {
    const Workload workload =
        workload_from(llama_inference("q4_0", 512, 1536, 1, "{framework: llama.cpp, cuda_context: 500MiB}"));
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    const double context = 500.0 * 1024 * 1024;
    CHECK(b.overhead_bytes == context);
    CHECK(b.total_bytes == b.allocated_bytes + context);
    CHECK(b.total_low_bytes == b.allocated_low_bytes + context);
    CHECK(b.total_high_bytes == b.allocated_high_bytes + context);
}

TEST_CASE("encoder inference keeps no KV cache and no vocabulary logits", "[memory]") {
    const Workload workload = workload_from(R"(format: 1
name: bert
kind: inference
model: {family: encoder, params: 109482240, layers: 12, hidden: 768, heads: 12, ffn: 3072, vocab: 30522}
precision: fp32
weights: fp32
inference: {input_tokens: 128, output_tokens: 1, batch: 8}
)");
    const MemoryBreakdown b = memory_breakdown(workload, test_gpu(), MemoryQuery{});
    CHECK(b.kv_cache_bytes == 0);
    // One layer's forward intermediates for 128 × 8 tokens: residual and normed input (2h) + GeLU input
    // and output (2f), 4 B each.
    CHECK(b.activations_bytes == 1024.0 * (2 * 768 + 2 * 3072) * 4);
}

// ---------------------------------------------------------------------------------------
// Paged serving engines (docs/memory-model.md, "Serving engines").

namespace {

Workload preset_workload_from(const std::string& text) {
    static const ModelLibrary models = builtin_models();
    const LoadContext context{nullptr, &models};
    return load_workload_text(text, "test.yaml", context);
}

Workload serving_workload(const std::string& preset, const std::string& weights, const std::string& runtime) {
    return preset_workload_from(fmt::format(R"(format: 1
name: serve
kind: inference
model: {{preset: {}}}
precision: bf16
weights: {}
inference:
  input_tokens: 2048
  output_tokens: 512
runtime: {{{}}}
)",
                                            preset, weights, runtime));
}

const GpuSpec& catalog_gpu(const std::string& id) {
    static const Catalog catalog = builtin_catalog();
    const GpuSpec* gpu = catalog.find(id);
    REQUIRE(gpu != nullptr);
    return *gpu;
}

}  // namespace

TEST_CASE("LLM serving defaults to vLLM and sizes the KV cache from what is left", "[memory][serving]") {
    const Workload workload = serving_workload("llama-3.1-8b", "bf16", "");
    REQUIRE(workload.runtime.engine == Engine::vllm);
    const GpuSpec& gpu = catalog_gpu("H100-SXM5");
    const std::optional<ServingMemory> serving = serving_memory(workload, gpu, Layout{});
    REQUIRE(serving);
    CHECK(serving->budget_bytes == Approx(0.9 * 0.99 * gpu.memory_bytes));
    CHECK(serving->kv_cache_bytes <=
          serving->budget_bytes - serving->weights_bytes - serving->activation_peak_bytes - serving->non_torch_bytes);
    CHECK(serving->kv_cache_tokens % serving->block_size == 0);
    // 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 128 KiB per token.
    CHECK(serving->kv_bytes_per_token == Approx(131072));
    CHECK(serving->max_model_len == 2560);
    CHECK(serving->max_concurrency == Approx(static_cast<double>(serving->kv_cache_tokens) / 2560));
    const MemoryEstimate estimate = estimate_memory(workload, gpu, MemoryQuery{});
    CHECK(estimate.fits);
    CHECK(estimate.max_batch == std::min(serving->max_num_seqs, static_cast<int>(serving->kv_cache_blocks / 160)));
}

TEST_CASE("the engine refuses a max_model_len above its KV capacity", "[memory][serving]") {
    const Workload workload = serving_workload("llama-3.1-70b", "awq", "max_model_len: 131072");
    const GpuSpec& gpu = catalog_gpu("L40S");
    const std::optional<ServingMemory> serving = serving_memory(workload, gpu, Layout{});
    REQUIRE(serving);
    CHECK_FALSE(serving->fits);
    CHECK_THAT(serving->refusal, Catch::Contains("estimated maximum model length"));
    CHECK_FALSE(estimate_memory(workload, gpu, MemoryQuery{}).fits);
    // At the default (prompt + output) it starts with a KV cache of more than 10k tokens.
    const std::optional<ServingMemory> fitting =
        serving_memory(serving_workload("llama-3.1-70b", "awq", ""), gpu, Layout{});
    REQUIRE(fitting);
    CHECK(fitting->fits);
    CHECK(fitting->kv_cache_tokens > 10000);
}

TEST_CASE("SGLang and TensorRT-LLM map the memory fraction their own way", "[memory][serving]") {
    const GpuSpec& gpu = catalog_gpu("H100-SXM5");
    const auto at = [&](const std::string& runtime) {
        return *serving_memory(serving_workload("llama-3.1-8b", "bf16", runtime), gpu, Layout{});
    };
    const ServingMemory sglang = at("engine: sglang");
    // SGLang's heuristic (memory/serving.cpp): 80 GiB × 0.99 = 81,100.8 MiB; 512 + 1.5 × 8192 +
    // 2 × 256 + 1024 / 8 = 13,440 MiB reserved; (81,100.8 − 13,440) / 81,100.8 = 0.8343 → 0.834.
    CHECK(sglang.memory_fraction == Approx(0.834));
    // mem_fraction_static holds weights + KV; activations and non-torch memory come on top.
    CHECK(sglang.kv_cache_bytes == Approx(0.834 * sglang.device_total_bytes - sglang.weights_bytes).margin(1e6));
    CHECK(sglang.block_size == 1);
    const ServingMemory trt = at("engine: tensorrt-llm");
    const double fixed = trt.weights_bytes + trt.activation_peak_bytes + trt.non_torch_bytes;
    CHECK(trt.kv_cache_bytes == Approx(0.9 * (trt.device_total_bytes - fixed)).margin(trt.kv_bytes_per_token * 32));
}

TEST_CASE("SGLang's mem_fraction_static follows its GPU-memory heuristic (v0.5.4 on)", "[memory][serving]") {
    Layout tp8;
    tp8.tensor_parallel = 8;
    // H200 at TP8: 141 GiB × 0.99 = 142,940.2 MiB; 512 + 1.5 × 8192 + 2 × 512 + 1024 × 8 / 8 =
    // 14,848 MiB reserved; (142,940.2 − 14,848) / 142,940.2 = 0.8961 → 0.896 (the table by TP size
    // before v0.5.4 said 0.81).
    const Workload plain = serving_workload("llama-3.1-70b", "bf16", "engine: sglang");
    CHECK(serving_memory(plain, catalog_gpu("H200-SXM"), tp8)->memory_fraction == Approx(0.896));
    // B200 at TP8 with DP attention and an EAGLE draft: 180 GiB × 0.99 = 182,476.8 MiB; 512 +
    // 1.5 × 16384 + 2 × 512 + 1024 + 512 × 8 × 4.5 (DP attention, a graph batch over 300) + 2048
    // (the draft) = 47,616 MiB; (182,476.8 − 47,616) / 182,476.8 = 0.7391 → 0.739.
    Workload busy = serving_workload("llama-3.1-70b", "bf16",
                                     "engine: sglang, speculative: {method: eagle, draft_tokens: 3, acceptance: 0.7}");
    busy.inference.dp_attention = true;
    CHECK(serving_memory(busy, catalog_gpu("B200"), tp8)->memory_fraction == Approx(0.739));
    // A fraction the user gives is kept.
    const Workload given = serving_workload("llama-3.1-70b", "bf16", "engine: sglang, gpu_memory_utilization: 0.8");
    CHECK(serving_memory(given, catalog_gpu("B200"), tp8)->memory_fraction == Approx(0.8));
}

TEST_CASE("tensor parallelism adds the all-reduce buffers to non-torch memory", "[memory][serving]") {
    const Workload workload = serving_workload("llama-3.1-8b", "bf16", "");
    const GpuSpec& gpu = catalog_gpu("H100-SXM5");
    Layout tp2;
    tp2.tensor_parallel = 2;
    const ServingMemory one = *serving_memory(workload, gpu, Layout{});
    const ServingMemory two = *serving_memory(workload, gpu, tp2);
    CHECK(two.non_torch_bytes > 5 * one.non_torch_bytes);
    CHECK(two.weights_bytes == Approx(one.weights_bytes / 2));
    CHECK(two.kv_cache_tokens > one.kv_cache_tokens);
}

TEST_CASE("MLA's latent is whole on every tensor-parallel rank unless attention is data parallel",
          "[memory][serving]") {
    const auto deepseek = [](const std::string& kv_cache, const std::string& inference) {
        return preset_workload_from(fmt::format(
            R"(format: 1
name: serve
kind: inference
model: {{hf_config: {}}}
precision: bf16
weights: fp8
kv_cache: {}
inference: {{input_tokens: 1000, output_tokens: 1000, tensor_parallel: 8{}}}
runtime: {{engine: sglang}}
)",
            std::string(GPUSEL_SOURCE_DIR) + "/tests/data/hf/hf-config-deepseek-v3.json", kv_cache, inference));
    };
    const GpuSpec& gpu = catalog_gpu("H200-SXM");
    Layout tp8;
    tp8.tensor_parallel = 8;
    // 61 layers × (512 latent + 64 RoPE key) × 2 B = 70,272 B per token on each of the 8 GPUs.
    const ServingMemory whole = *serving_memory(deepseek("bf16", ""), gpu, tp8);
    CHECK(whole.kv_bytes_per_token == Approx(70272));
    // FP8 KV: one byte per element.
    const ServingMemory fp8 = *serving_memory(deepseek("fp8", ""), gpu, tp8);
    CHECK(fp8.kv_bytes_per_token == Approx(35136));
    CHECK(fp8.kv_cache_tokens == Approx(2 * whole.kv_cache_tokens).epsilon(1e-3));
    // DP attention: each GPU caches its own sequences (1/8 of a token on average) and holds the
    // attention projections whole: 61 × 187.1M parameters × 1 B × 7/8 more weights.
    const ServingMemory dp = *serving_memory(deepseek("bf16", ", dp_attention: true"), gpu, tp8);
    CHECK(dp.kv_bytes_per_token == Approx(70272.0 / 8));
    const double attention = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    CHECK(dp.weights_bytes - whole.weights_bytes == Approx(61 * attention * 7 / 8));
}

TEST_CASE("encoders read their input only and keep to their positions", "[memory][serving]") {
    const Workload embed = preset_workload_from(R"(format: 1
name: embed
kind: inference
model: {preset: bert-base}
inference: {input_tokens: 256}
)");
    CHECK(embed.inference.output_tokens == 0);
    CHECK_FALSE(uses_serving_engine(embed));
    CHECK_THROWS_WITH(preset_workload_from(R"(format: 1
name: embed
kind: inference
model: {preset: bert-base}
inference: {input_tokens: 1024}
)"),
                      Catch::Contains("exceeds the model's 512 positions"));
}

TEST_CASE("memory::context parallelism keeps a 1/cp share of each sequence's activations", "[memory]") {
    const auto workload = [](int seq_len, int context_parallel) {
        return preset_workload_from(
            fmt::format("format: 1\nname: cp\nkind: training\nmodel: {{preset: llama-2-7b}}\n"
                        "precision: bf16\ntraining:\n  micro_batch: 1\n  seq_len: {}\n"
                        "  checkpointing: none\n  context_parallel: {}\n",
                        seq_len, context_parallel));
    };
    MemoryQuery query;
    query.layout.data_parallel = 4;
    query.micro_batch = 1;
    const GpuSpec& gpu = catalog_gpu("H100-SXM5");
    const double whole = memory_breakdown(workload(8192, 1), gpu, query).total_bytes;
    const double split = memory_breakdown(workload(8192, 2), gpu, query).total_bytes;
    // Llama 2 7B, flash attention, no recompute: every activation term is linear in the tokens
    // (Korthikanti et al. 2022 terms in s·b), so a GPU holding half of each 8192-token sequence
    // holds what a 4096-token run holds; the weights, gradients and optimizer state are the same.
    CHECK(split < whole);
    CHECK_THAT(split, Catch::Matchers::WithinRel(memory_breakdown(workload(4096, 1), gpu, query).total_bytes, 1e-12));
}

// ---------------------------------------------------------------------------------------
// A query's precision and recompute level (the planner's candidates) against a copy of the
// workload with those fields set: the same figures, exactly.

namespace {

Workload with_fields(Workload workload, Precision precision, Checkpointing checkpointing) {
    workload.precision = precision;
    workload.training.checkpointing = checkpointing;
    return workload;
}

void check_same_breakdown(const MemoryBreakdown& query, const MemoryBreakdown& copy) {
    CHECK(query.weights_bytes == copy.weights_bytes);
    CHECK(query.gradients_bytes == copy.gradients_bytes);
    CHECK(query.optimizer_bytes == copy.optimizer_bytes);
    CHECK(query.activations_bytes == copy.activations_bytes);
    CHECK(query.kv_cache_bytes == copy.kv_cache_bytes);
    CHECK(query.overhead_bytes == copy.overhead_bytes);
    CHECK(query.allocated_bytes == copy.allocated_bytes);
    CHECK(query.total_bytes == copy.total_bytes);
    CHECK(query.total_low_bytes == copy.total_low_bytes);
    CHECK(query.total_high_bytes == copy.total_high_bytes);
    CHECK(query.allocated_low_bytes == copy.allocated_low_bytes);
    CHECK(query.allocated_high_bytes == copy.allocated_high_bytes);
}

void check_same_serving(const std::optional<ServingMemory>& query, const std::optional<ServingMemory>& copy) {
    REQUIRE(query.has_value() == copy.has_value());
    if (query) {
        CHECK(query->budget_bytes == copy->budget_bytes);
        CHECK(query->activation_peak_bytes == copy->activation_peak_bytes);
        CHECK(query->kv_cache_bytes == copy->kv_cache_bytes);
        CHECK(query->kv_cache_tokens == copy->kv_cache_tokens);
        CHECK(query->fits == copy->fits);
        CHECK(query->refusal == copy->refusal);
    }
}

}  // namespace

TEST_CASE("memory: a query's precision and checkpointing give the figures of a workload copy with them set",
          "[memory]") {
    const GpuSpec& gpu = catalog_gpu("H100-SXM5");
    const Workload training = workload_from(small_training("zero1", 2));            // bf16, no recompute
    const Workload generate = workload_from(llama_inference("fp16", 512, 128, 4));  // per-request model
    const Workload vllm = serving_workload("llama-3.1-8b", "bf16", "");             // a paged engine
    const Workload tensorrt = serving_workload("llama-3.1-8b", "bf16", "engine: tensorrt-llm");
    REQUIRE(training.training.checkpointing == Checkpointing::none);
    REQUIRE(vllm.runtime.engine == Engine::vllm);
    for (const Workload* workload : {&training, &generate, &vllm, &tensorrt}) {
        for (const Precision precision : {Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8}) {
            for (const Checkpointing checkpointing :
                 {Checkpointing::none, Checkpointing::selective, Checkpointing::full}) {
                CAPTURE(workload->name, to_string(precision), to_string(checkpointing));
                const Workload copy = with_fields(*workload, precision, checkpointing);
                MemoryQuery plain;
                plain.layout.tensor_parallel = 2;
                if (workload->is_training()) {
                    plain.layout.data_parallel = 2;
                    plain.layout.sharding = Sharding::zero1;
                }
                MemoryQuery chosen = plain;
                chosen.precision = precision;
                chosen.checkpointing = checkpointing;

                check_same_breakdown(memory_breakdown(*workload, gpu, chosen), memory_breakdown(copy, gpu, plain));
                const MemoryEstimate by_query = estimate_memory(*workload, gpu, chosen);
                const MemoryEstimate by_copy = estimate_memory(copy, gpu, plain);
                check_same_breakdown(by_query.per_gpu, by_copy.per_gpu);
                CHECK(by_query.fits == by_copy.fits);
                CHECK(by_query.headroom_bytes == by_copy.headroom_bytes);
                CHECK(by_query.headroom_fraction == by_copy.headroom_fraction);
                CHECK(by_query.max_micro_batch == by_copy.max_micro_batch);
                CHECK(by_query.max_batch == by_copy.max_batch);
                CHECK(by_query.max_context_tokens == by_copy.max_context_tokens);
                CHECK(by_query.notes == by_copy.notes);
                check_same_serving(by_query.serving, by_copy.serving);
                check_same_serving(serving_memory(*workload, gpu, plain.layout, precision),
                                   serving_memory(copy, gpu, plain.layout));
                CHECK(memory_usable_bytes(*workload, gpu, plain.layout, 0.1, precision) ==
                      memory_usable_bytes(copy, gpu, plain.layout, 0.1));
            }
        }
    }
}
