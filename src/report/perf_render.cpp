#include "report/perf_render.hpp"

#include <algorithm>
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "inputs/layout.hpp"
#include "io/json_output.hpp"

namespace gpusel {

namespace {

using Json = nlohmann::ordered_json;

// The numbers the estimate ran at: compute precision; for serving the weight and KV-cache formats
// as well ("fp8, weights bf16, KV cache fp16"), the words deploy's "pick:" line uses.
std::string numerics_label(Precision precision, const Workload& workload) {
    if (workload.is_training()) {
        return std::string(to_string(precision));
    }
    return fmt::format("{}, weights {}, KV cache {}", to_string(precision), to_string(workload.weights),
                       to_string(workload.kv_cache));
}

std::string stack_label(ServingStack stack, const Workload& workload) {
    switch (stack) {
        case ServingStack::llama_cpp:
            return "llama.cpp";
        case ServingStack::eager:
            return "PyTorch eager";
        default:
            if (workload.is_training()) {
                return workload.model.is_transformer() ? "Megatron/FSDP-class" : "PyTorch DDP";
            }
            switch (workload.task()) {
                case InferenceTask::generation:
                case InferenceTask::scoring:
                    return "TensorRT-LLM/vLLM-class";
                case InferenceTask::diffusion:
                    return "TensorRT/torch.compile-class";
                default:
                    return "TensorRT/ONNX Runtime-class";
            }
    }
}

Json training_json(const Workload& workload, const TrainingPerf& training, std::vector<std::string>& notes) {
    Json object;
    object["step_time_s"] = json_number("training.step_time_s", training.step_time_s, notes);
    if (workload.model.is_transformer()) {
        object["tokens_per_s"] = json_number("training.tokens_per_s", training.tokens_per_s, notes);
    } else {
        object["tokens_per_s"] = nullptr;
        notes.push_back("training.tokens_per_s is null: the model has no tokens; see samples_per_s");
    }
    object["samples_per_s"] = json_number("training.samples_per_s", training.samples_per_s, notes);
    object["mfu"] = json_number("training.mfu", training.mfu, notes);
    object["time_to_train_s"] = json_number("training.time_to_train_s", training.time_to_train_s, notes);
    object["meets_deadline"] = training.meets_deadline;
    object["scaling_efficiency"] = json_number("training.scaling_efficiency", training.scaling_efficiency, notes);
    object["micro_batch"] = training.micro_batch;
    object["gradient_accumulation"] = training.gradient_accumulation;
    object["global_batch"] = training.global_batch;
    return object;
}

Json inference_json(const Workload& workload, const PerfEstimate& estimate, std::vector<std::string>& notes) {
    const InferencePerf& inference = *estimate.inference;
    Json object;
    object["ttft_s"] = json_number("inference.ttft_s", inference.ttft_s, notes);
    const bool generates = workload.task() == InferenceTask::generation;
    if (workload.model.is_transformer() && !generates) {
        object["tpot_s"] = nullptr;
        object["output_tokens_per_s"] = nullptr;
        object["prefill_tokens_per_s"] =
            json_number("inference.prefill_tokens_per_s", inference.prefill_tokens_per_s, notes);
        notes.push_back(
            "tpot_s and output_tokens_per_s are null: the workload generates no tokens; ttft_s is the "
            "latency of one request, prefill_tokens_per_s the input tokens/s");
    } else if (workload.model.is_transformer()) {
        object["tpot_s"] = json_number("inference.tpot_s", inference.tpot_s, notes);
        object["output_tokens_per_s"] =
            json_number("inference.output_tokens_per_s", inference.output_tokens_per_s, notes);
        object["prefill_tokens_per_s"] =
            json_number("inference.prefill_tokens_per_s", inference.prefill_tokens_per_s, notes);
    } else {
        object["tpot_s"] = nullptr;
        object["output_tokens_per_s"] = nullptr;
        object["prefill_tokens_per_s"] = nullptr;
        notes.push_back(
            "tpot_s, output_tokens_per_s and prefill_tokens_per_s are null: the model generates no "
            "tokens; ttft_s is the latency of one request, requests_per_s the samples/s");
    }
    object["requests_per_s"] = json_number("inference.requests_per_s", inference.requests_per_s, notes);
    if (workload.task() == InferenceTask::diffusion) {
        object["images_per_s"] = json_number("inference.images_per_s", inference.images_per_s, notes);
    }
    object["p99_ttft_s"] = json_number("inference.p99_ttft_s", inference.p99_ttft_s, notes);
    object["p99_tpot_s"] = json_number("inference.p99_tpot_s", inference.p99_tpot_s, notes);
    object["p99_e2e_s"] = json_number("inference.p99_e2e_s", inference.p99_e2e_s, notes);
    object["batch"] = inference.batch;
    object["percentile"] = json_number("inference.percentile", inference.percentile, notes);
    object["replicas"] = inference.replicas;
    if (inference.concurrency > 0) {
        object["concurrency"] = inference.concurrency;
    } else {
        object["concurrency"] = nullptr;
    }
    object["max_batch_memory"] = inference.max_batch_memory;
    object["offered_requests_per_s"] =
        json_number("inference.offered_requests_per_s", inference.offered_requests_per_s, notes);
    object["meets_slo"] = inference.meets_slo;
    object["max_requests_per_s_meeting_slo"] =
        json_number("inference.max_requests_per_s_meeting_slo", inference.max_requests_per_s_meeting_slo, notes);
    object["binding_target"] = std::string(to_string(inference.binding_target));
    if (inference.replicas_needed > 0) {
        object["gpus_needed_for_slo"] =
            inference.replicas_needed * estimate.layout.tensor_parallel * estimate.layout.pipeline_parallel;
    } else {
        object["gpus_needed_for_slo"] = nullptr;
    }
    return object;
}

std::string optional_duration(const std::optional<double>& value) {
    return value ? format_duration(*value) : std::string("—");
}

void training_lines(const PerfResult& result, std::ostream& out) {
    const TrainingPerf& training = *result.estimate.training;
    const Layout& layout = result.estimate.layout;
    const int context_parallel = std::max(1, result.workload.training.context_parallel);
    const std::string replicas = context_parallel > 1
                                     ? fmt::format("{} sequence replicas (data parallel {} / context parallel {})",
                                                   result.workload.training.sequence_replicas(layout.data_parallel),
                                                   layout.data_parallel, context_parallel)
                                     : fmt::format("{} data parallel", layout.data_parallel);
    out << fmt::format("  step        {} per optimizer step: micro-batch {} × {} accumulation × {} = {} samples\n",
                       format_duration(training.step_time_s), training.micro_batch, training.gradient_accumulation,
                       replicas, training.global_batch);
    if (result.workload.model.is_transformer()) {
        out << fmt::format("  throughput  {}, {}, MFU {}\n", format_rate(training.tokens_per_s, "tokens/s"),
                           format_rate(training.samples_per_s, "samples/s"), format_percent(training.mfu));
    } else {
        out << fmt::format("  throughput  {}, MFU {}\n", format_rate(training.samples_per_s, "samples/s"),
                           format_percent(training.mfu));
    }
    if (layout.gpu_count() > 1) {
        out << fmt::format("  scaling     {} of ideal over {} GPUs (communication and pipeline bubble)\n",
                           format_percent(training.scaling_efficiency), layout.gpu_count());
    }
    if (training.time_to_train_s) {
        const double deadline = result.workload.training.deadline_seconds;
        out << fmt::format("  time        {} to train{}\n", format_duration(*training.time_to_train_s),
                           deadline > 0 ? fmt::format(" — deadline {} {}", format_duration(deadline),
                                                      training.meets_deadline ? "met" : "MISSED")
                                        : "");
    }
}

// "deployment.redundancy n+1" or "deployment.redundancy 25%", as the workload file writes it.
std::string redundancy_words(const DeploymentSpec& deployment) {
    return deployment.redundancy == DeploymentSpec::Redundancy::fraction
               ? fmt::format("deployment.redundancy {:g}%", deployment.redundancy_fraction * 100)
               : std::string("deployment.redundancy n+1");
}

// The percentile line and, when the workload sets targets, the SLO lines.
void load_lines(const PerfResult& result, std::ostream& out) {
    const InferencePerf& inference = *result.estimate.inference;
    const InferenceSpec& spec = result.workload.inference;
    const bool generates = result.workload.task() == InferenceTask::generation;
    const std::string percentile = fmt::format("P{:g}", inference.percentile);
    const std::string load = inference.concurrency > 0 ? fmt::format("at {} clients", inference.concurrency)
                                                       : "at " + format_rate(spec.requests_per_s, "req/s");
    if (inference.p99_e2e_s) {
        out << fmt::format("  {:<11} {}{}end-to-end {} ({})\n", percentile,
                           generates ? "TTFT " + optional_duration(inference.p99_ttft_s) + ", " : "",
                           generates ? "TPOT " + optional_duration(inference.p99_tpot_s) + ", " : "",
                           optional_duration(inference.p99_e2e_s), load);
    } else {
        out << fmt::format("  {:<11} none: {} exceeds what {} replica(s) sustain, queues grow without bound\n",
                           percentile, load, inference.replicas);
    }
    const SloSpec& slo = spec.slo;
    std::vector<std::string> targets;
    if (slo.ttft_seconds > 0) {
        targets.push_back("TTFT ≤ " + format_duration(slo.ttft_seconds));
    }
    if (slo.tpot_seconds > 0 && generates) {
        targets.push_back("TPOT ≤ " + format_duration(slo.tpot_seconds));
    }
    if (slo.e2e_seconds > 0) {
        targets.push_back("end-to-end ≤ " + format_duration(slo.e2e_seconds));
    }
    if (targets.empty()) {
        return;
    }
    out << fmt::format("  SLO         {} {}: {}; largest load meeting it {}\n", percentile, fmt::join(targets, ", "),
                       inference.meets_slo ? "met" : "MISSED",
                       format_rate(inference.max_requests_per_s_meeting_slo, "req/s"));
    if (inference.replicas_needed > 0) {
        const Layout& layout = result.estimate.layout;
        const int per_replica = layout.tensor_parallel * layout.pipeline_parallel;
        if (result.spare_replicas_for_needed > 0) {
            out << fmt::format("              {} needs {} × {} ordered: {} replica(s) serving + {} spare ({})\n", load,
                               (inference.replicas_needed + result.spare_replicas_for_needed) * per_replica,
                               result.gpu_id, inference.replicas_needed, result.spare_replicas_for_needed,
                               redundancy_words(result.workload.deployment));
        } else {
            out << fmt::format("              {} needs {} × {} ({} replica(s))\n", load,
                               inference.replicas_needed * per_replica, result.gpu_id, inference.replicas_needed);
        }
    }
}

void inference_lines(const PerfResult& result, std::ostream& out) {
    const InferencePerf& inference = *result.estimate.inference;
    const InferenceSpec& spec = result.workload.inference;
    const bool transformer = result.workload.model.is_transformer();
    const InferenceTask task = result.workload.task();
    const bool generates = task == InferenceTask::generation;
    out << fmt::format("  batch       {} per replica × {} replica(s) (memory holds {}){}\n", inference.batch,
                       inference.replicas, inference.max_batch_memory,
                       generates     ? fmt::format(", {} in / {} out tokens", spec.input_tokens, spec.output_tokens)
                       : transformer ? fmt::format(", {} input tokens", spec.input_tokens)
                                     : "");
    if (task == InferenceTask::diffusion) {
        out << fmt::format("  latency     {} per image alone ({} steps{}, then the VAE decode)\n",
                           format_duration(inference.ttft_s), spec.denoising_steps,
                           spec.classifier_free_guidance ? " with classifier-free guidance" : "");
        out << fmt::format("  throughput  {} (full batches: denoising step {}, VAE decode {})\n",
                           format_rate(inference.images_per_s, "images/s"), format_duration(inference.denoising_step_s),
                           format_duration(inference.vae_decode_s));
    } else if (transformer && !generates) {
        out << fmt::format("  latency     {} per request alone\n", format_duration(inference.ttft_s));
        out << fmt::format("  throughput  {}, {} input (full batches)\n",
                           format_rate(inference.requests_per_s, "req/s"),
                           format_rate(inference.prefill_tokens_per_s, "tok/s"));
    } else if (transformer && inference.concurrency > 0) {
        out << fmt::format(
            "  latency     TTFT {}, TPOT {} (medians at {} closed-loop clients, {:.3g} decoding per "
            "replica)\n",
            format_duration(inference.ttft_s), format_duration(inference.tpot_s), inference.concurrency,
            inference.mean_concurrency);
        out << fmt::format(
            "  throughput  {} out, {}, {} out per GPU (at {} clients)\n",
            format_rate(inference.output_tokens_per_s, "tok/s"), format_rate(inference.requests_per_s, "req/s"),
            format_rate(inference.output_tokens_per_s / std::max(1, result.estimate.layout.gpu_count()), "tok/s"),
            inference.concurrency);
    } else if (transformer) {
        out << fmt::format("  latency     TTFT {}, TPOT {} (one request alone)\n", format_duration(inference.ttft_s),
                           format_duration(inference.tpot_s));
        out << fmt::format("  throughput  {} out, {}, prefill {} (full batches)\n",
                           format_rate(inference.output_tokens_per_s, "tok/s"),
                           format_rate(inference.requests_per_s, "req/s"),
                           format_rate(inference.prefill_tokens_per_s, "tok/s"));
    } else {
        out << fmt::format("  latency     {} per request alone\n", format_duration(inference.ttft_s));
        out << fmt::format("  throughput  {} (full batches)\n", format_rate(inference.requests_per_s, "samples/s"));
    }
    load_lines(result, out);
}

std::string metric_unit(MeasuredMetric metric) {
    switch (metric) {
        case MeasuredMetric::training_tokens_per_s:
            return "tokens/s";
        case MeasuredMetric::samples_per_s:
            return "samples/s";
        case MeasuredMetric::output_tokens_per_s:
            return "output tok/s";
        case MeasuredMetric::decode_tokens_per_s:
            return "tok/s decode";
        case MeasuredMetric::prefill_tokens_per_s:
            return "tok/s prefill";
        case MeasuredMetric::images_per_s:
            return "images/s";
        case MeasuredMetric::ttft:
        case MeasuredMetric::tpot:
            break;
    }
    return "";
}

void calibration_lines(const SpeedCalibration& calibration, std::ostream& out) {
    if (!calibration.applied) {
        return;
    }
    for (const CalibratedPoint& point : calibration.points) {
        const bool time = !higher_is_faster(point.point.metric);
        const auto show = [&](double value) {
            return time ? fmt::format("{} {}", to_string(point.point.metric), format_duration(value))
                        : format_rate(value, metric_unit(point.point.metric));
        };
        out << fmt::format("  calibrated  {} × {} measured {}{}: the model said {}, now {}\n", point.point.count,
                           point.point.gpu, show(point.point.measured),
                           point.point.from.empty() ? "" : " (" + point.point.from + ")", show(point.predicted_before),
                           show(point.predicted_after));
    }
    out << fmt::format("              stack factor {:.3g}× on every GPU's achieved fractions of peak\n",
                       calibration.scale);
    for (const std::string& note : calibration.notes) {
        out << "              " << note << "\n";
    }
}

void bottleneck_lines(const PerfEstimate& estimate, std::ostream& out) {
    const Bottleneck& bottleneck = estimate.bottleneck;
    if (!estimate.training && !estimate.inference) {
        out << "  no estimate  " << bottleneck.detail << ": " << bottleneck.remedy << "\n";
        return;
    }
    if (bottleneck.resource == Resource::memory_capacity) {
        out << fmt::format("  bottleneck  {} (GPU utilisation {})\n", to_string(bottleneck.resource),
                           format_percent(bottleneck.gpu_utilization));
    } else {
        out << fmt::format("  bottleneck  {} ({} of the {} time; GPU utilisation {})\n", to_string(bottleneck.resource),
                           format_percent(bottleneck.share), to_string(bottleneck.phase),
                           format_percent(bottleneck.gpu_utilization));
    }
    out << "              " << bottleneck.detail << "\n";
    out << "  remedy      " << bottleneck.remedy << "\n";
}

}  // namespace

// Every speed figure of the entry with its band: a rate v lies in [low·v, high·v], a time t in
// [t/high, t/low].
Json speed_band_json(std::string_view group, const SpeedBandFactors& band, const Json& training, const Json& inference,
                     std::vector<std::string>& notes) {
    Json figures = Json::object();
    const auto add = [&](const Json& section, std::string_view section_name, std::string_view key, bool time) {
        const auto found = section.find(key);
        if (found == section.end() || !found->is_number()) {
            return;
        }
        const double value = found->get<double>();
        const std::string name = fmt::format("{}.{}", section_name, key);
        const double low = time ? value / band.high : value * band.low;
        const double high = time ? value / band.low : value * band.high;
        figures[name] = Json{{"low", json_number(std::string(key), low, notes)},
                             {"high", json_number(std::string(key), high, notes)}};
    };
    if (training.is_object()) {
        add(training, "training", "step_time_s", true);
        add(training, "training", "tokens_per_s", false);
        add(training, "training", "samples_per_s", false);
        add(training, "training", "time_to_train_s", true);
    }
    if (inference.is_object()) {
        for (const char* key : {"ttft_s", "tpot_s"}) {
            add(inference, "inference", key, true);
        }
        for (const char* key : {"output_tokens_per_s", "prefill_tokens_per_s", "requests_per_s", "images_per_s"}) {
            add(inference, "inference", key, false);
        }
    }
    return Json{{"group", std::string(group)},
                {"low_factor", json_number("band.low_factor", band.low, notes)},
                {"high_factor", json_number("band.high_factor", band.high, notes)},
                {"figures", std::move(figures)}};
}

Json speed_calibration_json(const SpeedCalibration& calibration, std::vector<std::string>& notes) {
    if (!calibration.applied) {
        return nullptr;
    }
    Json points = Json::array();
    for (const CalibratedPoint& point : calibration.points) {
        const bool time = !higher_is_faster(point.point.metric);
        const std::string unit = time ? "_s" : "";
        points.push_back(
            Json{{"gpu", point.point.gpu},
                 {"count", point.point.count},
                 {"metric", std::string(to_string(point.point.metric))},
                 {"measured", json_number("measured" + unit, point.point.measured, notes)},
                 {"predicted_before", json_number("predicted_before" + unit, point.predicted_before, notes)},
                 {"predicted_after", json_number("predicted_after" + unit, point.predicted_after, notes)},
                 {"from", point.point.from.empty() ? Json(nullptr) : Json(point.point.from)}});
    }
    return Json{{"scale", json_number("calibration.scale", calibration.scale, notes)}, {"points", std::move(points)}};
}

void render_perf_table(const PerfResult& result, std::ostream& out, const PerfStyle& style) {
    const PerfEstimate& estimate = result.estimate;
    out << fmt::format("{} on {} × {} ({}, {}), {}\n", result.workload.name, result.count, result.gpu_id,
                       describe(estimate.layout), numerics_label(estimate.precision, result.workload),
                       stack_label(estimate.stack, result.workload));
    if (result.spare_replicas > 0) {
        const int ordered = estimate.layout.data_parallel + result.spare_replicas;
        out << fmt::format("  spares      {} of {} replicas held as {} ({}); serving on {}\n", result.spare_replicas,
                           ordered, result.spare_replicas == 1 ? "a spare" : "spares",
                           redundancy_words(result.workload.deployment), estimate.layout.data_parallel);
    }
    if (estimate.training) {
        training_lines(result, out);
    }
    if (estimate.inference) {
        inference_lines(result, out);
    }
    if ((estimate.training || estimate.inference) && !result.band_group.empty()) {
        out << (result.band_measured
                    ? fmt::format("  band        {:.2f}–{:.2f}× these speeds (measured on this GPU and size: a "
                                  "benchmark's run-to-run noise, assumed, in place of the model's {} band)\n",
                                  result.band.low, result.band.high, result.band_group)
                    : fmt::format("  band        {:.2f}–{:.2f}× these speeds (10th–90th percentile of measured / "
                                  "predicted, {} runs out of sample)\n",
                                  result.band.low, result.band.high, result.band_group));
    }
    calibration_lines(result.calibration, out);
    bottleneck_lines(estimate, out);
    if (!style.quiet && !estimate.notes.empty()) {
        out << "  notes\n";
        for (const std::string& note : estimate.notes) {
            out << "    - " << note << "\n";
        }
    }
}

Json layout_json(const Layout& layout) {
    Json json;
    json["tensor_parallel"] = layout.tensor_parallel;
    json["pipeline_parallel"] = layout.pipeline_parallel;
    json["data_parallel"] = layout.data_parallel;
    json["sharding"] = to_string(layout.sharding);
    json["expert_parallel"] = layout.expert_parallel;
    json["context_parallel"] = layout.context_parallel;
    json["offload"] = to_string(layout.offload);
    return json;
}

void render_perf_json(const PerfResult& result, std::ostream& out) {
    const PerfEstimate& estimate = result.estimate;
    std::vector<std::string> notes = estimate.notes;
    Json entry;
    entry["gpu"] = result.gpu_id;
    entry["count"] = result.count;
    entry["spare_replicas"] = result.spare_replicas;
    entry["layout"] = layout_json(estimate.layout);
    entry["stack"] = std::string(to_string(estimate.stack));
    entry["precision"] = std::string(to_string(estimate.precision));
    entry["weights"] = std::string(to_string(result.workload.weights));
    entry["kv_cache"] =
        result.workload.is_training() ? Json(nullptr) : Json(std::string(to_string(result.workload.kv_cache)));
    entry["training"] = estimate.training ? training_json(result.workload, *estimate.training, notes) : Json(nullptr);
    entry["inference"] = estimate.inference ? inference_json(result.workload, estimate, notes) : Json(nullptr);
    if (estimate.inference) {
        const int needed = estimate.inference->replicas_needed;
        entry["inference"]["gpus_to_order_for_slo"] =
            needed > 0 ? Json((needed + result.spare_replicas_for_needed) * estimate.layout.tensor_parallel *
                              estimate.layout.pipeline_parallel)
                       : Json(nullptr);
    }
    entry["band"] = speed_band_json(result.band_group, result.band, entry["training"], entry["inference"], notes);
    entry["calibration"] = speed_calibration_json(result.calibration, notes);
    const Bottleneck& bottleneck = estimate.bottleneck;
    entry["bottleneck"] =
        Json{{"resource", std::string(to_string(bottleneck.resource))},
             {"phase", std::string(to_string(bottleneck.phase))},
             {"share", json_number("bottleneck.share", bottleneck.share, notes)},
             {"gpu_utilization", json_number("bottleneck.gpu_utilization", bottleneck.gpu_utilization, notes)},
             {"detail", bottleneck.detail},
             {"remedy", bottleneck.remedy}};
    entry["notes"] = notes;
    Json document;
    document["format_version"] = 1;
    document["workload"] = result.workload.name;
    document["estimates"] = Json::array({entry});
    out << dump_json(document);
}

}  // namespace gpusel
