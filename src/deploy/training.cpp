// Training launchers: torchrun, the DeepSpeed launcher and Megatron-LM, with the layout, ZeRO
// stage, micro-batch, gradient accumulation, recompute and precision the estimate assumed.
// Flags and keys as documented (docs/deploy.md cites each):
//   torchrun (torch.distributed.run): --nnodes, --nproc-per-node, --standalone, --node-rank,
//     --master-addr, --master-port, --rdzv-backend, --rdzv-endpoint, --rdzv-id;
//   DeepSpeed launcher: --num_nodes, --num_gpus, --hostfile, --master_addr, --master_port;
//   DeepSpeed configuration JSON: train_batch_size, train_micro_batch_size_per_gpu,
//     gradient_accumulation_steps, bf16/fp16 enabled, zero_optimization stage, offload_optimizer,
//     offload_param;
//   Hugging Face TrainingArguments: --deepspeed, --per_device_train_batch_size,
//     --gradient_accumulation_steps, --bf16, --fp16, --gradient_checkpointing;
//   Megatron-LM arguments: --tensor-model-parallel-size, --pipeline-model-parallel-size,
//     --context-parallel-size, --num-layers-per-virtual-pipeline-stage,
//     --num-virtual-stages-per-pipeline-rank, --account-for-embedding-in-pipeline-split,
//     --account-for-loss-in-pipeline-split, --micro-batch-size, --global-batch-size, --seq-length,
//     --recompute-granularity,
//     --recompute-method, --recompute-num-layers, --bf16, --fp8-format, --use-distributed-optimizer.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "deploy/launch_text.hpp"

