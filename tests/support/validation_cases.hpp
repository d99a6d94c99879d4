#pragma once
// The published measurements the performance model is validated against
// (tests/validation/perf/cases.yaml and tests/validation/nonllm/cases.yaml): loading, predicting
// one case with a given efficiency table, the physical limit each prediction must respect, and
// the statistics the validation tests print. Shared by the in-sample tables and the
// cross-validation (test_perf_cross_validation.cpp).

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "io/yaml.hpp"
#include "perf/calibration.hpp"
#include "perf/perf.hpp"

namespace gpusel::validation {

struct ValidationCase {
    std::string id;
    std::string file;  // absolute path of the workload
    std::string gpu;
    int count = 1;
    std::string metric;  // see predict_case
    double measured = 0;
    std::string source;
    std::string stack;        // "" = the workload's
    std::string publication;  // the cross-validation fold: one publication (paper, doc, results round)
    bool fitted = false;      // nonllm: a factor or workload field was fitted on it
    bool set_b = false;       // one of docs/reference/perf_modelling.md §2 (Set B), added to validate on
};

// Loads one cases file; `folder` is tests/validation/<name>/. Files resolve against the folder.
inline std::vector<ValidationCase> load_cases(const std::string& folder) {
    const std::string path = folder + "cases.yaml";
    const YamlNode root = read_yaml_file(path);
    Diagnostics diagnostics(path);
    MapReader top(root, "", diagnostics);
    int format = 0;
    top.integer("format", format, 1, 1);
    std::vector<ValidationCase> cases;
    if (const YamlNode* list = top.node("cases")) {
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            MapReader reader(list->items[i], fmt::format("cases[{}]", i), diagnostics);
            ValidationCase item;
            for (const char* key : {"id", "file", "gpu", "count", "metric", "measured", "source", "publication"}) {
                reader.require(key);
            }
            reader.text("id", item.id);
            reader.text("file", item.file);
            item.file = folder + item.file;
            reader.text("gpu", item.gpu);
            reader.integer("count", item.count, 1, 100000);
            reader.text("stack", item.stack);
            reader.text("metric", item.metric);
            reader.number("measured", item.measured, UnitKind::plain, 0, 1e12, true);
            reader.text("source", item.source);
            item.set_b = item.source.find("perf_modelling.md §2") != std::string::npos;
            reader.text("publication", item.publication);
            reader.boolean("fitted", item.fitted);
            std::string note;
            reader.text("note", note);
            reader.finish();
            cases.push_back(item);
        }
    }
    top.finish();
    diagnostics.throw_if_any();
    return cases;
}

inline std::string validation_folder(const std::string& name) {
    return std::string(GPUSEL_SOURCE_DIR) + "/tests/validation/" + name + "/";
}

// Every case of both files, perf first.
inline std::vector<ValidationCase> all_cases() {
    std::vector<ValidationCase> cases = load_cases(validation_folder("perf"));
    const std::vector<ValidationCase> nonllm = load_cases(validation_folder("nonllm"));
    cases.insert(cases.end(), nonllm.begin(), nonllm.end());
    return cases;
}

// The largest dense rate the GPU has for any matrix precision; GeForce cards run FP16 with FP16
// accumulation at twice the rate the catalog lists (FP32 accumulate).
inline double max_peak_flops(const GpuSpec& gpu) {
    double peak = 0;
    for (const Precision precision : all_precisions) {
        if (precision == Precision::int4 || precision == Precision::fp4) {
            continue;
        }
        peak = std::max(peak, gpu.peak_flops_per_s(precision));
    }
    if (gpu.segment == Segment::consumer) {
        peak = std::max(peak, 2 * gpu.peak_flops_per_s(Precision::fp16));
    }
    return peak;
}

struct Prediction {
    bool valid = false;  // the estimate has the figure the metric names
    double value = 0;
    double physical_limit = 0;  // the value must not exceed this (times: not go below)
    bool lower_is_better = false;
    std::optional<MeasuredMetric> speed_metric;  // the calibration metric it corresponds to
    double speed_metric_scale = 1;               // case value = speed_metric value × this
};

