#include "report/models_render.hpp"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

std::string number_or_dash(int value) {
    return value > 0 ? std::to_string(value) : "—";
}

}  // namespace

void render_models_list(const std::vector<ModelSpec>& models, std::ostream& out) {
    TextTable table{{"name"},
                    {"family"},
                    {"params", TextTable::Align::right},
                    {"layers", TextTable::Align::right},
                    {"hidden", TextTable::Align::right},
                    {"heads/kv", TextTable::Align::right},
                    {"ffn", TextTable::Align::right},
                    {"vocab", TextTable::Align::right}};
    for (const ModelSpec& model : models) {
        std::string params = format_count(model.params);
        if (model.is_moe()) {
            params += " (" + format_count(model.active_params) + " active)";
        }
        table.add_row({model.name, std::string(to_string(model.family)), params, number_or_dash(model.layers),
                       number_or_dash(model.hidden),
                       model.heads > 0 ? fmt::format("{}/{}", model.heads, model.kv_heads) : "—",
                       number_or_dash(model.ffn), number_or_dash(model.vocab)});
    }
    out << table.render();
}

void render_model_show(const ModelSpec& model_spec, std::ostream& out) {
    const ModelSpec* model = &model_spec;
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
    if (model->is_moe() && model->moe_layer_step > 1) {
        out << fmt::format(
            "  experts: width {} · shared width {} · in 1 of every {} layers ({} of {}); the others "
            "dense (ffn {})\n",
            model->ffn, model->shared_ffn, model->moe_layer_step, moe_layer_count(*model), model->layers,
            number_or_dash(model->dense_ffn));
    } else if (model->is_moe() && model->dense_layers > 0) {
        out << fmt::format("  experts: width {} · shared width {} · first {} layers dense (ffn {})\n", model->ffn,
                           model->shared_ffn, model->dense_layers, number_or_dash(model->dense_ffn));
    } else if (model->is_moe() && model->shared_ffn > 0) {
        out << fmt::format("  experts: width {} · shared width {} · in every layer\n", model->ffn, model->shared_ffn);
    }
    if (model->sliding_window > 0) {
        out << fmt::format("  {} {} tokens on {} of {} layers\n",
                           model->attention_chunked ? "chunked attention, chunks of" : "sliding window",
                           model->sliding_window, model->sliding_layers > 0 ? model->sliding_layers : model->layers,
                           model->layers);
    }
    if (model->attention_sinks) {
        out << "  attention sinks: one learned logit per head and layer (no cached tokens)\n";
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

}  // namespace gpusel
