// Serving engines: the vllm serve, SGLang launch_server and trtllm-serve command lines for one
// replica, with the settings the memory model's start-up arithmetic assumed (memory.hpp,
// ServingMemory). Flags as the engines document them (docs/deploy.md cites each):
//   vLLM engine arguments: --tensor-parallel-size, --pipeline-parallel-size, --dtype,
//     --max-model-len, --max-num-seqs, --max-num-batched-tokens, --gpu-memory-utilization,
//     --block-size, --kv-cache-dtype, --quantization;
//   SGLang server arguments: --model-path, --tp-size, --pp-size, --dtype, --context-length,
//     --max-running-requests, --chunked-prefill-size, --mem-fraction-static, --kv-cache-dtype,
//     --quantization;
//   trtllm-serve: --backend, --tp_size, --pp_size, --max_seq_len, --max_batch_size,
//     --max_num_tokens, --kv_cache_free_gpu_memory_fraction.

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

std::vector<Artefact> render_serving(DeployTarget target, const LaunchSpec& plain_spec) {
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
