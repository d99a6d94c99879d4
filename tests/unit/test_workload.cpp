#include <catch2/catch.hpp>

#include <algorithm>

#include "inputs/workload.hpp"
#include "support/test_support.hpp"

using gpusel::LoadContext;
using gpusel::Workload;
using gpusel::test::input_errors;

namespace {
using gpusel::test::catalog;
using gpusel::test::models;
LoadContext context() {
    return LoadContext{&catalog(), &models()};
}

Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", context());
}
std::vector<std::string> errors(const std::string& text) {
    return input_errors([&] { load(text); });
}
bool assumed(const Workload& workload, const std::string& field, const std::string& value) {
    return std::any_of(workload.assumptions.begin(), workload.assumptions.end(),
                       [&](const gpusel::Assumption& a) { return a.field == field && a.value == value; });
}
}  // namespace

TEST_CASE("workload::load reads a fine-tuning workload and records its defaults", "[workload]") {
    const Workload workload = load(R"(format: 1
name: support-bot-finetune
kind: fine-tuning
model:
  preset: llama-3.1-8b
training:
  micro_batch: 4
  seq_len: 4096
  checkpointing: selective
  lora: {rank: 16}
  dataset_tokens: 2B
  deadline: 14d
deployment:
  horizon: 24mo
  asset_life: 4y
)");
    CHECK(workload.name == "support-bot-finetune");
    CHECK(workload.kind == gpusel::WorkloadKind::fine_tuning);
    CHECK(workload.role == gpusel::Role::training);
    CHECK(workload.model.layers == 32);
    CHECK(workload.precision == gpusel::Precision::bf16);
    CHECK(workload.weights == gpusel::WeightFormat::bf16);
    CHECK(workload.training.micro_batch == 4);
    CHECK(workload.training.seq_len == 4096);
    CHECK(workload.training.checkpointing == gpusel::Checkpointing::selective);
    CHECK(workload.training.lora.rank == 16);
    CHECK(workload.training.lora.targets == std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj"});
    CHECK(workload.training.dataset_tokens == 2e9);
    CHECK(workload.training.deadline_seconds == 14 * 86400.0);
    CHECK(workload.deployment.horizon_months == Approx(24.0));
    CHECK(workload.deployment.asset_life_months == Approx(48.0));
    CHECK(workload.deployment.pue == 1.4);
    CHECK(assumed(workload, "role", "training"));
    CHECK(assumed(workload, "precision", "bf16"));
    CHECK(assumed(workload, "training.optimizer", "adamw"));
    CHECK(assumed(workload, "deployment.pue", "1.4"));
    CHECK(assumed(workload, "deployment.energy_price", "0.12USD/kWh"));
    CHECK(assumed(workload, "training.lora.targets", "[q_proj, k_proj, v_proj, o_proj]"));
    CHECK_FALSE(assumed(workload, "deployment.horizon", "24mo"));
}

TEST_CASE("workload::load reads an inference workload with an SLO", "[workload]") {
    const Workload workload = load(R"(format: 1
name: chat-api
kind: inference
model: {preset: llama-2-13b}
weights: awq
inference:
  input_tokens: 512
  output_tokens: 256
  requests_per_s: 20
  slo: {ttft: 300ms, tpot: 50ms}
constraints:
  allow: [L40, A10]
  memory_headroom: 15%
)");
    CHECK(workload.role == gpusel::Role::inference);
    CHECK(workload.weights == gpusel::WeightFormat::awq);
    CHECK(workload.inference.batch == 0);
    CHECK(workload.inference.slo.tpot_seconds == Approx(0.05));
    CHECK(workload.inference.slo.percentile == 99);
    CHECK(workload.constraints.allow == std::vector<std::string>{"L40", "A10"});
    CHECK(workload.constraints.memory_headroom_fraction == Approx(0.15));
    CHECK(assumed(workload, "inference.slo.percentile", "99"));
    CHECK(assumed(workload, "kv_cache", "fp16"));
}

TEST_CASE("workload::load reads expert parallelism and DP attention, and checks them", "[workload]") {
    const Workload workload = load(R"(format: 1
name: moe
kind: inference
model: {preset: mixtral-8x7b}
inference: {tensor_parallel: 4, expert_parallel: 4, dp_attention: true}
)");
    CHECK(workload.inference.expert_parallel == 4);
    CHECK(workload.inference.dp_attention);
    const Workload defaults = load(R"(format: 1
name: moe
kind: inference
model: {preset: mixtral-8x7b}
inference: {expert_parallel: auto}
)");
    CHECK(defaults.inference.expert_parallel == 0);
    CHECK_FALSE(defaults.inference.dp_attention);
    CHECK(errors(R"(format: 1
name: moe
kind: inference
model: {preset: mixtral-8x7b}
inference: {tensor_parallel: 2, expert_parallel: 8}
)") == std::vector<std::string>{"w.yaml:5:50: inference.expert_parallel: 8 exceeds tensor_parallel 2: the experts "
                                "are spread over one replica's GPUs"});
    CHECK(errors(R"(format: 1
name: dense
kind: inference
model: {preset: llama-3.1-8b}
inference: {tensor_parallel: 2, expert_parallel: 2}
)") == std::vector<std::string>{"w.yaml:5:50: inference.expert_parallel: llama-3.1-8b has no routed experts to "
                                "spread"});
}