namespace gpusel::deploy_detail {

namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

constexpr const char* master_port = "29500";

// The standalone torchrun target: one node needs no rendezvous; several meet at $MASTER_ADDR.
Options torchrun_rendezvous(const LaunchSpec& spec) {
    Options options = {{"--nnodes", std::to_string(spec.nodes)},
                       {"--nproc-per-node", std::to_string(spec.gpus_per_node)}};
    if (spec.multi_node) {
        options.emplace_back("--rdzv-backend", "c10d");
        options.emplace_back("--rdzv-endpoint", fmt::format("$MASTER_ADDR:{}", master_port));
        options.emplace_back("--rdzv-id", resource_name(spec));
    } else {
        options.emplace_back("--standalone", "");
    }
    return options;
}

CommandLine under_torchrun(const Options& torchrun, std::string script) {
    CommandLine command;
    command.program = {"torchrun"};
    command.options = torchrun;
    command.options.emplace_back(std::move(script), "");
    return command;
}

void add_megatron_model(CommandLine& command, const ModelSpec& model, int seq_len) {
    command.add("--num-layers", std::to_string(model.layers));
    command.add("--hidden-size", std::to_string(model.hidden));
    if (model.ffn > 0) {
        command.add("--ffn-hidden-size", std::to_string(model.ffn));
    }
    command.add("--num-attention-heads", std::to_string(model.heads));
    if (model.kv_heads > 0 && model.kv_heads < model.heads) {
        command.add_flag("--group-query-attention");
        command.add("--num-query-groups", std::to_string(model.kv_heads));
    }
    if (model.ffn_gated) {
        // Gated-FFN decoders in gpusel's presets (Llama, Mistral, Qwen) use rotary positions,
        // RMSNorm and linear layers without biases; Megatron-LM's defaults are GPT-2's.
        command.add_flag("--swiglu");
        command.add("--position-embedding-type", "rope");
        command.add("--normalization", "RMSNorm");
        command.add_flag("--disable-bias-linear");
    }
    if (!model.tied_embeddings) {
        command.add_flag("--untie-embeddings-and-output-weights");
    }
    if (model.is_moe()) {
        command.add("--num-experts", std::to_string(model.experts));
        command.add("--moe-router-topk", std::to_string(model.top_k));
    }
    command.add("--seq-length", std::to_string(seq_len));
    command.add("--max-position-embeddings", std::to_string(std::max(seq_len, model.max_context)));
}

void add_megatron_numerics(CommandLine& command, const LaunchSpec& spec) {
    command.add_flag(spec.precision == Precision::fp16 ? "--fp16" : "--bf16");
    if (spec.precision == Precision::fp8) {
        // Transformer Engine's hybrid recipe: E4M3 forward, E5M2 gradients.
        command.add("--fp8-format", "hybrid");
    }
    if (spec.checkpointing == Checkpointing::selective) {
        command.add("--recompute-granularity", "selective");
    } else if (spec.checkpointing == Checkpointing::full) {
        command.add("--recompute-granularity", "full");
        command.add("--recompute-method", "uniform");
        command.add("--recompute-num-layers", "1");
    }
    if (spec.layout.sharding == Sharding::zero1 || spec.layout.sharding == Sharding::zero2) {
        command.add_flag("--use-distributed-optimizer");
    } else if (spec.layout.sharding == Sharding::zero3) {
        command.add_flag("--use-torch-fsdp2");
    }
}

// What the Hugging Face Trainer script starts from, in the flags of the Transformers example
// scripts' ModelArguments (run_clm.py): a fine-tune loads the published weights
// (--model_name_or_path); pre-training builds the model from its configuration alone
// (--config_name), with random weights.
void add_model_source(CommandLine& command, const LaunchSpec& spec) {
    command.add(spec.fine_tuning ? "--model_name_or_path" : "--config_name", spec.model);
}

// The TrainingArguments of train.py, as the estimate ran: batch, accumulation, precision,
// recompute, and the DataLoader workers its input pipeline assumed (Trainer's default is 0:
// loading in the training process itself).
void add_trainer_arguments(CommandLine& command, const LaunchSpec& spec, const std::string& config_path) {
    add_model_source(command, spec);
    command.add("--deepspeed", config_path);
    command.add("--per_device_train_batch_size", std::to_string(spec.micro_batch));
    command.add("--gradient_accumulation_steps", std::to_string(spec.gradient_accumulation));
    command.add_flag(spec.precision == Precision::fp16 ? "--fp16" : "--bf16");
    if (spec.checkpointing == Checkpointing::full) {
        command.add_flag("--gradient_checkpointing");
    }
    if (spec.loader_workers > 0) {
        command.add("--dataloader_num_workers", std::to_string(spec.loader_workers));
    }
}

CommandLine launcher_command(const LaunchSpec& spec, const std::string& config_path) {
    CommandLine command;
    command.program = {"deepspeed"};
    command.add("--num_nodes", std::to_string(spec.nodes));
    command.add("--num_gpus", std::to_string(spec.gpus_per_node));
    if (spec.multi_node) {
        // The launcher runs once and starts every node over ssh (pdsh); the first host of the
        // hostfile is the master unless --master_addr says otherwise.
        command.add("--hostfile", "hostfile");
        command.add("--master_port", master_port);
    }
    command.add_flag("train.py");
    add_trainer_arguments(command, spec, config_path);
    return command;
}

// How the interleaved schedule's model chunks split the layers, Megatron-LM's three ways: evenly
// (layers per chunk, the flag older and current Megatron-LM both read); evenly once the input
// embedding and the loss count as a layer each (NeMo and Megatron-Bridge large-model recipes set
// both: Llama 3.1 405B's 126 + 2 layers in 8 stages × 8 chunks); otherwise unevenly, which the
// user must spell out.
enum class ChunkSplit { even, with_embedding_and_loss, uneven };

ChunkSplit chunk_split(const LaunchSpec& spec) {
    const int chunks = spec.layout.pipeline_parallel * spec.virtual_stages;
    if (spec.architecture.layers % chunks == 0) {
        return ChunkSplit::even;
    }
    return (spec.architecture.layers + 2) % chunks == 0 ? ChunkSplit::with_embedding_and_loss : ChunkSplit::uneven;
}

void add_megatron_virtual_stages(CommandLine& command, const LaunchSpec& spec) {
    if (spec.virtual_stages <= 1) {
        return;
    }
    const ChunkSplit split = chunk_split(spec);
    if (split == ChunkSplit::even) {
        command.add("--num-layers-per-virtual-pipeline-stage",
                    std::to_string(spec.architecture.layers / (spec.layout.pipeline_parallel * spec.virtual_stages)));
        return;
    }
    command.add("--num-virtual-stages-per-pipeline-rank", std::to_string(spec.virtual_stages));
    if (split == ChunkSplit::with_embedding_and_loss) {
        command.add_flag("--account-for-embedding-in-pipeline-split");
        command.add_flag("--account-for-loss-in-pipeline-split");
    }
}

std::string launch_script(const LaunchSpec& spec, std::string_view target, const CommandLine& command) {
    std::string text = "#!/usr/bin/env bash\n" + header_comment(spec, target);
    if (spec.multi_node && target == "deepspeed") {
        text += fmt::format(
            "# Run once, on the first node: the launcher starts all {} nodes listed in ./hostfile (one line "
            "per node: HOST slots={}), over passwordless ssh.\n",
            spec.nodes, spec.gpus_per_node);
    } else if (spec.multi_node) {
        text += fmt::format("# Run on each of the {} nodes with MASTER_ADDR set to the first node's address.\n",
                            spec.nodes);
    }
    text += "set -euo pipefail\n";
    for (const auto& [name, value] : nccl_environment(spec)) {
        text += fmt::format("export {}={}\n", name, shell_quote(value));
    }
    return text + "exec " + render_shell_command(command);
}

}  // namespace

