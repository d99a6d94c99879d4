// gpusel models list | show NAME

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/format.hpp"
#include "cli/context.hpp"
#include "inputs/hf_hub.hpp"
#include "report/text_table.hpp"

namespace gpusel::cli {

namespace {

std::string number_or_dash(int value) {
    return value > 0 ? std::to_string(value) : "—";
}

void print_list(Context& context) {
    TextTable table;
    table.add_column("name");
    table.add_column("family");
    table.add_column("params", TextTable::Align::right);
    table.add_column("layers", TextTable::Align::right);
    table.add_column("hidden", TextTable::Align::right);
    table.add_column("heads/kv", TextTable::Align::right);
    table.add_column("ffn", TextTable::Align::right);
    table.add_column("vocab", TextTable::Align::right);
    for (const ModelSpec& model : context.models().models()) {
        std::string params = format_count(model.params);
        if (model.is_moe()) {
            params += " (" + format_count(model.active_params) + " active)";
        }
        table.add_row({model.name, std::string(to_string(model.family)), params, number_or_dash(model.layers),
                       number_or_dash(model.hidden),
                       model.heads > 0 ? fmt::format("{}/{}", model.heads, model.kv_heads) : "—",
                       number_or_dash(model.ffn), number_or_dash(model.vocab)});
    }
    context.out << table.render();
}

void print_show(Context& context, const std::string& name) {
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
            throw UsageError(error.what());
        }
        model = &resolved;
    }
    if (model == nullptr) {
        const std::string suggestion = context.models().suggest(name);
        throw UsageError(fmt::format(
            "unknown model preset '{}'{}", name,
            suggestion.empty() ? "; `gpusel models list` shows them" : ", did you mean '" + suggestion + "'?"));
    }
    std::ostream& out = context.out;
    out << fmt::format("{} — {} model, {} parameters", model->name, to_string(model->family),
                       format_count(model->params));
    if (model->is_moe()) {
        out << fmt::format(" ({} active; {} experts, top-{})", format_count(model->active_params), model->experts,
                           model->top_k);
    }
    out << "\n";
    if (model->is_transformer()) {
        out << fmt::format("  layers {} · hidden {} · heads {} · kv heads {} · head dim {} · ffn {} ({})\n",
                           model->layers, model->hidden, model->heads, model->kv_heads, model->head_dim, model->ffn,
                           model->ffn_gated ? "gated, SwiGLU/GeGLU" : "plain MLP");
        out << fmt::format("  vocab {} · tied embeddings {} · max context {}\n", model->vocab,
                           model->tied_embeddings ? "yes" : "no", number_or_dash(model->max_context));
    }
    if (model->activation_bytes_per_sample > 0 || model->flops_per_sample > 0) {
        out << fmt::format("  per sample at {}: activations {} (fp32), forward {:.1f} GFLOP\n",
                           model->input.empty() ? "the stated input" : model->input,
                           format_gib(model->activation_bytes_per_sample), model->flops_per_sample / 1e9);
    }
    if (model->is_mla()) {
        out << fmt::format(
            "  attention: multi-head latent (MLA), kv_lora_rank {} + qk_rope_head_dim {} cached per layer\n",
            model->kv_lora_rank, model->qk_rope_head_dim);
    }
    if (model->is_moe() && (model->shared_ffn > 0 || model->dense_layers > 0)) {
        out << fmt::format("  experts: width {} · shared width {} · first {} layers dense (ffn {})\n", model->ffn,
                           model->shared_ffn, model->dense_layers, number_or_dash(model->dense_ffn));
    }
    if (model->sliding_window > 0) {
        out << fmt::format("  sliding window {} tokens on {} of {} layers\n", model->sliding_window,
                           model->sliding_layers > 0 ? model->sliding_layers : model->layers, model->layers);
    }
    if (model->is_transformer()) {
        out << fmt::format("  KV cache per token (16-bit): {} B\n",
                           static_cast<long long>(kv_cache_bytes_per_sequence(*model, 2, 1)));
    }
    if (!model->quantization.empty()) {
        out << fmt::format("  quantization: {}{}\n", model->quantization,
                           model->checkpoint_weights.empty() ? "" : " → weights " + model->checkpoint_weights);
    }
    if (!model->hf_id.empty()) {
        out << fmt::format("  hugging face: {} at revision {}\n", model->hf_id, model->revision);
    }
    out << "  source: " << model->source << "\n";
    if (!model->notes.empty()) {
        out << "  notes: " << model->notes << "\n";
    }
}

}  // namespace

void register_models(CLI::App& app, Context& context) {
    CLI::App* command = app.add_subcommand("models", "List or show model presets");
    command->require_subcommand(1);
    command->footer(
        "\nExamples:\n  gpusel models list\n  gpusel models show mixtral-8x7b\n  gpusel models show "
        "deepseek-ai/DeepSeek-V3     from the HF cache, else downloaded (HF_HUB_OFFLINE=1: cache only)\n");
    command->add_subcommand("list", "One line per preset: family, parameters, architecture")->callback([&context] {
        print_list(context);
    });
    auto name = std::make_shared<std::string>();
    CLI::App* show =
        command->add_subcommand("show", "A preset's or Hugging Face model's architecture, and where it was read");
    show->add_option("name", *name, "Preset name (case-insensitive), or a Hugging Face id ORG/NAME")
        ->required()
        ->type_name("NAME");
    show->callback([&context, name] { print_show(context, *name); });
}

}  // namespace gpusel::cli