TEST_CASE("workload::load reports every error of a file at once", "[workload]") {
    CHECK(errors(R"(format: 1
name: x
kind: fine-tuninng
model: {preset: llama-3.1-7b}
precison: bf16
training:
  micro_batch: 2
  micro_batch: 4
)") == std::vector<std::string>{
           "w.yaml:3:7: kind: 'fine-tuninng' is not one of training, fine-tuning, inference; did you mean "
           "'fine-tuning'?",
           "w.yaml:4:17: model.preset: unknown model preset 'llama-3.1-7b', did you mean 'llama-3.1-8b'?; `gpusel "
           "models list` shows them",
           "w.yaml:5:1: precison: unknown field 'precison', did you mean 'precision'?",
           "w.yaml:8:3: duplicate key 'micro_batch' (first at line 7)",
       });
}

TEST_CASE("workload::load checks fields once the YAML itself is sound", "[workload]") {
    CHECK(errors(R"(name: x
kind: fine-tuning
model: {preset: llama-3.1-8b}
precision: int4
training:
  optimizer: adam-w
  micro_batch: 010
  lora: {rank: 0}
deployment:
  pue: 0.9
  horizon: 24 months
constraints:
  allow: [H100-SXM]
)") == std::vector<std::string>{
           "w.yaml:4:12: precision: 'int4' is a weight format, not a compute precision; set weights: int4 and "
           "precision: fp16 or bf16",
           "w.yaml:6:14: training.optimizer: 'adam-w' is not one of adamw, adam, sgd, sgd-momentum, adamw-8bit, "
           "adafactor, lion; did you mean 'adamw'?",
           "w.yaml:7:16: training.micro_batch: '010' has a leading zero; write the number without it",
           "w.yaml:8:16: training.lora.rank: '0' is out of range; expected 1 to 65536",
           "w.yaml:10:8: deployment.pue: '0.9' is below the minimum of 1",
           "w.yaml:11:12: deployment.horizon: '24 months' has an unknown unit 'months'; expected a duration such as "
           "300ms, 2s, 14d or 24mo (ms, s, min, h, d, w, mo, y)",
           "w.yaml:13:10: constraints.allow: unknown GPU 'H100-SXM', did you mean 'H100-SXM5'?",
       });
}