LaunchSpec with_training_assumptions(LaunchSpec spec, bool megatron) {
    if (megatron) {
        spec.assumptions.push_back({"data and tokenizer", "$DATA_PATH, the model's tokenizer",
                                    "the plan does not know the dataset's location; set DATA_PATH"});
        spec.assumptions.push_back({"learning rate", "$LR", "not part of the plan; set LR"});
        if (spec.fine_tuning) {
            spec.assumptions.push_back({"base checkpoint", "$CHECKPOINT_PATH",
                                        "a full fine-tune starts from the model's weights in Megatron-LM's checkpoint "
                                        "format: convert them (Megatron-LM tools/checkpoint) and set CHECKPOINT_PATH"});
        }
        spec.assumptions.push_back({"checkpoints", "$SAVE_PATH", "where the run saves; set SAVE_PATH"});
        if (spec.layout.sharding == Sharding::zero3) {
            spec.assumptions.push_back(
                {"ZeRO-3", "--use-torch-fsdp2", "Megatron-LM shards parameters through PyTorch FSDP2"});
        }
        if (spec.virtual_stages > 1 && chunk_split(spec) == ChunkSplit::uneven) {
            spec.assumptions.push_back(
                {"interleaved pipeline", fmt::format("{} model chunks per stage", spec.virtual_stages),
                 fmt::format("{} layers do not split evenly into {} stages × {} chunks; give Megatron-LM the uneven "
                             "split (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers)",
                             spec.architecture.layers, spec.layout.pipeline_parallel, spec.virtual_stages)});
        }
        return spec;
    }
    spec.assumptions.push_back(
        {"training script", "train.py", "a Hugging Face Trainer script (TrainingArguments flags); replace with yours"});
    if (spec.layout.tensor_parallel > 1 || spec.layout.pipeline_parallel > 1) {
        const int world = std::max(1, spec.gpus);
        const int planned = spec.global_batch;
        const DataParallelBatch batch = data_parallel_batch(spec);
        spec.gradient_accumulation = batch.gradient_accumulation;
        spec.global_batch = batch.global_batch;
        spec.assumptions.push_back(
            {"layout", describe(spec.layout),
             fmt::format("DeepSpeed's JSON does not split the model by tensor or pipeline: the launch runs all {} "
                         "GPUs data parallel, {} accumulation step{} for a global batch of {}{}; the memory estimate "
                         "holds for this layout only with --target megatron",
                         world, spec.gradient_accumulation, spec.gradient_accumulation == 1 ? "" : "s",
                         spec.global_batch,
                         spec.global_batch == planned ? "" : fmt::format(" (the plan's: {})", planned))});
    }
    if (spec.checkpointing == Checkpointing::selective) {
        spec.assumptions.push_back({"recompute", "selective",
                                    "attention recomputed in backward: the script must do it (FlashAttention "
                                    "does); --gradient_checkpointing would recompute whole layers"});
    }
    if (spec.precision == Precision::fp8) {
        spec.assumptions.push_back({"precision", "fp8",
                                    "the DeepSpeed config says bf16; FP8 matmuls need Transformer Engine layers "
                                    "in the script"});
    }
    if (spec.lora_rank > 0) {
        spec.assumptions.push_back({"LoRA", fmt::format("rank {} on {}", spec.lora_rank, spec.lora_targets),
                                    "the script must wrap the model with these adapters (PEFT LoraConfig r and "
                                    "target_modules)"});
    }
    return spec;
}

DataParallelBatch data_parallel_batch(const LaunchSpec& spec) {
    if (spec.layout.tensor_parallel * spec.layout.pipeline_parallel <= 1) {
        return {spec.gradient_accumulation, spec.global_batch};
    }
    const int per_pass = std::max(1, spec.micro_batch) * std::max(1, spec.gpus);
    const int accumulation =
        std::max(1, static_cast<int>(std::lround(static_cast<double>(spec.global_batch) / per_pass)));
    return {accumulation, per_pass * accumulation};
}

