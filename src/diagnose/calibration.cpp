// `gpusel diagnose --write-calibration FILE`: the capture's measurements as calibration points
// in the workload format (src/inputs/workload_calibration.cpp reads them), so that the speed the
// job showed can correct the model's (docs/perf-model.md, "Calibration").
//
// Only speeds become points. A framebuffer figure from nvidia-smi or DCGM is what the device
// shows: allocations plus the CUDA context, the allocator's cache and, for a paged serving
// engine, its whole pre-allocation. calibration.memory takes the allocated peak at a micro-batch
// (torch.cuda.max_memory_allocated()), so writing the device figure there would teach the
// memory model the wrong quantity; it is written as a comment. Utilisation is no speed either.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"
#include "diagnose/diagnose.hpp"

namespace gpusel {

namespace {

// YAML plain scalars: the figures are numbers; ids are catalog ids (letters, digits, '-', '.').
std::string number(double value) {
    return fmt::format("{:g}", value);
}

// A comment line of provenance; the text may carry a file name: line ends would end the comment.
std::string comment(const std::string& text) {
    std::string line = "# ";
    for (const char c : text) {
        line += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return line + "\n";
}

}  // namespace

std::string calibration_yaml(const Diagnosis& diagnosis, const GpuSpec* gpu) {
    const ServingContext& serving = diagnosis.serving;
    const int count = static_cast<int>(std::max<std::size_t>(diagnosis.job_gpus.size(), 1));
    const std::optional<int> batch = serving.running_requests && *serving.running_requests >= 0.5
                                         ? std::optional<int>(static_cast<int>(std::lround(*serving.running_requests)))
                                         : std::nullopt;
    const std::string at_running =
        serving.running_requests ? fmt::format(", at {:g} running requests on average", *serving.running_requests) : "";
    struct Point {
        std::string provenance;
        std::string metric;
        double measured = 0;
        std::optional<int> batch;
    };
    std::vector<Point> points;
    if (serving.output_tokens_per_s && *serving.output_tokens_per_s > 0) {
        points.push_back(Point{fmt::format("from {}: {}'s generated-token counter over the capture{}",
                                           serving.metrics_source, serving.engine, at_running),
                               "output_tokens_per_s", *serving.output_tokens_per_s, batch});
    }
    // The model's tpot is one request alone on a replica; under load a token's time also holds the
    // batch's other sequences and prefills. As gpusel calibrate does (docs/calibrate.md), it is a
    // point only where the server ran one request at a time.
    const bool one_at_a_time = serving.running_requests && *serving.running_requests <= 1;
    if (serving.tpot_s && *serving.tpot_s > 0 && one_at_a_time) {
        points.push_back(Point{fmt::format("from {}: {}'s mean time per output token{} (one request at a time, "
                                           "as the model reads tpot)",
                                           serving.metrics_source, serving.engine, at_running),
                               "tpot", *serving.tpot_s, std::nullopt});
    }
    if (points.empty()) {
        throw UsageError(
            "--write-calibration: the capture measured nothing a calibration point can hold (a speed: output "
            "tokens/s or time per output token); GPU utilisation and framebuffer use are no speeds. Add the serving "
            "engine's metrics (--prom with vLLM's or SGLang's /metrics scrapes, with timestamps for rates); nothing "
            "was written");
    }
    if (gpu == nullptr) {
        throw UsageError(
            "--write-calibration: pass --gpu ID (the catalog id of the GPUs the capture ran on): every calibration "
            "point names its GPU; nothing was written");
    }
    std::string out;
    out += "# Written by gpusel diagnose --write-calibration: what the capture measured (docs/diagnose.md).\n";
    out += "# The calibration section of a workload file (docs/workload.md, calibration).\n";
    out += "calibration:\n";
    out += "  speed:\n";
    for (const Point& point : points) {
        out += "    " + comment(fmt::format("{}; {} x {}", point.provenance, count, gpu->id));
        // Durations carry their unit (the workload reader asks for one); rates are plain numbers.
        out += fmt::format("    - {{gpu: {}, count: {}, metric: {}, measured: {}{}{}}}\n", gpu->id, count, point.metric,
                           number(point.measured), point.metric == "tpot" ? "s" : "",
                           point.batch ? fmt::format(", batch: {}", *point.batch) : "");
    }
    out += "# Measured, but not calibration points:\n";
    if (serving.tpot_s && *serving.tpot_s > 0 && !one_at_a_time) {
        out +=
            comment(fmt::format("  mean time per output token {:.4g} s{}: under load, not the one request alone "
                                "the model's tpot is",
                                *serving.tpot_s, at_running));
    }
    if (diagnosis.gpu_busy_pct) {
        out +=
            comment(fmt::format("  GPU utilisation {:.2f} % ({})", *diagnosis.gpu_busy_pct, diagnosis.gpu_busy_source));
    }
    if (serving.requests_per_s) {
        out += comment(fmt::format("  request rate {:g} req/s ({})", *serving.requests_per_s, serving.requests_source));
    }
    if (serving.prompt_tokens_per_s) {
        out +=
            comment(fmt::format("  prompt tokens {:g}/s ({})", *serving.prompt_tokens_per_s, serving.metrics_source));
    }
    if (serving.kv_cache_used_pct) {
        out += comment(
            fmt::format("  KV cache {:g} % used on average ({})", *serving.kv_cache_used_pct, serving.metrics_source));
    }
    out += comment(
        "  framebuffer use is what the device shows (allocations, CUDA context, caches, a serving engine's "
        "pre-allocation); calibration.memory takes the allocated peak at a micro-batch");
    return out;
}

}  // namespace gpusel
