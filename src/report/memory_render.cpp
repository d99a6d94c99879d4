#include "report/memory_render.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "io/json_output.hpp"
#include "report/perf_render.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

using Json = nlohmann::ordered_json;

std::string gb2(double bytes) {
    return fmt::format("{:.2f}", bytes / 1e9);
}

// A bar of `width` cells for `fraction` of the whole, in eighths of a cell.
std::string bar(double fraction, int width) {
    static const char* const partial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    const int eighths = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width * 8));
    std::string text;
    for (int i = 0; i < eighths / 8; ++i) {
        text += "█";
    }
    text += partial[eighths % 8];
    return text;
}

Json per_gpu_json(const MemoryBreakdown& per_gpu, std::vector<std::string>& notes) {
    Json json;
    json["weights_bytes"] = json_number("per_gpu.weights_bytes", per_gpu.weights_bytes, notes);
    json["gradients_bytes"] = json_number("per_gpu.gradients_bytes", per_gpu.gradients_bytes, notes);
    json["optimizer_bytes"] = json_number("per_gpu.optimizer_bytes", per_gpu.optimizer_bytes, notes);
    json["activations_bytes"] = json_number("per_gpu.activations_bytes", per_gpu.activations_bytes, notes);
    json["kv_cache_bytes"] = json_number("per_gpu.kv_cache_bytes", per_gpu.kv_cache_bytes, notes);
    json["overhead_bytes"] = json_number("per_gpu.overhead_bytes", per_gpu.overhead_bytes, notes);
    json["allocated_bytes"] = json_number("per_gpu.allocated_bytes", per_gpu.allocated_bytes, notes);
    json["total_bytes"] = json_number("per_gpu.total_bytes", per_gpu.total_bytes, notes);
    json["total_low_bytes"] = json_number("per_gpu.total_low_bytes", per_gpu.total_low_bytes, notes);
    json["total_high_bytes"] = json_number("per_gpu.total_high_bytes", per_gpu.total_high_bytes, notes);
    return json;
}

// Contract (docs/memory-model.md, "Serving engines"): bytes per GPU; tokens and concurrency per replica.
Json serving_json(const ServingMemory& serving, std::vector<std::string>& notes) {
    Json json;
    json["engine"] = std::string(to_string(serving.engine));
    json["weights_bytes"] = json_number("serving.weights_bytes", serving.weights_bytes, notes);
    json["activation_peak_bytes"] = json_number("serving.activation_peak_bytes", serving.activation_peak_bytes, notes);
    json["non_torch_bytes"] = json_number("serving.non_torch_bytes", serving.non_torch_bytes, notes);
    json["kv_cache_bytes"] = json_number("serving.kv_cache_bytes", serving.kv_cache_bytes, notes);
    json["kv_cache_tokens"] = serving.kv_cache_tokens;
    json["max_model_len"] = serving.max_model_len;
    json["max_concurrency"] = json_number("serving.max_concurrency", serving.max_concurrency, notes);
    return json;
}

Json candidate_json(const MemoryCandidate& candidate, const MemoryResult& result) {
    const Workload& workload = result.workload;
    const MemoryEstimate& estimate = candidate.estimate;
    std::vector<std::string> notes = estimate.notes;
    Json json;
    json["gpu"] = candidate.gpu_id;
    json["count"] = result.count;
    json["layout"] = layout_json(candidate.layout);
    json["per_gpu"] = per_gpu_json(estimate.per_gpu, notes);
    json["capacity_bytes"] = json_number("capacity_bytes", estimate.capacity_bytes, notes);
    json["fits"] = estimate.fits;
    json["headroom_bytes"] = json_number("headroom_bytes", estimate.headroom_bytes, notes);
    const bool training = workload.is_training();
    json["max_micro_batch"] = training ? Json(estimate.max_micro_batch) : Json(nullptr);
    json["max_batch"] = training ? Json(nullptr) : Json(estimate.max_batch);
    // Tokens do not apply to a model without them.
    json["max_context_tokens"] =
        !training && workload.model.is_transformer() ? Json(estimate.max_context_tokens) : Json(nullptr);
    if (estimate.serving) {
        json["serving"] = serving_json(*estimate.serving, notes);
    }
    json["notes"] = notes;  // last: every value above that could not be computed has its note
    return json;
}

std::string what_is_estimated(const Workload& workload, const MemoryEstimate& estimate) {
    if (workload.is_training()) {
        return workload.model.is_transformer()
                   ? fmt::format("micro-batch {} × seq {}", estimate.micro_batch, workload.training.seq_len)
                   : fmt::format("micro-batch {}", estimate.micro_batch);
    }
    return workload.model.is_transformer()
               ? fmt::format("batch {} × {} tokens", estimate.batch, estimate.context_tokens)
               : fmt::format("batch {}", estimate.batch);
}

TextTable breakdown_table(const Workload& workload, const MemoryEstimate& estimate) {
    const MemoryBreakdown& per_gpu = estimate.per_gpu;
    const double total = per_gpu.total_bytes > 0 ? per_gpu.total_bytes : 1;
    TextTable table{{"component"}, {"GB", TextTable::Align::right}, {"share", TextTable::Align::right}, {""}};
    const auto row = [&](const char* name, double bytes) {
        table.add_row({name, gb2(bytes), format_percent(bytes / total), bar(bytes / total, 24)});
    };
    row("weights", per_gpu.weights_bytes);
    if (workload.is_training()) {
        row("gradients", per_gpu.gradients_bytes);
        row("optimizer", per_gpu.optimizer_bytes);
    }
    row("activations", per_gpu.activations_bytes);
    if (!workload.is_training() && workload.task() != InferenceTask::diffusion &&
        workload.task() != InferenceTask::vision && workload.task() != InferenceTask::recommendation) {
        row("kv cache", per_gpu.kv_cache_bytes);  // encoders keep the row: 0, and the note says why
    }
    row("overhead", per_gpu.overhead_bytes);
    table.add_row({"allocated", gb2(per_gpu.allocated_bytes), "", "tensors: torch.cuda.max_memory_allocated()"});
    table.add_row(
        {"total", gb2(per_gpu.total_bytes), "",
         fmt::format("device: nvidia-smi; band {}–{}", gb2(per_gpu.total_low_bytes), gb2(per_gpu.total_high_bytes))});
    table.add_row({"capacity", gb2(estimate.capacity_bytes), "",
                   fmt::format("{} with {} headroom; {} GB free", estimate.fits ? "fits" : "does not fit",
                               format_percent(estimate.headroom_fraction), gb2(estimate.headroom_bytes))});
    return table;
}

