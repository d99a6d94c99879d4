// Serving engines: the vllm serve, SGLang launch_server and trtllm-serve command lines for one
// replica, with the settings the memory model's start-up arithmetic assumed (memory.hpp,
// ServingMemory). Flags as the engines document them (docs/deploy.md cites each):
//   vLLM engine arguments: --tensor-parallel-size, --pipeline-parallel-size, --dtype,
//     --max-model-len, --max-num-seqs, --max-num-batched-tokens, --gpu-memory-utilization,
//     --block-size, --kv-cache-dtype, --quantization;
//   SGLang server arguments: --model-path, --tp-size, --pp-size, --dtype, --context-length,
//     --max-running-requests, --chunked-prefill-size, --mem-fraction-static, --kv-cache-dtype,
//     --quantization, --scheduler-recv-interval (when the workload sets it: it lengthens TTFT);
//   trtllm-serve: --backend, --tp_size, --pp_size, --max_seq_len, --max_batch_size,
//     --max_num_tokens, --kv_cache_free_gpu_memory_fraction.
// Expert parallel (a MoE model the estimate ran at EP > 1): SGLang --ep-size, trtllm-serve
// --ep_size, vLLM --enable-expert-parallel, whose EP size is TP × DP of the command (vLLM docs,
// "Expert Parallel Deployment"): one replica's TP, so it says EP = TP and nothing else.

#include <algorithm>

#include <fmt/format.h>

#include "deploy/launch_text.hpp"