TEST_CASE("workload::load never guesses a unit: bare durations and shares above 1 are errors", "[workload]") {
    const std::string head = "name: w\nkind: inference\nmodel: {preset: llama-2-7b}\n";
    // "ttft: 300" was 300 seconds, "tpot: 50" 50 seconds: both valid, both wrong.
    CHECK(errors(head + "inference: {requests_per_s: 2, slo: {ttft: 300, tpot: 50}}\n") ==
          std::vector<std::string>{
              "w.yaml:4:44: inference.slo.ttft: '300' has no unit; write 300ms, 300s or another duration unit "
              "(min, h, d)",
              "w.yaml:4:55: inference.slo.tpot: '50' has no unit; write 50ms, 50s or another duration unit "
              "(min, h, d)"});
    CHECK(load(head + "inference: {requests_per_s: 2, slo: {ttft: 300ms, tpot: 0.05s}}\n").inference.slo.ttft_seconds ==
          Approx(0.3));
    // "utilization: 70" was 7,000 %: a share is 70% or 0.7.
    CHECK(errors(head + "deployment: {utilization: 70}\n") ==
          std::vector<std::string>{"w.yaml:4:27: deployment.utilization: '70' is above 1 as a fraction; write 70% "
                                   "or 0.7"});
    CHECK(load(head + "deployment: {utilization: 70%}\n").deployment.utilization == Approx(0.7));
    CHECK(load(head + "deployment: {utilization: 0.7}\n").deployment.utilization == Approx(0.7));
    // A training deadline too.
    CHECK(
        errors("name: t\nkind: training\nmodel: {preset: llama-2-7b}\n"
               "training: {dataset_tokens: 1B, deadline: 72}\n") ==
        std::vector<std::string>{
            "w.yaml:4:42: training.deadline: '72' has no unit; write 72ms, 72s or another duration unit (min, h, d)"});
}

TEST_CASE("workload::load requires name, kind and model", "[workload]") {
    CHECK(errors("format: 1\n") == std::vector<std::string>{"w.yaml:1:1: name: missing required field",
                                                            "w.yaml:1:1: kind: missing required field",
                                                            "w.yaml:1:1: model: missing required field"});
    CHECK(errors("- a\n- b\n") == std::vector<std::string>{"w.yaml:1:1: expected a mapping of fields, got a list"});
    CHECK(errors("just text\n") ==
          std::vector<std::string>{"w.yaml:1:1: expected a mapping of fields, got a single value"});
}

TEST_CASE("workload::load reads a model from a Hugging Face config relative to the file", "[workload]") {
    const Workload workload = gpusel::load_workload_text(
        "name: x\nkind: inference\nmodel: {hf_config: hf/hf-config-qwen2.5-7b.json, vocab: 152000}\n",
        gpusel::test::source_path("tests/data/w.yaml"), context());
    CHECK(workload.model.layers == 28);
    CHECK(workload.model.vocab == 152000);  // a field overrides the config
}

