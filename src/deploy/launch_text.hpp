#pragma once
// Pieces the deploy renderers share (deploy module only): command lines as words, shell and
// YAML quoting, the opening comment, the NCCL environment and the DeepSpeed configuration.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deploy/deploy.hpp"

namespace gpusel::deploy_detail {

// A command: the program words (e.g. "vllm", "serve", MODEL), then options in order; an option
// with an empty value is a bare flag.
struct CommandLine {
    std::vector<std::string> program;
    std::vector<std::pair<std::string, std::string>> options;

    void add(std::string flag, std::string value) { options.emplace_back(std::move(flag), std::move(value)); }
    void add_flag(std::string flag) { options.emplace_back(std::move(flag), std::string()); }
    std::vector<std::string> words() const;
};

// `word` as one shell word: unchanged when it holds only characters no shell treats specially
// (and `$VAR` references when `allow_variables`), else in single quotes.
std::string shell_quote(std::string_view word, bool allow_variables = false);

// The command over several lines, one option per line, `indent` before each continuation.
// Words that start with "$" are written in double quotes (expanded by the shell).
std::string render_shell_command(const CommandLine& command, std::string_view indent = "  ");

// A YAML scalar: plain when it cannot be read as anything but a string, else double-quoted.
std::string yaml_string(std::string_view text);

// The opening comment of every artefact, each line prefixed by `prefix` ("# "): which plan, role,
// pick, memory per GPU, expected speed, gpusel version, and the assumptions.
std::string header_comment(const LaunchSpec& spec, std::string_view target, std::string_view prefix = "# ");

// Environment for NCCL on the plan's interconnect (NCCL environment variables, NVIDIA NCCL user
// guide): empty on one node.
std::vector<std::pair<std::string, std::string>> nccl_environment(const LaunchSpec& spec);

// The --quantization value that loads `weights` on `engine` and runs the plan's compute
// `precision`: the weight format's method; for 16-bit weights at fp8 compute, fp8 on vLLM and
// SGLang (both quantize a 16-bit checkpoint to FP8 as it loads, W8A8); empty when none is needed
// (16-bit weights and compute) or no flag does it (GGUF formats; nf4 and fp8-at-load on
// TensorRT-LLM, whose checkpoint is quantized before the engine is built).
std::string quantization_flag_value(WeightFormat weights, Precision precision, Engine engine);

// The batch of a data-parallel-only launch (DeepSpeed JSON, HF Trainer flags) of `spec`: without a
// model-parallel unit DeepSpeed makes every GPU a data-parallel rank and asserts train_batch_size
// == micro-batch × accumulation × world size (deepspeed/runtime/config.py, _batch_assertion).
// The plan's own batch when its layout splits nothing; otherwise the accumulation over all GPUs
// that keeps the plan's global batch where it divides, else the nearest batch that multiplies out.
struct DataParallelBatch {
    int gradient_accumulation = 1;
    int global_batch = 1;
};
DataParallelBatch data_parallel_batch(const LaunchSpec& spec);

// The serving command of `engine` for one replica (vllm serve, sglang.launch_server, trtllm-serve).
CommandLine serving_command(const LaunchSpec& spec, Engine engine);

// The training command each node runs: Megatron-LM's pretrain_gpt.py when the plan splits the
// model (tensor or pipeline parallel > 1), else the user's train.py with a DeepSpeed config, both
// under torchrun with `rendezvous` options (static or c10d).
bool uses_megatron(const LaunchSpec& spec);
CommandLine megatron_command(const LaunchSpec& spec, const std::vector<std::pair<std::string, std::string>>& torchrun);
CommandLine deepspeed_torchrun_command(const LaunchSpec& spec,
                                       const std::vector<std::pair<std::string, std::string>>& torchrun,
                                       const std::string& config_path);

// What a training launch needs that the plan does not say (train.py or Megatron-LM's data and
// learning rate, LoRA, selective recompute, fp8), added to spec.assumptions.
LaunchSpec with_training_assumptions(LaunchSpec spec, bool megatron);

// The DeepSpeed configuration JSON (DeepSpeed "Configuration JSON" keys).
std::string deepspeed_config_json(const LaunchSpec& spec);

// The name jobs and resources get: "<workload>-<role>", lower-case, [a-z0-9-] (an RFC 1123 label).
std::string resource_name(const LaunchSpec& spec);

// What a scheduler target runs to serve: the plan's paged engine (vLLM when the plan modelled
// none) for decoder LLMs; NVIDIA Triton Inference Server with a model repository otherwise.
struct ServingProcess {
    CommandLine command;
    std::string container;    // container name
    std::string image;        // an assumption the caller prints
    std::string health_path;  // HTTP readiness endpoint on port 8000
};
ServingProcess scheduled_serving(const LaunchSpec& spec);

// Renderers, one per family (serving.cpp, training.cpp, kubernetes.cpp, slurm.cpp).
std::vector<Artefact> render_serving(DeployTarget target, const LaunchSpec& spec);
std::vector<Artefact> render_training(DeployTarget target, const LaunchSpec& spec);
std::vector<Artefact> render_kubernetes(const LaunchSpec& spec);
std::vector<Artefact> render_slurm(const LaunchSpec& spec);

}  // namespace gpusel::deploy_detail
