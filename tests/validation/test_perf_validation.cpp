// Predicts every published measurement in tests/validation/perf/cases.yaml, prints case,
// measured, predicted and error, and asserts the accuracy targets (docs/perf-model.md, "Validation"): median absolute error
// <= 20 %, 90th percentile <= 40 %, and no prediction beyond the physical limit (peak FLOPs,
// peak bandwidth) of the hardware it ran on.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "io/yaml.hpp"
#include "perf/perf.hpp"

namespace {

using namespace gpusel;

const std::string perf_dir = std::string(GPUSEL_SOURCE_DIR) + "/tests/validation/perf/";

struct Case {
    std::string id, file, gpu, metric, source, stack, publication;
    int count = 1;
    double measured = 0;
};

std::vector<Case> load_cases() {
    const std::string path = perf_dir + "cases.yaml";
    const YamlNode root = read_yaml_file(path);
    Diagnostics diagnostics(path);
    MapReader top(root, "", diagnostics);
    int format = 0;
    top.integer("format", format, 1, 1);
    std::vector<Case> cases;
    if (const YamlNode* list = top.node("cases")) {
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            MapReader reader(list->items[i], fmt::format("cases[{}]", i), diagnostics);
            Case item;
            for (const char* key : {"id", "file", "gpu", "count", "metric", "measured", "source"}) {
                reader.require(key);
            }
            reader.text("id", item.id);
            reader.text("file", item.file);
            reader.text("gpu", item.gpu);
            reader.integer("count", item.count, 1, 100000);
            reader.text("stack", item.stack);
            reader.text("metric", item.metric);
            reader.number("measured", item.measured, UnitKind::plain, 0, 1e12, true);
            reader.text("source", item.source);
            reader.text("publication", item.publication);
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

// The largest dense rate the GPU has for any matrix precision; GeForce cards run FP16 with FP16
// accumulation at twice the rate the catalog lists (FP32 accumulate).
double max_peak_flops(const GpuSpec& gpu) {
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
    double value = 0;
    double physical_limit = 0;  // the predicted value must not exceed this (times: not go below)
    bool lower_is_better = false;
};

Prediction predict(const Case& item, const Workload& workload, const GpuSpec& gpu, const PerfEstimate& estimate) {
    Prediction result;
    const Layout& layout = estimate.layout;
    const double shards = layout.tensor_parallel;  // pipeline stages run one after another
    const double replicas = layout.data_parallel;
    const double bandwidth = gpu.memory_bandwidth_bytes_per_s;
    const double peak = max_peak_flops(gpu);
    const ModelSpec& model = workload.model;
    // Bytes every decode step must read and FLOPs every token needs, at minimum.
    const double weights = matmul_params(model) * bits_per_weight(workload.weights) / 8;
    const double flops_per_token = 2 * matmul_params(model);
    if (item.metric == "decode_tokens_per_s") {
        result.value = 1 / estimate.inference->tpot_s;
        result.physical_limit = shards * bandwidth / weights;
    } else if (item.metric == "prefill_tokens_per_s") {
        result.value = estimate.inference->prefill_tokens_per_s;
        result.physical_limit = replicas * shards * peak / flops_per_token;
    } else if (item.metric == "ttft_s") {
        result.value = estimate.inference->ttft_s;
        result.physical_limit = workload.inference.input_tokens * flops_per_token / (shards * peak);
        result.lower_is_better = true;
    } else if (item.metric == "output_tokens_per_s") {
        const double batch = estimate.inference->batch;
        result.value = estimate.inference->output_tokens_per_s;
        result.physical_limit =
            replicas * std::min(batch * shards * bandwidth / weights, shards * peak / flops_per_token);
    } else if (item.metric == "training_tokens_per_s" || item.metric == "training_tokens_per_s_per_gpu") {
        const double per = item.metric == "training_tokens_per_s" ? 1 : item.count;
        result.value = estimate.training->tokens_per_s / per;
        const Precision precision = workload.precision == Precision::fp8 ? Precision::fp8 : workload.precision;
        result.physical_limit = item.count * gpu.peak_flops_per_s(precision) / (6 * matmul_params(model)) / per;
    } else if (item.metric == "mfu") {
        result.value = estimate.training->mfu;
        result.physical_limit = 1;
    } else if (item.metric == "samples_per_s") {
        if (estimate.training) {
            result.value = estimate.training->samples_per_s;
            const double per_sample = model.is_transformer()
                                          ? 6 * matmul_params(model) * workload.training.seq_len
                                          : 3 * model.flops_per_sample;
            result.physical_limit = item.count * peak / per_sample;
        } else {
            result.value = estimate.inference->requests_per_s;
            result.physical_limit = item.count * peak / model.flops_per_sample;
        }
    } else {
        FAIL("unknown metric " << item.metric << " in case " << item.id);
    }
    return result;
}

double percentile_of(std::vector<double> values, double fraction) {
    std::sort(values.begin(), values.end());
    // Nearest-rank percentile: the smallest value with at least `fraction` of the set at or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

}  // namespace

TEST_CASE("perf model against published measurements", "[validation][perf]") {
    const Catalog catalog = builtin_catalog();
    const ModelLibrary models = builtin_models();
    const EfficiencyTable efficiency = builtin_efficiency();
    const LoadContext context{&catalog, &models};
    const std::vector<Case> cases = load_cases();
    REQUIRE(cases.size() >= 30);

    std::vector<double> errors;
    std::string table = fmt::format("{:<34} {:<15} {:>5} {:<29} {:>12} {:>12} {:>8}\n", "case", "gpu", "count",
                                    "metric", "measured", "predicted", "error");
    int beyond_limit = 0;
    for (const Case& item : cases) {
        INFO("case " << item.id);
        const GpuSpec* gpu = catalog.find(item.gpu);
        REQUIRE(gpu != nullptr);
        const Workload workload = load_workload_file(perf_dir + item.file, context);
        PerfQuery query;
        if (!item.stack.empty()) {
            const std::optional<ServingStack> stack = parse_serving_stack(item.stack);
            REQUIRE(stack.has_value());
            query.stack = *stack;
        }
        const FittingLayout fitting = fitting_layout(workload, *gpu, item.count, query.stack);
        REQUIRE(fitting.found());
        query.layout = fitting.layout;
        const PerfEstimate estimate = estimate_perf(workload, *gpu, query, efficiency);
        REQUIRE((estimate.training.has_value() || estimate.inference.has_value()));
        const Prediction prediction = predict(item, workload, *gpu, estimate);
        REQUIRE(std::isfinite(prediction.value));
        REQUIRE(prediction.value > 0);
        const double error = (prediction.value - item.measured) / item.measured;
        errors.push_back(std::abs(error));
        const bool within_limit = prediction.lower_is_better ? prediction.value >= prediction.physical_limit
                                                             : prediction.value <= prediction.physical_limit;
        if (!within_limit) {
            ++beyond_limit;
        }
        CHECK(within_limit);
        table += fmt::format("{:<34} {:<15} {:>5} {:<29} {:>12.5g} {:>12.5g} {:>+7.1f}%{}\n", item.id, item.gpu,
                             item.count, item.metric, item.measured, prediction.value, 100 * error,
                             within_limit ? "" : "  BEYOND PHYSICAL LIMIT");
    }
    const double median = percentile_of(errors, 0.5);
    const double p90 = percentile_of(errors, 0.9);
    const double worst = percentile_of(errors, 1.0);
    table += fmt::format("\n{} cases: median absolute error {:.1f} % (target <= 20 %), 90th percentile {:.1f} % "
                         "(target <= 40 %), worst {:.1f} %, beyond physical limit: {}\n",
                         errors.size(), 100 * median, 100 * p90, 100 * worst, beyond_limit);
    std::cout << table << std::flush;
    CHECK(median <= 0.20);
    CHECK(p90 <= 0.40);
    CHECK(beyond_limit == 0);
}