// The case's figure from an estimate, with the physical limit of the hardware it ran on.
// Metrics: decode_tokens_per_s (1 / TPOT of one request), tpot_s (one decode step at the
// workload's batch), prefill_tokens_per_s, ttft_s,
// output_tokens_per_s, training_tokens_per_s, training_tokens_per_s_per_gpu, samples_per_s
// (training, or inference requests/s at the batch), samples_per_s_per_gpu, latency_s (one request
// alone), images_per_s_per_gpu, mfu.
inline Prediction read_prediction(const ValidationCase& item, const Workload& workload, const GpuSpec& gpu,
                                  const PerfEstimate& estimate) {
    Prediction result;
    const Layout& layout = estimate.layout;
    const double shards = layout.tensor_parallel;  // pipeline stages run one after another
    const double replicas = layout.data_parallel;
    const double bandwidth = gpu.memory_bandwidth_bytes_per_s;
    const double peak = max_peak_flops(gpu);
    const ModelSpec& model = workload.model;
    const double weights = matmul_params(model) * bits_per_weight(workload.weights) / 8;
    const double flops_per_token = 2 * matmul_params(model);
    const double per_gpu = item.count;
    if (estimate.inference) {
        const InferencePerf& inference = *estimate.inference;
        const double batch = inference.batch;
        if (item.metric == "tpot_s") {
            // One decode step of the workload's batch (closed-loop concurrency) at its mean context.
            result.value = inference.decode_step_s;
            result.physical_limit = weights / (shards * bandwidth);
            result.lower_is_better = true;
        } else if (item.metric == "decode_tokens_per_s") {
            result.value = 1 / inference.tpot_s;
            result.physical_limit = shards * bandwidth / weights;
            result.speed_metric = MeasuredMetric::decode_tokens_per_s;
        } else if (item.metric == "prefill_tokens_per_s") {
            result.value = inference.prefill_tokens_per_s;
            result.physical_limit = replicas * shards * peak / flops_per_token;
            result.speed_metric = MeasuredMetric::prefill_tokens_per_s;
        } else if (item.metric == "ttft_s") {
            result.value = inference.ttft_s;
            result.physical_limit = workload.inference.input_tokens * flops_per_token / (shards * peak);
            result.lower_is_better = true;
            result.speed_metric = MeasuredMetric::ttft;
        } else if (item.metric == "output_tokens_per_s") {
            result.value = inference.output_tokens_per_s;
            result.physical_limit =
                replicas * std::min(batch * shards * bandwidth / weights, shards * peak / flops_per_token);
            result.speed_metric = MeasuredMetric::output_tokens_per_s;
        } else if (item.metric == "samples_per_s" || item.metric == "samples_per_s_per_gpu" ||
                   item.metric == "latency_s" || item.metric == "images_per_s_per_gpu") {
            const bool diffusion = workload.task() == InferenceTask::diffusion;
            const double flops_per_request =
                diffusion
                    ? workload.inference.denoising_steps * 2.0 * model.flops_per_sample + model.decoder_flops_per_sample
                : model.is_transformer() ? flops_per_token * workload.inference.input_tokens
                                         : model.flops_per_sample;
            const double limit = item.count * peak / flops_per_request;
            if (item.metric == "latency_s") {
                result.value = inference.ttft_s;
                result.physical_limit = flops_per_request / peak;
                result.lower_is_better = true;
                result.speed_metric = MeasuredMetric::ttft;
            } else if (item.metric == "images_per_s_per_gpu") {
                result.value = inference.images_per_s / per_gpu;
                result.physical_limit = limit / per_gpu;
                result.speed_metric = MeasuredMetric::images_per_s;
                result.speed_metric_scale = 1 / per_gpu;
            } else {
                const double per = item.metric == "samples_per_s" ? 1 : per_gpu;
                result.value = inference.requests_per_s / per;
                result.physical_limit = limit / per;
                result.speed_metric = MeasuredMetric::samples_per_s;
                result.speed_metric_scale = 1 / per;
            }
        } else {
            return result;
        }
    } else if (estimate.training) {
        const TrainingPerf& training = *estimate.training;
        if (item.metric == "training_tokens_per_s" || item.metric == "training_tokens_per_s_per_gpu") {
            const double per = item.metric == "training_tokens_per_s" ? 1 : per_gpu;
            result.value = training.tokens_per_s / per;
            const Precision precision = workload.precision;
            result.physical_limit = item.count * gpu.peak_flops_per_s(precision) / (6 * matmul_params(model)) / per;
            result.speed_metric = MeasuredMetric::training_tokens_per_s;
            result.speed_metric_scale = 1 / per;
        } else if (item.metric == "mfu") {
            result.value = training.mfu;
            result.physical_limit = 1;
        } else if (item.metric == "samples_per_s" || item.metric == "samples_per_s_per_gpu") {
            const double per = item.metric == "samples_per_s" ? 1 : per_gpu;
            result.value = training.samples_per_s / per;
            const double per_sample = model.is_transformer() ? 6 * matmul_params(model) * workload.training.seq_len
                                                             : 3 * model.flops_per_sample;
            result.physical_limit = item.count * peak / per_sample / per;
            result.speed_metric = MeasuredMetric::samples_per_s;
            result.speed_metric_scale = 1 / per;
        } else {
            return result;
        }
    } else {
        return result;
    }
    result.valid = std::isfinite(result.value) && result.value > 0;
    return result;
}

