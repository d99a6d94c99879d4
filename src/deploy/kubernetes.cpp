// Kubernetes manifests: a Deployment and Service for serving, a Job (an Indexed Job with a
// headless Service when the job spans nodes) for training. Fields as the Kubernetes API reference
// documents them (apps/v1 Deployment, batch/v1 Job, core/v1 Service and ConfigMap); GPUs through
// the device plugin's extended resource in limits (nvidia.com/gpu; amd.com/gpu, habana.ai/gaudi:
// Kubernetes "Schedule GPUs"); NVIDIA nodes chosen by the nvidia.com/gpu.product label GPU
// feature discovery publishes; shared memory
// as a memory-backed emptyDir on /dev/shm (PyTorch DataLoader workers and NCCL use it).

#include <utility>

#include <fmt/format.h>

#include "deploy/launch_text.hpp"

namespace gpusel::deploy_detail {

namespace {

constexpr const char* master_port = "29500";

std::string labels(const LaunchSpec& spec, std::string_view indent) {
    return fmt::format("{0}app.kubernetes.io/name: {1}\n{0}app.kubernetes.io/component: {2}\n", indent,
                       yaml_string(resource_name(spec)), yaml_string(to_string(spec.role)));
}

std::string metadata(const LaunchSpec& spec, std::string_view name) {
    return fmt::format("metadata:\n  name: {}\n  labels:\n{}  annotations:\n    gpusel/plan: {}\n", yaml_string(name),
                       labels(spec, "    "),
                       yaml_string(fmt::format("{}x {} {}", spec.gpus, spec.gpu, describe(spec.layout))));
}

std::string yaml_list(const std::vector<std::string>& words, std::string_view indent) {
    std::string text;
    for (const std::string& word : words) {
        text += fmt::format("{}- {}\n", indent, yaml_string(word));
    }
    return text;
}

struct Container {
    std::string name;
    std::string image;
    std::vector<std::string> command;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> environment;
    bool serving = false;
    std::string health_path;
    std::vector<std::pair<std::string, std::string>> extra_mounts;  // volume name, mount path
};

// The pod template's spec, at `indent` (the template is nested in a Deployment or a Job).
std::string pod_spec(const LaunchSpec& spec, const Container& container, std::string_view indent,
                     const std::string& extra_pod_fields, const std::string& extra_volumes) {
    const std::string i(indent);
    std::string text = extra_pod_fields;
    if (spec.vendor == "nvidia") {
        text += fmt::format("{0}nodeSelector:\n{0}  nvidia.com/gpu.product: {1}\n", i, yaml_string(spec.node_product));
    }
    text += fmt::format("{0}tolerations:\n{0}  - key: {1}\n{0}    operator: Exists\n{0}    effect: NoSchedule\n", i,
                        spec.gpu_resource);
    text += fmt::format("{0}containers:\n{0}  - name: {1}\n{0}    image: {2}\n", i, yaml_string(container.name),
                        yaml_string(container.image));
    text += fmt::format("{}    command:\n{}", i, yaml_list(container.command, i + "      "));
    if (!container.args.empty()) {
        text += fmt::format("{}    args:\n{}", i, yaml_list(container.args, i + "      "));
    }
    if (!container.environment.empty()) {
        text += i + "    env:\n";
        for (const auto& [name, value] : container.environment) {
            text += fmt::format("{0}      - name: {1}\n{0}        value: {2}\n", i, name, yaml_string(value));
        }
    }
    if (container.serving) {
        text += fmt::format("{0}    ports:\n{0}      - containerPort: 8000\n{0}        name: http\n", i);
        text += fmt::format(
            "{0}    readinessProbe:\n{0}      httpGet:\n{0}        path: {1}\n"
            "{0}        port: 8000\n{0}      periodSeconds: 10\n",
            i, container.health_path);
    }
    const int gpus_per_pod = spec.training ? spec.gpus_per_node : spec.gpus_per_replica;
    text +=
        fmt::format("{0}    resources:\n{0}      limits:\n{0}        {1}: {2}\n", i, spec.gpu_resource, gpus_per_pod);
    text += fmt::format("{0}    volumeMounts:\n{0}      - name: dshm\n{0}        mountPath: /dev/shm\n", i);
    for (const auto& [volume, path] : container.extra_mounts) {
        text += fmt::format("{0}      - name: {1}\n{0}        mountPath: {2}\n", i, volume, yaml_string(path));
    }
    text += fmt::format("{0}volumes:\n{0}  - name: dshm\n{0}    emptyDir:\n{0}      medium: Memory\n", i);
    return text + extra_volumes;
}

std::string serving_manifests(const LaunchSpec& spec) {
    const std::string name = resource_name(spec);
    const ServingProcess process = scheduled_serving(spec);
    Container container;
    container.name = process.container;
    container.image = process.image;
    container.health_path = process.health_path;
    // The program's words as the command, its options as args.
    container.command = process.command.program;
    CommandLine options = process.command;
    options.program.clear();
    container.args = options.words();
    container.environment = nccl_environment(spec);
    container.serving = true;
    std::string text = "apiVersion: apps/v1\nkind: Deployment\n" + metadata(spec, name);
    text +=
        fmt::format("spec:\n  replicas: {}\n  selector:\n    matchLabels:\n{}", spec.replicas, labels(spec, "      "));
    text += "  template:\n    metadata:\n      labels:\n" + labels(spec, "        ") + "    spec:\n";
    text += pod_spec(spec, container, "      ", "", "");
    text += "---\napiVersion: v1\nkind: Service\n" + metadata(spec, name);
    text += "spec:\n  selector:\n" + labels(spec, "    ");
    text += "  ports:\n    - name: http\n      port: 8000\n      targetPort: 8000\n";
    return text;
}

std::string training_manifests(const LaunchSpec& spec) {
    const std::string name = resource_name(spec);
    const bool megatron = uses_megatron(spec);
    std::vector<std::pair<std::string, std::string>> torchrun = {
        {"--nnodes", std::to_string(spec.nodes)}, {"--nproc-per-node", std::to_string(spec.gpus_per_node)}};
    if (spec.multi_node) {
        // Indexed Job pods are <job>-<index>, resolvable as <job>-0.<service> under a headless
        // Service named in the pod's subdomain; JOB_COMPLETION_INDEX is set in every pod
        // (Kubernetes "Jobs", completion mode Indexed).
        torchrun.emplace_back("--node-rank", "$(JOB_COMPLETION_INDEX)");
        torchrun.emplace_back("--master-addr", fmt::format("{0}-0.{0}", name));
        torchrun.emplace_back("--master-port", master_port);
    } else {
        torchrun.emplace_back("--standalone", "");
    }
    const std::string config_path = "/etc/gpusel/ds_config.json";
    const CommandLine command =
        megatron ? megatron_command(spec, torchrun) : deepspeed_torchrun_command(spec, torchrun, config_path);
    Container container;
    container.name = "train";
    container.image = "nvcr.io/nvidia/pytorch:24.12-py3";
    const std::vector<std::string> words = command.words();
    container.command = {words.front()};
    // Kubernetes expands $(NAME) from the container's environment in args; a shell's $NAME it
    // passes on as it is (Kubernetes "Define a Command and Arguments for a Container").
    for (auto word = words.begin() + 1; word != words.end(); ++word) {
        const bool variable = word->size() > 1 && word->front() == '$' && (*word)[1] != '(';
        container.args.push_back(variable ? "$(" + word->substr(1) + ")" : *word);
    }
    container.environment = nccl_environment(spec);
    if (megatron) {
        container.environment.emplace_back("DATA_PATH", "/data/REPLACE-with-your-dataset-prefix");
        container.environment.emplace_back("LR", "REPLACE-with-your-learning-rate");
    }
    std::string text;
    std::string volumes;
    if (!megatron) {
        container.extra_mounts.emplace_back("deepspeed-config", "/etc/gpusel");
        volumes = fmt::format("        - name: deepspeed-config\n          configMap:\n            name: {}\n",
                              yaml_string(name));
        text += "apiVersion: v1\nkind: ConfigMap\n" + metadata(spec, name) + "data:\n  ds_config.json: |\n";
        const std::string json = deepspeed_config_json(spec);
        for (std::size_t start = 0; start < json.size();) {
            const std::size_t end = json.find('\n', start);
            text += "    " + json.substr(start, end - start) + "\n";
            start = end + 1;
        }
        text += "---\n";
    }
    std::string pod_fields = "      restartPolicy: Never\n";
    if (spec.multi_node) {
        pod_fields += fmt::format("      subdomain: {}\n", yaml_string(name));
        text += "apiVersion: v1\nkind: Service\n" + metadata(spec, name);
        text += "spec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n  selector:\n" + labels(spec, "    ");
        text += fmt::format("  ports:\n    - name: rendezvous\n      port: {0}\n      targetPort: {0}\n", master_port);
        text += "---\n";
    }
    text += "apiVersion: batch/v1\nkind: Job\n" + metadata(spec, name);
    text += fmt::format("spec:\n  completions: {0}\n  parallelism: {0}\n", spec.nodes);
    if (spec.multi_node) {
        text += "  completionMode: Indexed\n";
    }
    text += "  backoffLimit: 0\n  template:\n    metadata:\n      labels:\n" + labels(spec, "        ") + "    spec:\n";
    text += pod_spec(spec, container, "      ", pod_fields, volumes);
    return text;
}

LaunchSpec with_kubernetes_assumptions(LaunchSpec spec) {
    if (spec.training) {
        const bool megatron = uses_megatron(spec);
        spec = with_training_assumptions(std::move(spec), megatron);
    }
    if (spec.vendor != "nvidia") {
        spec.assumptions.push_back({"node selection", "none",
                                    fmt::format("GPU feature discovery labels NVIDIA nodes only; select the {} nodes "
                                                "with your cluster's label (the device plugin's {} resource alone "
                                                "lands on any node that has one)",
                                                spec.gpu, spec.gpu_resource)});
        spec.assumptions.push_back({"container image", "an image built for " + spec.vendor,
                                    "the image written is for NVIDIA GPUs (CUDA); use the ROCm or Gaudi build"});
    } else if (!spec.node_product_known) {
        spec.assumptions.push_back(
            {"node label nvidia.com/gpu.product", spec.node_product,
             "derived from the catalog name; GPU feature discovery publishes NVML's device name: check it with "
             "`kubectl get nodes -L nvidia.com/gpu.product` and give it with --node-product"});
    }
    if (spec.training) {
        spec.assumptions.push_back({"container image", "nvcr.io/nvidia/pytorch:24.12-py3",
                                    uses_megatron(spec) ? "it must hold Megatron-LM (pretrain_gpt.py); pin yours"
                                                        : "it must hold train.py; pin yours"});
    } else {
        const ServingProcess process = scheduled_serving(spec);
        spec.assumptions.push_back(
            {"container image", process.image, "pin the version whose memory behaviour you verified"});
        if (!spec.decoder_llm) {
            spec.assumptions.push_back({"server", "Triton Inference Server, model repository /models",
                                        "the plan sizes the model, not its server; mount your model repository"});
        }
        if (spec.multi_node) {
            spec.assumptions.push_back({"replica size",
                                        fmt::format("{} GPUs on {} nodes", spec.gpus_per_replica, spec.nodes),
                                        "one pod cannot span nodes: a multi-node replica needs the engine's "
                                        "multi-node set-up (e.g. LeaderWorkerSet), not generated"});
        }
    }
    spec.assumptions.push_back({"toleration", spec.gpu_resource + ":NoSchedule",
                                "the taint GPU node pools commonly carry; match your cluster's"});
    return spec;
}

}  // namespace

std::vector<Artefact> render_kubernetes(const LaunchSpec& plain_spec) {
    const LaunchSpec spec = with_kubernetes_assumptions(plain_spec);
    std::string text = header_comment(spec, "kubernetes");
    text += spec.training ? training_manifests(spec) : serving_manifests(spec);
    return {{resource_name(spec) + ".kubernetes.yaml", text}};
}

}  // namespace gpusel::deploy_detail
