// gpusel deploy FILE --target T [--role R] [-o DIR]: launch artefacts for the plan's pick;
// gpusel deploy FILE --verify LAUNCH: a launch read back and compared with the plan.

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/context.hpp"
#include "deploy/deploy.hpp"
#include "io/output.hpp"
#include "io/yaml.hpp"
#include "plan/plan.hpp"

namespace gpusel::cli {

namespace {

struct DeployFlags {
    std::string file;
    std::string target;
    std::string role;
    std::string output;
    std::string verify;
    std::string node_product;
};

DeployTarget parse_target(const std::string& text) {
    if (const std::optional<DeployTarget> target = parse_deploy_target(text)) {
        return *target;
    }
    const std::vector<std::string> names = deploy_target_names();
    throw UsageError(
        fmt::format("--target: '{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
}

// The roles to launch: --role's, or every role `target` fits (all roles when no target).
std::vector<const RolePlan*> chosen_roles(const PlanReport& report, const std::string& role_name,
                                          std::optional<DeployTarget> target) {
    std::vector<std::string> names;
    for (const RolePlan& role : report.roles) {
        names.emplace_back(to_string(role.role));
    }
    std::vector<const RolePlan*> roles;
    for (const RolePlan& role : report.roles) {
        if (role_name.empty() ? !target || target_mismatch(*target, role.role).empty()
                              : equals_ignore_case(to_string(role.role), role_name)) {
            roles.push_back(&role);
        }
    }
    if (!role_name.empty() && roles.empty()) {
        throw UsageError(fmt::format("--role: '{}' is not a role of {}; its roles: {}{}", role_name, report.project,
                                     fmt::join(names, ", "), did_you_mean(role_name, names)));
    }
    if (roles.empty()) {
        throw UsageError(
            fmt::format("--target {}: {}", to_string(*target), target_mismatch(*target, report.roles.front().role)));
    }
    if (target && !role_name.empty()) {
        if (const std::string why = target_mismatch(*target, roles.front()->role); !why.empty()) {
            throw UsageError(fmt::format("--target {}: {}", to_string(*target), why));
        }
    }
    return roles;
}

// False (and exit code 1) when a role has no pick: there is nothing to launch.
bool every_role_has_a_pick(const std::vector<const RolePlan*>& roles, Context& context, const DeployFlags& flags) {
    bool all = true;
    for (const RolePlan* role : roles) {
        if (!role->winner) {
            context.err << fmt::format(
                "gpusel: nothing feasible for role {} ({}): no pick to launch; "
                "gpusel plan {} --show-rejected says why\n",
                to_string(role->role), role->workload.name, flags.file);
            context.exit_code = 1;
            all = false;
        }
    }
    return all;
}

// A Kubernetes label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
void check_label_value(const std::string& value) {
    const auto alphanumeric = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    const bool valid = !value.empty() && value.size() <= 63 && alphanumeric(value.front()) &&
                       alphanumeric(value.back()) && std::all_of(value.begin(), value.end(), [&](char c) {
                           return alphanumeric(c) || c == '-' || c == '_' || c == '.';
                       });
    if (!valid) {
        throw UsageError(
            fmt::format("--node-product: '{}' is not a Kubernetes label value (at most 63 letters, "
                        "digits, '-', '_' or '.', starting and ending with a letter or digit)",
                        printable_text(value)));
    }
}

LaunchSpec spec_for(const PlanReport& report, const RolePlan& role, Context& context, const DeployFlags& flags) {
    LaunchSpec spec = make_launch_spec(report, role, context.catalog(), flags.file);
    if (!flags.node_product.empty()) {
        spec.node_product = flags.node_product;
        spec.node_product_known = true;
    }
    return spec;
}

void verify_launch(const PlanReport& report, const std::vector<const RolePlan*>& roles, Context& context,
                   const DeployFlags& flags) {
    if (roles.size() != 1) {
        std::vector<std::string> names;
        for (const RolePlan* role : roles) {
            names.emplace_back(to_string(role->role));
        }
        throw UsageError(
            fmt::format("--verify: say which role the launch is for with --role ({})", fmt::join(names, ", ")));
    }
    const LaunchSpec spec = spec_for(report, *roles.front(), context, flags);
    const LaunchSettings settings = read_launch_settings(read_input_file(flags.verify), flags.verify);
    const std::vector<std::string> findings = compare_launch(spec, settings);
    std::string text;
    for (const std::string& finding : findings) {
        text += fmt::format("{}: warning: {}\n", flags.verify, finding);
    }
    std::string planned = fmt::format("{}x {}, {}", spec.gpus, spec.gpu, describe(spec.layout));
    if (settings.disaggregated() && spec.disaggregated) {
        const DisaggregatedPlan& split = *spec.disaggregated;
        const auto phase = [](const DisaggregatedPhase& side, std::string_view name) {
            return fmt::format("{} {} × {} tp{}{}", side.workers, name, side.gpu, side.tensor_parallel,
                               side.expert_parallel > 1 ? fmt::format(" ep{}", side.expert_parallel) : "");
        };
        planned = fmt::format("{} + {} per group, {} group{}, {} GPUs", phase(split.prefill, "prefill"),
                              phase(split.decode, "decode"), split.replicas, split.replicas == 1 ? "" : "s",
                              split.prefill.gpus + split.decode.gpus);
    }
    text += fmt::format("{}: {} {} the plan for role {} ({})\n", flags.verify, settings.kind,
                        findings.empty() ? "agrees with" : "contradicts", to_string(spec.role), planned);
    write_output(OutputTarget{}, text, context.out);
    if (!findings.empty()) {
        context.exit_code = 1;
    }
}

void check_directory(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        throw OutputError(fmt::format("-o {}: not a directory (create it first)", path));
    }
}

void run_deploy(const DeployFlags& flags, Context& context) {
    std::optional<DeployTarget> target;
    if (!flags.target.empty()) {
        target = parse_target(flags.target);
    } else if (flags.verify.empty()) {
        throw UsageError("--target is required (one of " + fmt::format("{}", fmt::join(deploy_target_names(), ", ")) +
                         "), or --verify LAUNCH_FILE");
    }
    if (!flags.output.empty() && !flags.verify.empty()) {
        throw UsageError("--verify prints its findings; it writes no files: leave out -o");
    }
    if (!flags.output.empty()) {
        check_directory(flags.output);
    }
    if (!flags.node_product.empty()) {
        check_label_value(flags.node_product);
    }
    const Project project = load_plan_input_file(flags.file, context.load_context());
    const PlanReport report = make_plan(project, context.catalog(), builtin_efficiency());
    const std::vector<const RolePlan*> roles =
        chosen_roles(report, flags.role, flags.verify.empty() ? target : std::nullopt);
    if (!every_role_has_a_pick(roles, context, flags)) {
        return;
    }
    if (!flags.verify.empty()) {
        verify_launch(report, roles, context, flags);
        return;
    }
    std::vector<Artefact> artefacts;
    for (const RolePlan* role : roles) {
        const LaunchSpec spec = spec_for(report, *role, context, flags);
        if (const std::string why = model_mismatch(*target, spec); !why.empty()) {
            throw UsageError(fmt::format("--target {}: {}", to_string(*target), why));
        }
        const std::vector<Artefact> files = render_launch(*target, spec);
        artefacts.insert(artefacts.end(), files.begin(), files.end());
    }
    std::vector<std::string> inputs = files_read_by(project);
    inputs.push_back(flags.file);
    const std::vector<std::string> option_files = context.option_input_files();
    inputs.insert(inputs.end(), option_files.begin(), option_files.end());
    if (flags.output.empty()) {
        std::string text;
        for (const Artefact& artefact : artefacts) {
            text += artefacts.size() > 1 ? fmt::format("==> {} <==\n{}", artefact.name, artefact.content)
                                         : artefact.content;
        }
        write_output(OutputTarget{}, text, context.out);
        return;
    }
    OutputBatch batch(context.out);
    for (const Artefact& artefact : artefacts) {
        OutputTarget file{flags.output + "/" + artefact.name, context.force, inputs};
        check_output_target(file);
        batch.add(file, artefact.content);
    }
    batch.commit();
    if (!context.quiet) {
        for (const Artefact& artefact : artefacts) {
            context.err << fmt::format("gpusel: wrote {}/{}\n", flags.output, artefact.name);
        }
    }
}

}  // namespace

void register_deploy(CLI::App& app, Context& context) {
    auto flags = std::make_shared<DeployFlags>();
    CLI::App* command = app.add_subcommand(
        "deploy", "Launch files for the plan's pick: serving engine or training commands, Kubernetes, Slurm");
    command->add_option("file", flags->file, "Workload or project file ('-' reads standard input)")
        ->required()
        ->type_name("FILE");
    command
        ->add_option("--target", flags->target,
                     "vllm, sglang, tensorrt-llm (inference roles); torchrun, megatron, deepspeed (training "
                     "roles); kubernetes, slurm (any role)")
        ->type_name("T");
    command->add_option("--role", flags->role, "Only this role of a project (development, training, inference)")
        ->type_name("R");
    command
        ->add_option("-o,--output", flags->output,
                     "Write each file into DIR (an existing directory; --force to replace files); "
                     "default: standard output")
        ->type_name("DIR");
    command
        ->add_option("--verify", flags->verify,
                     "Read a launch back (a file with a vllm serve / sglang / trtllm-serve / torchrun command, a "
                     "prefill/decode launch of SGLang or Dynamo workers, or a Kubernetes manifest) and list where it "
                     "contradicts the plan; exit 1 when it does")
        ->type_name("LAUNCH_FILE");
    command
        ->add_option("--node-product", flags->node_product,
                     "Kubernetes: the nvidia.com/gpu.product label value of your GPU nodes (default: from the "
                     "catalog, printed as an assumption when not known)")
        ->type_name("VALUE");
    command->footer(
        "\nExamples:\n"
        "  gpusel deploy examples/chat-llama2-13b-int4.yaml --target vllm            vllm serve command\n"
        "  gpusel deploy examples/smart-support.yaml --role training --target slurm  sbatch script\n"
        "  gpusel deploy examples/llama3-70b-finetune.yaml --target kubernetes -o k8s/\n"
        "  gpusel deploy examples/pretrain-7b.yaml --target megatron\n"
        "  gpusel deploy examples/chat-llama2-13b-int4.yaml --verify serve.sh     (after editing it)\n"
        "\nEvery file opens with a comment naming the plan, the pick, memory per GPU, expected speed and the\n"
        "assumptions made for what the plan does not know (image, script, dataset). The settings are the\n"
        "ones the estimate assumed (tensor/pipeline/expert parallel, memory fraction, max model length, max\n"
        "sequences, KV-cache dtype, quantization, ZeRO, micro-batch, recompute). docs/deploy.md lists each\n"
        "flag with the tool's documentation. --verify exits 0 when the launch agrees, 1 when it contradicts.");
    command->callback([flags, &context] { run_deploy(*flags, context); });
}

}  // namespace gpusel::cli