TEST_CASE("workload::load takes the software behaviours' defaults from runtime.framework", "[workload]") {
    const std::string base = R"(format: 1
name: t
kind: training
model: {preset: llama-3.1-8b}
)";
    const Workload pytorch = load(base);
    CHECK(pytorch.runtime.framework == gpusel::Framework::pytorch);
    CHECK(pytorch.runtime.allocator == gpusel::Allocator::caching);
    CHECK(pytorch.runtime.cuda_context_bytes == 0);
    CHECK(pytorch.training.loss == gpusel::LossKind::standard);
    CHECK(pytorch.training.optimizer_step == gpusel::OptimizerStep::foreach);
    CHECK(pytorch.training.zero_grad == gpusel::ZeroGrad::set_to_none);
    CHECK(pytorch.training.gradient_dtype == gpusel::GradientDtype::automatic);
    CHECK_FALSE(pytorch.training.recompute_ffn_activation);
    CHECK(assumed(pytorch, "runtime.framework", "pytorch"));
    CHECK(assumed(pytorch, "runtime.allocator", "caching"));
    CHECK(assumed(pytorch, "training.optimizer_step", "foreach"));
    CHECK(assumed(pytorch, "training.zero_grad", "set-to-none"));
    CHECK(assumed(pytorch, "training.loss", "standard"));

    const Workload old = load(base + "runtime: {framework: pytorch-1}\n");
    CHECK(old.training.optimizer_step == gpusel::OptimizerStep::for_loop);
    CHECK(old.training.zero_grad == gpusel::ZeroGrad::zero);

    // Megatron keeps fp32 gradient buffers under bf16 (its default here), fused Adam, persistent buffers.
    const Workload megatron = load(base + "runtime: {framework: megatron}\n");
    CHECK(megatron.training.gradient_dtype == gpusel::GradientDtype::fp32);
    CHECK(megatron.training.optimizer_step == gpusel::OptimizerStep::fused);
    CHECK(megatron.training.zero_grad == gpusel::ZeroGrad::zero);
    const Workload megatron_fp16 = load(base + "precision: fp16\nruntime: {framework: megatron}\n");
    CHECK(megatron_fp16.training.gradient_dtype == gpusel::GradientDtype::automatic);

    const Workload llmc = load(base + "runtime: {framework: llm.c, cuda_context: 855MiB}\n");
    CHECK(llmc.runtime.allocator == gpusel::Allocator::static_buffers);
    CHECK(llmc.runtime.cuda_context_bytes == 855.0 * 1024 * 1024);
    CHECK(llmc.training.loss == gpusel::LossKind::fused);
    CHECK(llmc.training.optimizer_step == gpusel::OptimizerStep::fused);
    CHECK(llmc.training.recompute_ffn_activation);
    CHECK(assumed(llmc, "training.loss", "fused"));

    // Fields given override the framework's defaults and are not recorded as assumptions.
    const Workload given = load(base + R"(runtime: {framework: llm.c, allocator: caching}
training:
  loss: chunked
  optimizer_step: for-loop
  zero_grad: zero
  gradient_dtype: fp32
  recompute_ffn_activation: false
)");
    CHECK(given.runtime.allocator == gpusel::Allocator::caching);
    CHECK(given.training.loss == gpusel::LossKind::chunked);
    CHECK(given.training.optimizer_step == gpusel::OptimizerStep::for_loop);
    CHECK(given.training.zero_grad == gpusel::ZeroGrad::zero);
    CHECK(given.training.gradient_dtype == gpusel::GradientDtype::fp32);
    CHECK_FALSE(given.training.recompute_ffn_activation);
    CHECK_FALSE(assumed(given, "training.loss", "chunked"));
    CHECK_FALSE(assumed(given, "runtime.allocator", "caching"));
}

TEST_CASE("workload::load checks the runtime and implementation fields", "[workload]") {
    CHECK(errors(R"(format: 1
name: t
kind: training
model: {preset: llama-3.1-8b}
runtime:
  framework: pytorch2
  cuda_context: 0
  allocator: arena
training:
  loss: fused-linear
  optimizer_step: multi-tensor
  zero_grad: none
  gradient_dtype: bf16
)") == std::vector<std::string>{
           "w.yaml:6:14: runtime.framework: 'pytorch2' is not one of pytorch, pytorch-1, megatron, llm.c, "
           "llama.cpp; did you mean 'pytorch'?",
           "w.yaml:7:17: runtime.cuda_context: '0' must be greater than zero",
           "w.yaml:8:14: runtime.allocator: 'arena' is not one of caching, static",
           "w.yaml:10:9: training.loss: 'fused-linear' is not one of standard, chunked, fused",
           "w.yaml:11:19: training.optimizer_step: 'multi-tensor' is not one of foreach, for-loop, fused",
           "w.yaml:12:14: training.zero_grad: 'none' is not one of set-to-none, zero; did you mean 'set-to-none'?",
           "w.yaml:13:19: training.gradient_dtype: 'bf16' is not one of auto, fp32",
       });
    CHECK(errors(R"(format: 1
name: t
kind: training
model: {preset: llama-3.1-8b}
runtime: {framework: llama.cpp}
)") == std::vector<std::string>{"w.yaml:5:10: runtime: runtime.framework llama.cpp is an inference runtime; a "
                                "training workload needs pytorch, pytorch-1, megatron or llm.c"});
    const Workload inference = load(R"(format: 1
name: i
kind: inference
model: {preset: llama-2-13b}
weights: q4_k_m
runtime: {framework: llama.cpp}
)");
    CHECK(inference.runtime.allocator == gpusel::Allocator::static_buffers);
}

