// gpusel models list | show NAME

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "inputs/hf_hub.hpp"
#include "report/models_render.hpp"

namespace gpusel::cli {

namespace {

void show_model(Context& context, const std::string& name) {
    const ModelSpec* model = context.models().find(name);
    ModelSpec resolved;
    if (model == nullptr && looks_like_hf_repo_id(name)) {
        try {
            const HfSnapshot snapshot =
                resolve_hf_snapshot(hf_hub_settings_from_environment(context.offline), name, "main");
            resolved = model_from_hf_snapshot(snapshot);
            if (snapshot.downloaded) {
                context.err << fmt::format("gpusel: downloaded {} config.json into {}\n", name,
                                           snapshot.config_file.string());
            }
        } catch (const HfHubError& error) {
            // The command line is right; the model's config cannot be had (not cached, offline,
            // unreadable): an input error, exit 3, as `plan` gives for the same id in a workload.
            throw InputError(Diagnostic{"", {}, "models show", error.what()});
        }
        model = &resolved;
    }
    if (model == nullptr) {
        const std::string suggestion = context.models().suggest(name);
        throw UsageError(fmt::format(
            "unknown model preset '{}'{}", name,
            suggestion.empty() ? "; `gpusel models list` shows them" : ", did you mean '" + suggestion + "'?"));
    }
    render_model_show(*model, context.out);
}

}  // namespace

void register_models(CLI::App& app, Context& context) {
    CLI::App* command = app.add_subcommand("models", "List or show model presets");
    command->require_subcommand(1);
    command->footer(
        "\nExamples:\n  gpusel models list\n  gpusel models show mixtral-8x7b\n  gpusel models show "
        "deepseek-ai/DeepSeek-V3     from the HF cache, else downloaded (HF_HUB_OFFLINE=1: cache only)\n");
    command->add_subcommand("list", "One line per preset: family, parameters, architecture")->callback([&context] {
        render_models_list(context.models().models(), context.out);
    });
    auto name = std::make_shared<std::string>();
    CLI::App* show =
        command->add_subcommand("show", "A preset's or Hugging Face model's architecture, and where it was read");
    show->add_option("name", *name, "Preset name (case-insensitive), or a Hugging Face id ORG/NAME")
        ->required()
        ->type_name("NAME");
    show->callback([&context, name] { show_model(context, *name); });
}

}  // namespace gpusel::cli
