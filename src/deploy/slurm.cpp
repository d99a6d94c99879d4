// Slurm batch scripts. sbatch options as Slurm documents them: --job-name, --nodes,
// --ntasks-per-node, --gpus-per-node, --exclusive, --array; the first node's name from
// `scontrol show hostnames "$SLURM_JOB_NODELIST"`; one torchrun per node started by srun, meeting
// through torchrun's c10d rendezvous on that node.

#include <utility>

#include <fmt/format.h>

#include "deploy/launch_text.hpp"

namespace gpusel::deploy_detail {

namespace {

std::string sbatch_lines(const LaunchSpec& spec) {
    std::string text = fmt::format("#SBATCH --job-name={}\n", resource_name(spec));
    if (!spec.training && spec.replicas > 1) {
        // One array task per replica; each serves on its own node(s).
        text += fmt::format("#SBATCH --array=0-{}\n", spec.replicas - 1);
    }
    text += fmt::format("#SBATCH --nodes={}\n", spec.nodes);
    text += "#SBATCH --ntasks-per-node=1\n";
    text += fmt::format("#SBATCH --gpus-per-node={}\n", spec.gpus_per_node);
    if (spec.training) {
        text += "#SBATCH --exclusive\n";
    }
    return text;
}

std::string training_body(const LaunchSpec& spec) {
    std::string text;
    text += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\nexport MASTER_ADDR\n";
    const std::vector<std::pair<std::string, std::string>> torchrun = {
        {"--nnodes", "$SLURM_NNODES"},  {"--nproc-per-node", std::to_string(spec.gpus_per_node)},
        {"--rdzv-backend", "c10d"},     {"--rdzv-endpoint", "$MASTER_ADDR:29500"},
        {"--rdzv-id", "$SLURM_JOB_ID"},
    };
    if (uses_megatron(spec)) {
        text += ": \"${DATA_PATH:?set DATA_PATH to the dataset prefix}\"\n: \"${LR:?set LR to the learning rate}\"\n";
        CommandLine command = megatron_command(spec, torchrun);
        command.program.insert(command.program.begin(), "srun");
        return text + render_shell_command(command);
    }
    const std::string config = resource_name(spec) + ".ds_config.json";
    text += fmt::format("cat > {} <<'JSON'\n{}JSON\n", config, deepspeed_config_json(spec));
    CommandLine command = deepspeed_torchrun_command(spec, torchrun, config);
    command.program.insert(command.program.begin(), "srun");
    return text + render_shell_command(command);
}

LaunchSpec with_slurm_assumptions(LaunchSpec spec) {
    spec.assumptions.push_back({"GPU type", spec.gpu,
                                "sbatch asks for --gpus-per-node without a type; add your site's GRES type "
                                "(--gpus-per-node=TYPE:N) or a --constraint that selects this GPU"});
    if (!spec.training && !spec.decoder_llm) {
        spec.assumptions.push_back({"server", "Triton Inference Server, model repository /models",
                                    "the plan sizes the model, not its server; point it at your model repository"});
    }
    if (!spec.training && !spec.decoder_llm) {
        spec.assumptions.push_back({"server", "Triton Inference Server, model repository /models",
                                    "the plan sizes the model, not its server; point it at your model repository"});
    }
    if (spec.training) {
        const bool megatron = uses_megatron(spec);
        spec = with_training_assumptions(std::move(spec), megatron);
    }
    return spec;
}

}  // namespace

std::vector<Artefact> render_slurm(const LaunchSpec& plain_spec) {
    const LaunchSpec spec = with_slurm_assumptions(plain_spec);
    std::string text = "#!/bin/bash\n" + header_comment(spec, "slurm") + sbatch_lines(spec);
    text += "set -euo pipefail\n";
    for (const auto& [name, value] : nccl_environment(spec)) {
        text += fmt::format("export {}={}\n", name, shell_quote(value));
    }
    if (spec.training) {
        text += training_body(spec);
    } else {
        CommandLine command = scheduled_serving(spec).command;
        command.program.insert(command.program.begin(), "srun");
        if (spec.replicas > 1) {
            // Array tasks may share a node: each replica listens on 8000 + its task id.
            text += "# Each array task serves one replica, on port 8000 + SLURM_ARRAY_TASK_ID.\n";
            for (auto& [flag, value] : command.options) {
                if (flag == "--port" || flag == "--http-port") {
                    value = "$((8000 + SLURM_ARRAY_TASK_ID))";
                }
            }
        }
        text += render_shell_command(command);
    }
    return {{resource_name(spec) + ".slurm.sh", text}};
}

}  // namespace gpusel::deploy_detail