bool uses_megatron(const LaunchSpec& spec) {
    // A LoRA fine-tune stays on the PEFT script whatever its layout (Megatron's pretrain_gpt.py
    // would train every weight); the layout assumption says what that launch runs instead.
    return spec.lora_rank == 0 &&
           (spec.layout.tensor_parallel > 1 || spec.layout.pipeline_parallel > 1 || spec.context_parallel > 1);
}

CommandLine megatron_command(const LaunchSpec& spec, const Options& torchrun) {
    CommandLine command = under_torchrun(torchrun, "pretrain_gpt.py");
    command.add("--tensor-model-parallel-size", std::to_string(spec.layout.tensor_parallel));
    command.add("--pipeline-model-parallel-size", std::to_string(spec.layout.pipeline_parallel));
    if (spec.context_parallel > 1) {
        // Megatron derives data parallel as world / (tp · pp · cp): the plan's dp includes cp.
        command.add("--context-parallel-size", std::to_string(spec.context_parallel));
    }
    add_megatron_virtual_stages(command, spec);
    if (spec.architecture.is_moe() && spec.layout.expert_parallel > 1) {
        command.add("--expert-model-parallel-size", std::to_string(spec.layout.expert_parallel));
    }
    add_megatron_model(command, spec.architecture, spec.seq_len);
    command.add("--micro-batch-size", std::to_string(spec.micro_batch));
    command.add("--global-batch-size", std::to_string(spec.global_batch));
    add_megatron_numerics(command, spec);
    if (spec.train_iterations > 0) {
        command.add("--train-iters", std::to_string(spec.train_iterations));
    }
    if (spec.fine_tuning) {
        // Megatron-LM's fine-tuning start: --load reads the base checkpoint's weights and
        // --finetune resets the iteration count and skips its optimizer and RNG state.
        command.add("--load", "$CHECKPOINT_PATH");
        command.add_flag("--finetune");
    }
    command.add("--save", "$SAVE_PATH");
    command.add("--lr", "$LR");
    command.add("--data-path", "$DATA_PATH");
    command.add("--tokenizer-type", "HuggingFaceTokenizer");
    command.add("--tokenizer-model", spec.model);
    return command;
}

CommandLine deepspeed_torchrun_command(const LaunchSpec& spec, const Options& torchrun,
                                       const std::string& config_path) {
    CommandLine command = under_torchrun(torchrun, "train.py");
    add_trainer_arguments(command, spec, config_path);
    return command;
}

std::string deepspeed_config_json(const LaunchSpec& spec) {
    nlohmann::ordered_json config;
    config["train_batch_size"] = spec.global_batch;
    config["train_micro_batch_size_per_gpu"] = spec.micro_batch;
    config["gradient_accumulation_steps"] = spec.gradient_accumulation;
    const bool fp16 = spec.precision == Precision::fp16;
    config["bf16"] = {{"enabled", !fp16}};
    config["fp16"] = {{"enabled", fp16}};
    nlohmann::ordered_json zero;
    switch (spec.layout.sharding) {
        case Sharding::zero1:
            zero["stage"] = 1;
            break;
        case Sharding::zero2:
            zero["stage"] = 2;
            break;
        case Sharding::zero3:
            zero["stage"] = 3;
            break;
        default:
            zero["stage"] = 0;
            break;
    }
    if (spec.layout.offload != Offload::none) {
        zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    }
    if (spec.layout.offload == Offload::optimizer_and_params) {
        zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
    }
    config["zero_optimization"] = zero;
    return config.dump(2) + "\n";
}

std::vector<Artefact> render_training(DeployTarget target, const LaunchSpec& plain_spec) {
    const std::string name = resource_name(plain_spec);
    const bool megatron =
        target == DeployTarget::megatron || (target == DeployTarget::torchrun && uses_megatron(plain_spec));
    const LaunchSpec spec = with_training_assumptions(plain_spec, megatron);
    const std::string config_name = name + ".ds_config.json";
    if (megatron) {
        return {{fmt::format("{}.{}.sh", name, to_string(target)),
                 launch_script(spec, to_string(target), megatron_command(spec, torchrun_rendezvous(spec)))}};
    }
    const CommandLine command = target == DeployTarget::deepspeed
                                    ? launcher_command(spec, config_name)
                                    : deepspeed_torchrun_command(spec, torchrun_rendezvous(spec), config_name);
    return {{fmt::format("{}.{}.sh", name, to_string(target)), launch_script(spec, to_string(target), command)},
            {config_name, deepspeed_config_json(spec)}};
}

}  // namespace gpusel::deploy_detail