void largest_batch_line(const Workload& workload, const MemoryEstimate& estimate, std::ostream& out) {
    if (workload.is_training()) {
        out << fmt::format("largest micro-batch that fits: {}\n",
                           estimate.max_micro_batch > 0 ? std::to_string(estimate.max_micro_batch) : "none");
        return;
    }
    const std::string max_batch = estimate.max_batch > 0 ? std::to_string(estimate.max_batch) : "none";
    if (workload.model.is_transformer()) {
        out << fmt::format(
            "largest batch that fits at {} tokens: {} · largest context at batch {}: {}\n", estimate.context_tokens,
            max_batch, estimate.batch,
            estimate.max_context_tokens > 0 ? fmt::format("{} tokens", estimate.max_context_tokens) : "none");
    } else {
        out << fmt::format("largest batch that fits: {}\n", max_batch);
    }
}

}  // namespace

void render_memory_overview(const MemoryResult& result, std::ostream& out, const MemoryStyle& style) {
    const Workload& workload = result.workload;
    const MemoryEstimate& first = result.candidates.front().estimate;
    out << fmt::format("{} · {} · {} · {} GPU{} per candidate ({}) · GB = 1e9 bytes\n\n", workload.name,
                       to_string(workload.kind), what_is_estimated(workload, first), result.count,
                       result.count == 1 ? "" : "s", describe(result.candidates.front().layout));
    TextTable table{{"gpu"},
                    {"memory", TextTable::Align::right},
                    {"estimate", TextTable::Align::right},
                    {"band", TextTable::Align::right},
                    {"fits"},
                    {"headroom", TextTable::Align::right},
                    {workload.is_training() ? "max micro-batch" : "max batch", TextTable::Align::right}};
    for (const MemoryCandidate& candidate : result.candidates) {
        const MemoryEstimate& estimate = candidate.estimate;
        const int max_value = workload.is_training() ? estimate.max_micro_batch : estimate.max_batch;
        table.add_row(
            {candidate.gpu_id, fmt::format("{} GB", gb2(estimate.capacity_bytes)),
             fmt::format("{} GB", gb2(estimate.per_gpu.total_bytes)),
             fmt::format("{}–{}", gb2(estimate.per_gpu.total_low_bytes), gb2(estimate.per_gpu.total_high_bytes)),
             estimate.fits ? "yes" : "no",
             fmt::format("{} GB ({})", gb2(estimate.headroom_bytes),
                         format_percent(estimate.headroom_bytes / estimate.capacity_bytes)),
             max_value > 0 ? std::to_string(max_value) : "none"});
    }
    out << table.render();
    if (!style.quiet) {
        out << fmt::format(
            "\nestimate = per-GPU device memory at peak (what nvidia-smi shows); fits = estimate ≤ "
            "capacity less {} headroom.\n`gpusel memory {} --gpu ID` shows the breakdown and its "
            "assumptions.\n",
            format_percent(first.headroom_fraction),
            workload.file.empty() || workload.file == "<stdin>" ? std::string("-") : workload.file);
    }
}

void render_memory_breakdown(const MemoryResult& result, std::ostream& out, const MemoryStyle& style) {
    const Workload& workload = result.workload;
    const MemoryCandidate& candidate = result.candidates.front();
    const MemoryEstimate& estimate = candidate.estimate;
    out << fmt::format("{} on {} × {} ({}) · {} · per GPU, GB = 1e9 bytes\n\n", workload.name, candidate.gpu_id,
                       result.count, describe(candidate.layout), what_is_estimated(workload, estimate));
    out << breakdown_table(workload, estimate).render();
    out << "\n";
    largest_batch_line(workload, estimate, out);
    if (estimate.serving) {
        const ServingMemory& serving = *estimate.serving;
        out << fmt::format(
            "{}: budget {} GB ({:g} × {} GB) · KV cache {} GB = {} tokens · max concurrency at "
            "max_model_len {}: {:.2f}x{}\n",
            to_string(serving.engine), gb2(serving.budget_bytes), serving.memory_fraction,
            gb2(serving.device_total_bytes), gb2(serving.kv_cache_bytes), serving.kv_cache_tokens,
            serving.max_model_len, serving.max_concurrency,
            serving.fits ? "" : fmt::format("\nthe engine would not start: {}", serving.refusal));
    }
    if (!style.quiet) {
        out << "\nassumptions:\n";
        for (const std::string& note : estimate.notes) {
            out << "  - " << note << "\n";
        }
    }
}

void render_memory_json(const MemoryResult& result, std::ostream& out) {
    Json document;
    document["format_version"] = 1;
    document["workload"] = result.workload.name;
    document["estimates"] = Json::array();
    for (const MemoryCandidate& candidate : result.candidates) {
        document["estimates"].push_back(candidate_json(candidate, result));
    }
    out << dump_json(document);
}

}  // namespace gpusel