TEST_CASE("workload::load reads the options the planner searches", "[workload]") {
    const Workload workload = load(R"(format: 1
name: scale
kind: training
model: {preset: llama-2-7b}
precision: [bf16, fp8]
training:
  micro_batch: 2..5
  checkpointing: auto
)");
    CHECK(workload.precision == gpusel::Precision::bf16);
    CHECK(workload.precision_options ==
          std::vector<gpusel::Precision>{gpusel::Precision::bf16, gpusel::Precision::fp8});
    CHECK(workload.training.micro_batch == 2);
    CHECK(workload.training.micro_batch_options == std::vector<int>{2, 3, 4, 5});
    CHECK(workload.training.checkpointing == gpusel::Checkpointing::selective);
    CHECK(workload.training.checkpointing_options.size() == 3);
    CHECK(assumed(workload, "training.checkpointing", "selective"));

    const Workload listed = load(R"(format: 1
name: scale
kind: training
model: {preset: llama-2-7b}
precision: [fp8]
training:
  micro_batch: auto
  checkpointing: [full, none]
)");
    CHECK(listed.precision == gpusel::Precision::fp8);
    CHECK(listed.training.micro_batch_options == std::vector<int>{1, 2, 4, 8, 16, 32, 64});
    CHECK(listed.training.checkpointing == gpusel::Checkpointing::full);
    CHECK(listed.training.checkpointing_options ==
          std::vector<gpusel::Checkpointing>{gpusel::Checkpointing::full, gpusel::Checkpointing::none});
}

TEST_CASE("workload::load refuses malformed search options with their positions", "[workload]") {
    CHECK(errors(R"(format: 1
name: scale
kind: training
model: {preset: llama-2-7b}
precision: [bf16, bf16, int4, fp9]
training:
  micro_batch: 0..4
  checkpointing: [full, selectiv, full]
)") == std::vector<std::string>{
           "w.yaml:5:19: precision: 'bf16' is listed twice",
           "w.yaml:5:25: precision: 'int4' is not one of fp32, tf32, fp16, bf16, fp8",
           "w.yaml:5:31: precision: 'fp9' is not one of fp32, tf32, fp16, bf16, fp8, did you mean 'fp8'?",
           "w.yaml:7:16: training.micro_batch: '0..4' is not a micro-batch, `auto` or a range A..B with 1 <= A <= B "
           "and at most 256 values (e.g. 1..16)",
           "w.yaml:8:25: training.checkpointing: 'selectiv' is not one of none, selective, full, did you mean "
           "'selective'?",
           "w.yaml:8:35: training.checkpointing: 'full' is listed twice"});
    CHECK(errors(R"(format: 1
name: scale
kind: training
model: {preset: llama-2-7b}
precision: []
training:
  micro_batch: 8..4
  checkpointing: []
)") == std::vector<std::string>{
           "w.yaml:5:12: precision: an empty list; give one precision or a list of them",
           "w.yaml:7:16: training.micro_batch: '8..4' is not a micro-batch, `auto` or a range A..B with 1 <= A <= B "
           "and at most 256 values (e.g. 1..16)",
           "w.yaml:8:18: training.checkpointing: an empty list; give a level, auto, or a list of levels"});
    CHECK(errors(R"(format: 1
name: scale
kind: training
model: {preset: llama-2-7b}
training:
  micro_batch: 1..1000
)")
              .size() == 1);
}