inline bool within_physical_limit(const Prediction& prediction) {
    return prediction.lower_is_better ? prediction.value >= prediction.physical_limit * (1 - 1e-9)
                                      : prediction.value <= prediction.physical_limit * (1 + 1e-9);
}

// The validation group of the figure a case measures (the keys of EfficiencyTable::speed_bands):
// models without tokens "non-llm", training "training", time to first token, prompt throughput
// and encoder serving "prefill", generation "decode".
inline std::string case_group(const ValidationCase& item, const Workload& workload) {
    if (!workload.model.is_transformer()) {
        return "non-llm";
    }
    if (workload.is_training()) {
        return "training";
    }
    const bool decode =
        item.metric == "decode_tokens_per_s" || item.metric == "output_tokens_per_s" || item.metric == "tpot_s";
    return decode && workload.inference.output_tokens > 0 ? "decode" : "prefill";
}

// Workloads and catalog lookups, loaded once per case.
struct PreparedCase {
    ValidationCase item;
    Workload workload;
    const GpuSpec* gpu = nullptr;
    PerfQuery query;
    std::string group;   // the figure's validation group (case_group)
    std::string vendor;  // the GPU's vendor, lower case
};

inline std::vector<PreparedCase> prepare(const std::vector<ValidationCase>& cases, const Catalog& catalog,
                                         const ModelLibrary& models) {
    const LoadContext context{&catalog, &models};
    std::vector<PreparedCase> prepared;
    for (const ValidationCase& item : cases) {
        PreparedCase entry{item, load_workload_file(item.file, context), catalog.find(item.gpu), {}, {}, {}};
        if (entry.gpu == nullptr) {
            throw std::runtime_error("case " + item.id + ": unknown GPU " + item.gpu);
        }
        if (!item.stack.empty()) {
            // A stack class (optimized, llama.cpp, eager) or an engine name (tensorrt-llm, vllm-rocm, ...).
            if (const std::optional<ServingStack> stack = parse_serving_stack(item.stack)) {
                entry.query.stack = *stack;
            } else if (is_known_engine(item.stack)) {
                entry.query.stack = stack_of_engine(item.stack);
                entry.query.engine = item.stack;
            } else {
                throw std::runtime_error("case " + item.id + ": unknown stack " + item.stack);
            }
        }
        const FittingLayout fitting = fitting_layout(entry.workload, *entry.gpu, item.count, entry.query.stack);
        if (!fitting.found()) {
            throw std::runtime_error("case " + item.id + ": no layout");
        }
        entry.query.layout = fitting.layout;
        entry.group = case_group(item, entry.workload);
        for (const char letter : entry.gpu->vendor) {
            entry.vendor += static_cast<char>(std::tolower(static_cast<unsigned char>(letter)));
        }
        prepared.push_back(std::move(entry));
    }
    return prepared;
}

inline Prediction predict(const PreparedCase& entry, const EfficiencyTable& efficiency) {
    const PerfEstimate estimate = estimate_perf(entry.workload, *entry.gpu, entry.query, efficiency);
    return read_prediction(entry.item, entry.workload, *entry.gpu, estimate);
}

// predicted / measured − 1.
inline double signed_error(const Prediction& prediction, const ValidationCase& item) {
    return (prediction.value - item.measured) / item.measured;
}

// Nearest-rank percentile: the smallest value with at least `fraction` of the set at or below it.
// The minimum of `loss` over [low, high] by golden-section search: `iterations` narrowing steps,
// ties to the lower side (median losses are flat in places); the middle of the last bracket.
inline double golden_section_minimum(double low, double high, int iterations,
                                     const std::function<double(double)>& loss) {
    const double ratio = (std::sqrt(5.0) - 1) / 2;
    double a = high - ratio * (high - low);
    double b = low + ratio * (high - low);
    double loss_a = loss(a);
    double loss_b = loss(b);
    for (int iteration = 0; iteration < iterations; ++iteration) {
        if (loss_a <= loss_b) {
            high = b;
            b = a;
            loss_b = loss_a;
            a = high - ratio * (high - low);
            loss_a = loss(a);
        } else {
            low = a;
            a = b;
            loss_a = loss_b;
            b = low + ratio * (high - low);
            loss_b = loss(b);
        }
    }
    return (low + high) / 2;
}

inline double percentile_of(std::vector<double> values, double fraction) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

}  // namespace gpusel::validation