namespace gpusel::deploy_detail {

namespace {

// vLLM and SGLang --dtype: the activation dtype of an unquantized or weight-only-quantized model.
std::string dtype_name(Precision precision) {
    switch (precision) {
        case Precision::fp16:
            return "float16";
        case Precision::bf16:
            return "bfloat16";
        case Precision::fp32:
        case Precision::tf32:
            return "float32";
        default:
            return "auto";  // fp8/int8/int4 compute comes with the quantization method
    }
}

// vLLM --kv-cache-dtype accepts auto and fp8 (fp8_e4m3, fp8_e5m2); SGLang auto, fp8_e5m2, fp8_e4m3.
std::string kv_cache_dtype(KvCacheFormat format, Engine engine) {
    if (format == KvCacheFormat::fp8) {
        return engine == Engine::sglang ? "fp8_e4m3" : "fp8";
    }
    return "auto";
}

CommandLine vllm_command(const LaunchSpec& spec) {
    CommandLine command;
    command.program = {"vllm", "serve", spec.model};
    command.add("--tensor-parallel-size", std::to_string(spec.layout.tensor_parallel));
    if (spec.layout.pipeline_parallel > 1) {
        command.add("--pipeline-parallel-size", std::to_string(spec.layout.pipeline_parallel));
    }
    if (spec.expert_parallel > 1 && spec.expert_parallel == spec.layout.tensor_parallel) {
        command.add_flag("--enable-expert-parallel");
    }
    command.add("--dtype", dtype_name(spec.precision));
    if (const std::string method = quantization_flag_value(spec.weights, spec.precision, Engine::vllm);
        !method.empty()) {
        command.add("--quantization", method);
    }
    command.add("--max-model-len", std::to_string(spec.max_model_len));
    command.add("--max-num-seqs", std::to_string(spec.max_num_seqs));
    if (spec.max_num_batched_tokens > 0) {
        command.add("--max-num-batched-tokens", std::to_string(spec.max_num_batched_tokens));
    }
    if (spec.memory_fraction > 0) {
        command.add("--gpu-memory-utilization", fmt::format("{:g}", spec.memory_fraction));
    }
    if (spec.block_size > 0) {
        command.add("--block-size", std::to_string(spec.block_size));
    }
    command.add("--kv-cache-dtype", kv_cache_dtype(spec.kv_cache, Engine::vllm));
    command.add("--port", "8000");
    return command;
}

CommandLine sglang_command(const LaunchSpec& spec) {
    CommandLine command;
    command.program = {"python3", "-m", "sglang.launch_server"};
    command.add("--model-path", spec.model);
    command.add("--tp-size", std::to_string(spec.layout.tensor_parallel));
    if (spec.layout.pipeline_parallel > 1) {
        command.add("--pp-size", std::to_string(spec.layout.pipeline_parallel));
    }
    if (spec.expert_parallel > 1) {
        command.add("--ep-size", std::to_string(spec.expert_parallel));
    }
    command.add("--dtype", dtype_name(spec.precision));
    if (const std::string method = quantization_flag_value(spec.weights, spec.precision, Engine::sglang);
        !method.empty()) {
        command.add("--quantization", method);
    }
    command.add("--context-length", std::to_string(spec.max_model_len));
    command.add("--max-running-requests", std::to_string(spec.max_num_seqs));
    if (spec.max_num_batched_tokens > 0) {
        command.add("--chunked-prefill-size", std::to_string(spec.max_num_batched_tokens));
    }
    if (spec.memory_fraction > 0) {
        command.add("--mem-fraction-static", fmt::format("{:g}", spec.memory_fraction));
    }
    command.add("--kv-cache-dtype", kv_cache_dtype(spec.kv_cache, Engine::sglang));
    if (spec.scheduler_recv_interval > 1) {
        command.add("--scheduler-recv-interval", std::to_string(spec.scheduler_recv_interval));
    }
    command.add("--host", "0.0.0.0");
    command.add("--port", "8000");
    return command;
}

CommandLine trtllm_command(const LaunchSpec& spec) {
    CommandLine command;
    command.program = {"trtllm-serve", spec.model};
    command.add("--backend", "pytorch");
    command.add("--tp_size", std::to_string(spec.layout.tensor_parallel));
    command.add("--pp_size", std::to_string(spec.layout.pipeline_parallel));
    if (spec.expert_parallel > 1) {
        command.add("--ep_size", std::to_string(spec.expert_parallel));
    }
    command.add("--max_seq_len", std::to_string(spec.max_model_len));
    command.add("--max_batch_size", std::to_string(spec.max_num_seqs));
    if (spec.max_num_batched_tokens > 0) {
        command.add("--max_num_tokens", std::to_string(spec.max_num_batched_tokens));
    }
    if (spec.memory_fraction > 0) {
        command.add("--kv_cache_free_gpu_memory_fraction", fmt::format("{:g}", spec.memory_fraction));
    }
    command.add("--host", "0.0.0.0");
    command.add("--port", "8000");
    return command;
}

Engine engine_of(DeployTarget target) {
    switch (target) {
        case DeployTarget::sglang:
            return Engine::sglang;
        case DeployTarget::tensorrt_llm:
            return Engine::tensorrt_llm;
        default:
            return Engine::vllm;
    }
}

// What the target cannot say that the estimate assumed, as assumptions in its comment; the
// settings of the target's engine when it is not the one the plan modelled.
LaunchSpec with_engine_assumptions(const LaunchSpec& plan_spec, Engine engine) {
    LaunchSpec spec = with_engine_settings(plan_spec, engine);
    if (engine != plan_spec.engine) {
        const auto own =
            std::find_if(plan_spec.engine_settings.begin(), plan_spec.engine_settings.end(),
                         [engine](const LaunchSpec::EngineSettings& settings) { return settings.engine == engine; });
        std::string why = fmt::format(
            "the plan's estimate modelled {} (runtime.engine); the settings here are {}'s "
            "start-up arithmetic for the same GPU and layout (docs/memory-model.md, "
            "\"Serving engines\")",
            to_string(plan_spec.engine), to_string(engine));
        if (own != plan_spec.engine_settings.end() && !own->fits) {
            why += ", by which it would not start: " + own->refusal;
        }
        spec.assumptions.push_back(
            {"engine", std::string(to_string(engine)),
             why + "; plan with runtime.engine: " + std::string(to_string(engine)) + " for its speed"});
    }
    spec.engine = engine;  // the comment's settings line names the engine they are for
    if (!spec.paged_engine) {
        spec.assumptions.push_back({"memory fraction", "the engine's default",
                                    "the plan did not model a paged serving engine for this workload"});
    }
    if (engine == Engine::tensorrt_llm && spec.kv_cache == KvCacheFormat::fp8) {
        spec.assumptions.push_back({"KV cache", "fp8",
                                    "trtllm-serve takes it in the --extra_llm_api_options YAML (kv_cache_config: "
                                    "dtype: fp8), not as a flag; add it there"});
    }
    if (engine == Engine::vllm && spec.expert_parallel > 1 && spec.expert_parallel != spec.layout.tensor_parallel) {
        spec.assumptions.push_back(
            {"expert parallel", "off",
             fmt::format("the estimate ran EP {} within TP {}; vLLM's --enable-expert-parallel spans all {} "
                         "tensor-parallel GPUs, so no flag says EP {}: launch with SGLang (--ep-size) for it",
                         spec.expert_parallel, spec.layout.tensor_parallel, spec.layout.tensor_parallel,
                         spec.expert_parallel)});
    }
    if (spec.kv_cache == KvCacheFormat::int8) {
        spec.assumptions.push_back({"KV cache", "int8", "no engine flag selects an int8 KV cache; auto is written"});
    }
    if (engine == Engine::tensorrt_llm && spec.precision == Precision::fp8 && bits_per_weight(spec.weights) >= 16) {
        spec.assumptions.push_back({"precision", "fp8",
                                    "the estimate runs FP8 GEMMs: quantize the checkpoint to FP8 before building the "
                                    "engine (TensorRT Model Optimizer, qformat fp8); trtllm-serve has no flag for it"});
    }
    if (is_fp4_format(spec.weights)) {
        // vLLM and SGLang pick modelopt_fp4 / compressed-tensors / mxfp4 from the checkpoint's
        // quantization config, and TensorRT-LLM reads hf_quant_config.json: no flag to add.
        spec.assumptions.push_back(
            {"weights", std::string(to_string(spec.weights)),
             "a checkpoint already quantized to " + std::string(to_string(spec.weights)) +
                 " (its quantization config selects the kernels; no flag quantizes a 16-bit checkpoint to it)"});
    } else if (quantization_flag_value(spec.weights, spec.precision, engine).empty() && is_quantized(spec.weights)) {
        spec.assumptions.push_back({"weights", std::string(to_string(spec.weights)),
                                    "no quantization flag of this engine loads it; the checkpoint's own "
                                    "quantization config must"});
    }
    return spec;
}

}  // namespace

// The --quantization method of a weight format; empty when none is needed (16-bit weights) or
// when the engine cannot load it (GGUF's q4_0, q4_k_m, q8_0; QLoRA's nf4 is bitsandbytes).
std::string quantization_flag_value(WeightFormat weights, Precision precision, Engine engine) {
    if (precision == Precision::fp8 && bits_per_weight(weights) >= 16) {
        // vLLM: --quantization fp8 on an unquantized checkpoint is dynamic FP8 (weights per tensor
        // at load, activations per token); SGLang's --quantization fp8 does the same.
        return engine == Engine::tensorrt_llm ? "" : "fp8";
    }
    switch (weights) {
        case WeightFormat::awq:
            return "awq";
        case WeightFormat::gptq:
            return "gptq";
        case WeightFormat::fp8:
        case WeightFormat::fp8_block:
            // vLLM and SGLang's fp8 method reads a checkpoint's weight_block_size itself.
            return "fp8";
        case WeightFormat::nf4:
        case WeightFormat::nf4_dq:
            return engine == Engine::tensorrt_llm ? "" : "bitsandbytes";
        default:
            return "";
    }
}

CommandLine serving_command(const LaunchSpec& spec, Engine engine) {
    switch (engine) {
        case Engine::sglang:
            return sglang_command(spec);
        case Engine::tensorrt_llm:
            return trtllm_command(spec);
        default:
            return vllm_command(spec);
    }
}

ServingProcess scheduled_serving(const LaunchSpec& spec) {
    ServingProcess process;
    if (!spec.decoder_llm) {
        // Triton's documented options: --model-repository, --http-port; readiness at /v2/health/ready.
        process.command.program = {"tritonserver"};
        process.command.add("--model-repository", "/models");
        process.command.add("--http-port", "8000");
        process.container = "triton";
        process.image = "nvcr.io/nvidia/tritonserver:24.12-py3";
        process.health_path = "/v2/health/ready";
        return process;
    }
    const Engine engine = is_paged_engine(spec.engine) ? spec.engine : Engine::vllm;
    process.command = serving_command(spec, engine);
    process.container = std::string(to_string(engine));
    process.image = engine == Engine::sglang         ? "lmsysorg/sglang:latest"
                    : engine == Engine::tensorrt_llm ? "nvcr.io/nvidia/tensorrt-llm/release:latest"
                                                     : "vllm/vllm-openai:latest";
    process.health_path = "/health";
    return process;
}

namespace {

// Prefill/decode disaggregation. Flags as documented:
//   SGLang PD disaggregation (docs.sglang.io/advanced_features/pd_disaggregation.html, SGLang
//     0.5.x, read 2026-12): launch_server --disaggregation-mode prefill|decode,
//     --disaggregation-transfer-backend mooncake|nixl; the router `python -m
//     sglang_router.launch_router --pd-disaggregation --prefill URL --decode URL --host --port`.
//   NVIDIA Dynamo with SGLang (docs.nvidia.com/dynamo/v1.0.1/backends/sg-lang/disaggregation and
//     ai-dynamo/dynamo examples/backends/sglang/launch/disagg.sh, read 2026-12): `python3 -m
//     dynamo.frontend` (HTTP port from DYN_HTTP_PORT, default 8000) and workers `python3 -m
//     dynamo.sglang --model-path --tp --disaggregation-mode prefill|decode
//     --disaggregation-bootstrap-port --disaggregation-transfer-backend nixl --host`; both need
//     Dynamo's etcd and NATS running (its docker-compose).
constexpr int worker_port = 30000;
constexpr int bootstrap_port = 12345;

// One worker of a phase: the model, its numerics, the phase's tensor parallel and batch.
CommandLine pd_worker_command(const LaunchSpec& spec, const DisaggregatedPhase& phase, std::string_view mode,
                              bool dynamo) {
    CommandLine command;
    command.program = dynamo ? std::vector<std::string>{"python3", "-m", "dynamo.sglang"}
                             : std::vector<std::string>{"python3", "-m", "sglang.launch_server"};
    command.add("--model-path", spec.model);
    command.add(dynamo ? "--tp" : "--tp-size", std::to_string(phase.tensor_parallel));
    if (phase.expert_parallel > 1) {
        command.add("--ep-size", std::to_string(phase.expert_parallel));
    }
    command.add("--dtype", dtype_name(spec.precision));
    if (const std::string method = quantization_flag_value(spec.weights, spec.precision, Engine::sglang);
        !method.empty()) {
        command.add("--quantization", method);
    }
    command.add("--context-length", std::to_string(spec.max_model_len));
    if (mode == "decode") {
        command.add("--max-running-requests", std::to_string(phase.batch));
    }
    command.add("--kv-cache-dtype", kv_cache_dtype(spec.kv_cache, Engine::sglang));
    command.add("--disaggregation-mode", std::string(mode));
    if (dynamo) {
        command.add("--disaggregation-bootstrap-port", std::to_string(bootstrap_port));
        command.add("--disaggregation-transfer-backend", "nixl");
        command.add("--host", "0.0.0.0");
    } else {
        command.add("--disaggregation-transfer-backend", "mooncake");
        command.add("--host", "0.0.0.0");
        command.add("--port", std::to_string(worker_port));
    }
    return command;
}

std::string pd_plan_comment(const DisaggregatedPlan& split) {
    return fmt::format(
        "# Prefill/decode split (gpusel plan, \"Disaggregated serving\"): per group {} prefill worker{} of "
        "{} × {} and {} decode worker{} of {} × {}; {} group{}{}.\n"
        "# Expected: P{:g} TTFT {:.3g} s (KV transfer {:.3g} ms over {}), TPOT {:.1f} ms; ${:.2f} per 1M output "
        "tokens vs ${:.2f} co-located.\n",
        split.prefill.workers, split.prefill.workers == 1 ? "" : "s", split.prefill.tensor_parallel,
        split.prefill.gpu_name, split.decode.workers, split.decode.workers == 1 ? "" : "s",
        split.decode.tensor_parallel, split.decode.gpu_name, split.replicas, split.replicas == 1 ? "" : "s",
        split.prefill.spare_workers + split.decode.spare_workers > 0
            ? fmt::format(", plus {} spare prefill and {} spare decode worker(s)", split.prefill.spare_workers,
                          split.decode.spare_workers)
            : "",
        split.percentile, split.ttft_s, split.kv_transfer_s * 1e3, split.kv_link, split.tpot_s * 1e3,
        split.usd_per_million_tokens, split.colocated_usd_per_million_tokens);
}

std::string case_branch(std::string_view name, const std::string& command) {
    std::string indented;
    for (std::size_t start = 0; start < command.size();) {
        const std::size_t end = command.find('\n', start);
        const std::string line = command.substr(start, end == std::string::npos ? std::string::npos : end - start);
        indented += "    " + line + "\n";
        start = end == std::string::npos ? command.size() : end + 1;
    }
    return fmt::format("  {})\n{}    ;;\n", name, indented);
}

std::vector<Artefact> render_disaggregated(const LaunchSpec& plain_spec) {
    LaunchSpec spec = with_engine_assumptions(plain_spec, Engine::sglang);
    const DisaggregatedPlan& split = *spec.disaggregated;
    spec.assumptions.push_back({"KV transfer backend", "mooncake (SGLang), nixl (Dynamo)",
                                "the plan models the link, not the library; on InfiniBand name the NICs with "
                                "--disaggregation-ib-device"});
    spec.assumptions.push_back({"worker hosts", "prefill-N, decode-N",
                                "the plan does not place workers; replace the router's URLs with their addresses"});
    spec.assumptions.push_back({"memory fraction", "SGLang's default",
                                "the plan sized each phase's batch, not the engine's start-up memory split"});
    const int prefill_workers = split.prefill.workers * split.replicas;
    const int decode_workers = split.decode.workers * split.replicas;
    const std::string usage = "ROLE=${1:?usage: $0 prefill|decode|router}\n";

    std::string sglang = "#!/usr/bin/env bash\n" + header_comment(spec, "sglang") + pd_plan_comment(split);
    sglang += fmt::format(
        "# Run `$0 prefill` on {} worker{} and `$0 decode` on {}, each on its own GPUs (CUDA_VISIBLE_DEVICES) "
        "or node, then `$0 router`.\n",
        prefill_workers, prefill_workers == 1 ? "" : "s", decode_workers);
    sglang += "set -euo pipefail\n" + usage + "case \"$ROLE\" in\n";
    sglang += case_branch("prefill",
                          "exec " + render_shell_command(pd_worker_command(spec, split.prefill, "prefill", false)));
    sglang +=
        case_branch("decode", "exec " + render_shell_command(pd_worker_command(spec, split.decode, "decode", false)));
    CommandLine router;
    router.program = {"python3", "-m", "sglang_router.launch_router"};
    router.add_flag("--pd-disaggregation");
    for (int i = 0; i < prefill_workers; ++i) {
        router.add("--prefill", fmt::format("http://prefill-{}:{}", i, worker_port));
    }
    for (int i = 0; i < decode_workers; ++i) {
        router.add("--decode", fmt::format("http://decode-{}:{}", i, worker_port));
    }
    router.add("--host", "0.0.0.0");
    router.add("--port", "8000");
    sglang += case_branch("router", "exec " + render_shell_command(router));
    sglang += "  *)\n    echo \"usage: $0 prefill|decode|router\" >&2\n    exit 2\n    ;;\nesac\n";

    std::string dynamo = "#!/usr/bin/env bash\n" + header_comment(spec, "sglang") + pd_plan_comment(split);
    dynamo += fmt::format(
        "# NVIDIA Dynamo: start etcd and NATS (Dynamo's deploy/docker-compose.yml), then `$0 frontend` once, "
        "`$0 prefill` on {} worker{} and `$0 decode` on {}; workers register with the frontend themselves.\n",
        prefill_workers, prefill_workers == 1 ? "" : "s", decode_workers);
    dynamo += "set -euo pipefail\n" + usage.substr(0, usage.find("router")) + "frontend}\n" + "case \"$ROLE\" in\n";
    CommandLine frontend;
    frontend.program = {"python3", "-m", "dynamo.frontend"};
    dynamo += case_branch("frontend", "DYN_HTTP_PORT=8000 exec " + render_shell_command(frontend));
    dynamo +=
        case_branch("prefill", "exec " + render_shell_command(pd_worker_command(spec, split.prefill, "prefill", true)));
    dynamo +=
        case_branch("decode", "exec " + render_shell_command(pd_worker_command(spec, split.decode, "decode", true)));
    dynamo += "  *)\n    echo \"usage: $0 prefill|decode|frontend\" >&2\n    exit 2\n    ;;\nesac\n";
    return {{fmt::format("{}.sglang.sh", resource_name(spec)), sglang},
            {fmt::format("{}.dynamo.sh", resource_name(spec)), dynamo}};
}

}  // namespace

std::vector<Artefact> render_serving(DeployTarget target, const LaunchSpec& plain_spec) {
    if (target == DeployTarget::sglang && plain_spec.disaggregated) {
        return render_disaggregated(plain_spec);
    }
    const Engine engine = engine_of(target);
    const LaunchSpec spec = with_engine_assumptions(plain_spec, engine);
    std::string text = "#!/usr/bin/env bash\n";
    text += header_comment(spec, to_string(target));
    text += fmt::format(
        "# One replica of {} GPU{} per command; run it {} time{}, each on its own GPUs "
        "(CUDA_VISIBLE_DEVICES) or node, behind one load balancer.\n",
        spec.gpus_per_replica, spec.gpus_per_replica == 1 ? "" : "s", spec.replicas, spec.replicas == 1 ? "" : "s");
    if (spec.multi_node) {
        text += fmt::format(
            "# A replica spans {} nodes: the engine needs its multi-node set-up (a Ray cluster for "
            "vLLM) across them first.\n",
            spec.nodes);
    }
    text += "set -euo pipefail\n";
    text += "exec " + render_shell_command(serving_command(spec, engine));
    return {{fmt::format("{}.{}.sh", resource_name(spec), to_string(target)), text}};
}

}  // namespace gpusel::deploy_detail