TEST_CASE("workload::load checks context_parallel against the sequence and the attention kernels", "[workload]") {
    const auto training = [](const std::string& model, const std::string& fields) {
        return "format: 1\nname: cp\nkind: training\nmodel: " + model + "\ntraining:\n" + fields;
    };
    const Workload split = load(training("{preset: llama-2-7b}", "  seq_len: 8192\n  context_parallel: 2\n"));
    CHECK(split.training.context_parallel == 2);
    CHECK(load(training("{preset: llama-2-7b}", "  seq_len: 8192\n")).training.context_parallel == 1);
    // Megatron-Core's load balancing cuts each sequence into 2·cp chunks.
    CHECK(errors(training("{preset: llama-2-7b}", "  seq_len: 1000\n  context_parallel: 8\n")) ==
          std::vector<std::string>{"w.yaml:7:21: training.context_parallel: seq_len 1000 must be a multiple of "
                                   "2 × context_parallel (16)"});
    CHECK(errors(
              training("{preset: llama-2-7b}", "  seq_len: 4096\n  flash_attention: false\n  context_parallel: 2\n")) ==
          std::vector<std::string>{"w.yaml:8:21: training.context_parallel: ring attention runs on the fused attention "
                                   "kernels: set flash_attention: true"});
    CHECK(errors(training("{family: cnn, params: 25.6M, flops_per_sample: 8.2GFLOP}", "  context_parallel: 2\n")) ==
          std::vector<std::string>{"w.yaml:6:21: training.context_parallel: context parallelism splits a transformer's "
                                   "sequence; this model has none"});
    CHECK(errors(training("{preset: llama-2-7b}", "  context_parallel: 0\n")).size() == 1);
}

TEST_CASE("workload::load reads objective as a name or as {minimize, confidence}", "[workload]") {
    const std::string head = "format: 1\nname: x\nkind: inference\nmodel: {preset: llama-3.1-8b}\n";
    const Workload plain = load(head + "objective: time\n");
    CHECK(plain.objective == gpusel::Objective::time);
    CHECK(plain.confidence == 0.9);
    CHECK(assumed(plain, "objective.confidence", "0.9"));
    const Workload mapped = load(head + "objective: {minimize: energy, confidence: 95%}\n");
    CHECK(mapped.objective == gpusel::Objective::energy);
    CHECK(mapped.confidence == Approx(0.95));
    const Workload half = load(head + "objective: {confidence: 0.5}\n");
    CHECK(half.objective == gpusel::Objective::tco);
    CHECK(assumed(half, "objective.minimize", "tco"));
    CHECK(errors(head + "objective: {minimize: tcoo, confidence: 2, margin: 1}\n") ==
          std::vector<std::string>{
              "w.yaml:5:23: objective.minimize: 'tcoo' is not one of tco, time, latency, throughput-per-usd, energy; "
              "did you mean 'tco'?",
              "w.yaml:5:41: objective.confidence: '2' is above 1 as a fraction; write 2% or 0.02",
              "w.yaml:5:44: objective.margin: unknown field 'margin'; known fields: minimize, confidence"});
}

