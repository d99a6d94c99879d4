// The calibration section of a workload file: measured peak memory, measured speeds (typed in
// or read from a `vllm bench serve --save-result` file) and a serving engine's measured start-up
// memory, each point kept with where it was written so that a misfit can name it
// (docs/perf-model.md, "Calibration").

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "base/units.hpp"
#include "inputs/vllm_benchmark.hpp"
#include "inputs/workload_reader.hpp"

namespace gpusel {

using namespace inputs_detail;

namespace {

constexpr std::pair<MeasuredMetric, std::string_view> measured_metric_names[] = {
    {MeasuredMetric::training_tokens_per_s, "training_tokens_per_s"},
    {MeasuredMetric::samples_per_s, "samples_per_s"},
    {MeasuredMetric::output_tokens_per_s, "output_tokens_per_s"},
    {MeasuredMetric::decode_tokens_per_s, "decode_tokens_per_s"},
    {MeasuredMetric::prefill_tokens_per_s, "prefill_tokens_per_s"},
    {MeasuredMetric::images_per_s, "images_per_s"},
    {MeasuredMetric::ttft, "ttft"},
    {MeasuredMetric::tpot, "tpot"}};

}  // namespace

std::string_view to_string(MeasuredMetric metric) {
    return name_of(measured_metric_names, metric);
}

namespace inputs_detail {

void WorkloadReader::read_calibration(const YamlNode& node, const std::string& path) {
    MapReader reader(node, path, m_diagnostics);
    const auto read_points = [&](std::string_view key, auto&& read_point) {
        const YamlNode* list = reader.node(key);
        if (list == nullptr) {
            return;
        }
        if (list->kind != YamlNode::Kind::sequence) {
            reader.error(key, fmt::format("expected a list of measured points, got {}", kind_name(list->kind)));
            return;
        }
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            MapReader point(list->items[i], fmt::format("{}[{}]", reader.child_path(key), i), m_diagnostics);
            read_point(point);
            point.finish();
        }
    };
    read_points("memory", [&](MapReader& point) {
        MemoryCalibrationPoint value;
        point.require("gpu");
        point.require("micro_batch");
        point.require("peak");
        if (point.text("gpu", value.gpu)) {
            check_ids(point, "gpu", {value.gpu});
        }
        point.integer("micro_batch", value.micro_batch, 1, 1 << 20);
        point.number("peak", value.peak_bytes, UnitKind::bytes, 0, 1e13, true);
        point.text("from", value.from);
        m_workload.calibration.memory.push_back(value);
    });
    // `throughput: [{gpu, batch, tokens_per_s}]`: tokens/s of the whole job on one GPU.
    read_points("throughput", [&](MapReader& point) {
        SpeedCalibrationPoint value = speed_point_origin(point);
        point.require("gpu");
        point.require("tokens_per_s");
        if (point.text("gpu", value.gpu)) {
            check_ids(point, "gpu", {value.gpu});
        }
        point.integer("batch", value.batch, 1, 1 << 20);
        point.number("tokens_per_s", value.measured, UnitKind::plain, 0, 1e12, true);
        value.metric =
            m_workload.is_training() ? MeasuredMetric::training_tokens_per_s : MeasuredMetric::output_tokens_per_s;
        m_workload.calibration.speed.push_back(value);
    });
    read_points("speed", [&](MapReader& point) { read_speed_point(point); });
    // `serving_memory: [{gpu, tensor_parallel, weights, activation_peak, non_torch,
    // kv_cache_tokens, from}]`: a paged engine's start-up figures on one GPU of a replica.
    read_points("serving_memory", [&](MapReader& point) {
        ServingMemoryCalibrationPoint value;
        point.require("gpu");
        if (point.text("gpu", value.gpu)) {
            check_ids(point, "gpu", {value.gpu});
        }
        point.integer("tensor_parallel", value.tensor_parallel, 1, 1 << 10);
        point.number("weights", value.weights_bytes, UnitKind::bytes, 0, 1e13, true);
        point.number("activation_peak", value.activation_peak_bytes, UnitKind::bytes, 0, 1e13);
        point.number("non_torch", value.non_torch_bytes, UnitKind::bytes, 0, 1e13);
        double tokens = 0;
        if (point.number("kv_cache_tokens", tokens, UnitKind::plain, 1, 1e12) && tokens != std::floor(tokens)) {
            point.error("kv_cache_tokens", "expected a whole number of tokens");
        }
        value.kv_cache_tokens = static_cast<long long>(tokens);
        point.text("from", value.from);
        if (!point.has("weights") && !point.has("activation_peak") && !point.has("non_torch")) {
            point.error("weights", "a serving_memory point needs at least one of weights, activation_peak, non_torch");
        }
        m_workload.calibration.serving_memory.push_back(value);
    });
    reader.finish();
}

SpeedCalibrationPoint WorkloadReader::speed_point_origin(const MapReader& point) const {
    SpeedCalibrationPoint value;
    value.where.file = m_diagnostics.file();
    value.where.position = point.position();
    value.where.path = point.path();
    return value;
}

// {gpu, count, metric, measured, batch} typed in, or {gpu, count, vllm_benchmark: FILE}.
void WorkloadReader::read_speed_point(MapReader& point) {
    SpeedCalibrationPoint value = speed_point_origin(point);
    point.require("gpu");
    if (point.text("gpu", value.gpu)) {
        check_ids(point, "gpu", {value.gpu});
    }
    point.integer("count", value.count, 1, 1 << 20);
    point.integer("batch", value.batch, 1, 1 << 20);
    // `from:` names the measurement a point was read from (gpusel calibrate writes it); a
    // vllm_benchmark file replaces it with the file itself.
    point.text("from", value.from);
    static constexpr std::pair<SpeedCalibrationPoint::Run, std::string_view> run_names[] = {
        {SpeedCalibrationPoint::Run::training, "training"}, {SpeedCalibrationPoint::Run::inference, "inference"}};
    point.choice("kind", value.run, run_names);
    std::string file;
    if (point.text("vllm_benchmark", file)) {
        if (point.has("metric") || point.has("measured")) {
            point.error("vllm_benchmark", "give either vllm_benchmark or metric and measured, not both");
            return;
        }
        read_vllm_benchmark(point, file, value);
        return;
    }
    point.require("metric");
    point.require("measured");
    point.choice("metric", value.metric, measured_metric_names);
    const bool time = value.metric == MeasuredMetric::ttft || value.metric == MeasuredMetric::tpot;
    point.number("measured", value.measured, time ? UnitKind::seconds : UnitKind::plain, 0, 1e12, true);
    if (value.measured > 0) {
        m_workload.calibration.speed.push_back(value);
    }
}

// A `vllm bench serve --save-result` file: output tokens/s of the whole run, at its
// max_concurrency when recorded (the batch the engine ran).
void WorkloadReader::read_vllm_benchmark(MapReader& point, const std::string& file, SpeedCalibrationPoint& value) {
    const std::filesystem::path path = (m_base / file).lexically_normal();
    value.from = path.string();
    VllmBenchmarkResult result;
    try {
        result = parse_vllm_benchmark(read_input_file(path.string()), path.string());
    } catch (const InputError& error) {
        point.error("vllm_benchmark",
                    error.diagnostics().empty() ? std::string(error.what()) : error.diagnostics().front().message);
        return;
    }
    value.metric = MeasuredMetric::output_tokens_per_s;
    value.measured = result.output_tokens_per_s;
    if (value.batch == 0 && result.max_concurrency > 0) {
        value.batch = result.max_concurrency;
    }
    m_workload.calibration.speed.push_back(value);
}
}  // namespace inputs_detail

void append_calibration_file(const std::string& path, Workload& workload, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    diagnostics.throw_if_any();
    MapReader top(root, "", diagnostics);
    top.require("calibration");
    top.format_version();
    // The points are read into a copy, so that a file with an error changes nothing.
    Workload calibrated = workload;
    calibrated.calibration = {};
    if (const YamlNode* node = top.node("calibration")) {
        WorkloadReader reader(calibrated, diagnostics, context, directory_of(path), "");
        reader.read_calibration(*node, "calibration");
    }
    top.finish();
    diagnostics.throw_if_any();
    workload.calibration.memory.insert(workload.calibration.memory.end(), calibrated.calibration.memory.begin(),
                                       calibrated.calibration.memory.end());
    workload.calibration.speed.insert(workload.calibration.speed.end(), calibrated.calibration.speed.begin(),
                                      calibrated.calibration.speed.end());
    workload.calibration.serving_memory.insert(workload.calibration.serving_memory.end(),
                                               calibrated.calibration.serving_memory.begin(),
                                               calibrated.calibration.serving_memory.end());
}

}  // namespace gpusel