TEST_CASE("workload::load reads closed-loop concurrency and speculative decoding", "[workload][serving-load]") {
    const std::string head = R"(format: 1
name: bench
kind: inference
model: {preset: llama-2-13b}
)";
    const Workload workload = load(head + R"(inference: {input_tokens: 1024, output_tokens: 1024, concurrency: 64}
runtime: {engine: sglang, speculative: {method: mtp}}
)");
    CHECK(workload.inference.concurrency == 64);
    CHECK(workload.inference.requests_per_s == 0);
    const gpusel::SpeculativeSpec& speculative = workload.runtime.speculative;
    CHECK(speculative.method == gpusel::SpeculativeMethod::mtp);
    CHECK(speculative.draft_tokens == 3);
    CHECK(speculative.acceptance == Approx(0.85));
    CHECK(assumed(workload, "runtime.speculative.draft_tokens", "3"));
    CHECK(assumed(workload, "runtime.speculative.acceptance", "0.85"));
    // 1 + 0.85 + 0.85² + 0.85³ = 1 + 0.85 + 0.7225 + 0.614125.
    CHECK(speculative.tokens_per_step() == Approx(3.186625));
    gpusel::SpeculativeSpec half{gpusel::SpeculativeMethod::eagle, 2, 0.5};
    CHECK(half.tokens_per_step() == Approx(1.75));
    CHECK(gpusel::SpeculativeSpec{}.tokens_per_step() == 1);

    const auto both = errors(head + "inference: {requests_per_s: 2, concurrency: 8}\n");
    REQUIRE(both.size() == 1);
    CHECK(both[0].find("inference.concurrency: give requests_per_s") != std::string::npos);
    const auto eagle =
        errors(head + "inference: {concurrency: 8}\nruntime: {engine: vllm, speculative: {method: eagle}}\n");
    REQUIRE(eagle.size() == 1);
    CHECK(eagle[0].find("runtime.speculative.acceptance is required for eagle") != std::string::npos);
    const auto wrong = errors(head + "runtime: {engine: vllm, speculative: {method: medusa}}\n");
    REQUIRE(wrong.size() == 1);
    CHECK(wrong[0].find("runtime.speculative.method") != std::string::npos);
    const auto unknown = errors(head + "runtime: {engine: vllm, speculative: {method: mtp, draft: 2}}\n");
    REQUIRE(unknown.size() == 1);
    CHECK(unknown[0].find("did you mean 'draft_tokens'") != std::string::npos);
}

TEST_CASE("workload::load reads deployment.currency: an ISO code with the user's rate and its date",
          "[workload][currency]") {
    const std::string head = "name: w\nkind: inference\nmodel: {preset: llama-2-7b}\n";
    const Workload usd = load(head);
    CHECK(usd.deployment.currency.code == "USD");
    CHECK(usd.deployment.currency.per_usd == 1);
    CHECK(usd.deployment.currency.as_of.empty());
    const Workload eur = load(head + "deployment: {currency: {code: EUR, per_usd: 0.86, as_of: 2026-11}}\n");
    CHECK(eur.deployment.currency.code == "EUR");
    CHECK(eur.deployment.currency.per_usd == 0.86);
    CHECK(eur.deployment.currency.as_of == "2026-11");
    CHECK(load(head + "deployment: {currency: {code: CHF, per_usd: 0.8, as_of: 2026-11-30}}\n")
              .deployment.currency.as_of == "2026-11-30");
    // gpusel holds no rates: a bare code says what to write.
    CHECK(errors(head + "deployment: {currency: EUR}\n") ==
          std::vector<std::string>{"w.yaml:4:24: deployment.currency: give the rate and its date: currency: {code: "
                                   "EUR, per_usd: …, as_of: …} (gpusel holds no exchange rates)"});
    CHECK(errors(head + "deployment: {currency: {code: eur, per_usd: 0.86, as_of: 2026-11}}\n") ==
          std::vector<std::string>{"w.yaml:4:31: deployment.currency.code: 'eur' is not an ISO 4217 code (three "
                                   "upper-case letters); did you mean 'EUR'?"});
    CHECK(errors(head + "deployment: {currency: {code: EUR, per_usd: 0, as_of: 2026-11}}\n").size() == 1);
    CHECK(errors(head + "deployment: {currency: {code: EUR, per_usd: 0.86, as_of: 2026-13}}\n") ==
          std::vector<std::string>{"w.yaml:4:58: deployment.currency.as_of: '2026-13' is not a date; write YYYY-MM "
                                   "or YYYY-MM-DD, e.g. 2026-11"});
    CHECK(errors(head + "deployment: {currency: {code: EUR}}\n") ==
          std::vector<std::string>{"w.yaml:4:24: deployment.currency.per_usd: missing required field",
                                   "w.yaml:4:24: deployment.currency.as_of: missing required field"});
    CHECK(errors(head + "deployment: {currency: {code: USD, per_usd: 0.9, as_of: 2026-11}}\n") ==
          std::vector<std::string>{"w.yaml:4:45: deployment.currency.per_usd: one US dollar is 1 USD; leave out "
                                   "deployment.currency for USD"});
}
