// Serving benchmark results, engine metrics and GPU telemetry as calibration points
// (serving_readers.hpp). The formats are the tools' own:
//  - vLLM benchmarks/serve.py (`vllm bench serve --save-result`) and SGLang
//    python/sglang/bench_serving.py (`--output-file`, appended JSON lines) write output_throughput
//    (tokens/s of the run), max_concurrency (null when unset) and median_ttft_ms /
//    median_tpot_ms; inputs/vllm_benchmark.cpp reads those figures for both;
//  - trtllm-bench prints its report as "Label (unit):   value" lines under "= SECTION" banners
//    (TensorRT-LLM docs, "TensorRT-LLM Benchmarking", sample output);
//  - the engines' /metrics and the GPU captures go through the telemetry readers and diagnose's
//    serving context, the same figures `gpusel diagnose` shows.

#include "calibrate/serving_readers.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/error.hpp"
#include "diagnose/diagnose.hpp"
#include "inputs/vllm_benchmark.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

namespace {

std::string_view trimmed(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const std::size_t last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

// The lines of `text`, numbered from 1 (a final line without '\n' included).
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
    int number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        const std::string_view line =
            text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
        if (!visit(line, ++number)) {
            return;
        }
        if (end == std::string_view::npos) {
            return;
        }
        start = end + 1;
    }
}

std::string_view first_content_line(std::string_view text) {
    std::string_view found;
    for_each_line(text, [&](std::string_view line, int) {
        if (trimmed(line).empty()) {
            return true;
        }
        found = trimmed(line);
        return false;
    });
    return found;
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

bool is_json_object(std::string_view text) {
    const std::string_view content = trimmed(text);
    return !content.empty() && content.front() == '{';
}

InputError file_error(const std::string& path, int line, std::string message) {
    return InputError(Diagnostic{path, {line, line > 0 ? 1 : 0}, "", std::move(message)});
}

// Every point names its GPU; none of these files does.
std::string measured_gpu(const MeasurementContext& context, const std::string& path, std::string_view format) {
    if (context.gpu.empty()) {
        throw file_error(path, 0,
                         fmt::format("a {} does not name the GPU it ran on: pass --gpu ID (its catalog id)", format));
    }
    return context.gpu;
}

// How many GPUs served together: --count, else one (said in the notes, since the file is silent).
int measured_count(MeasuredSource& source, const MeasurementContext& context) {
    if (context.count > 0) {
        return context.count;
    }
    source.notes.push_back(
        "1 GPU assumed: the file does not say how many GPUs served (--count N for a tensor-parallel server)");
    return 1;
}

void add_point(MeasuredSource& source, int count, MeasuredMetric metric, double measured, int batch) {
    SpeedCalibrationPoint point;
    point.gpu = source.gpu;
    point.count = count;
    point.metric = metric;
    point.measured = measured;
    point.batch = batch;
    point.from = source.path;
    source.speed.push_back(point);
}

std::string milliseconds(double seconds) {
    return fmt::format("{:g} ms", seconds * 1000);
}

// The points of one benchmark run (vLLM's result, or one line of SGLang's). `where` prefixes the
// provenance ("line 2: ") when a file holds several runs.
void add_benchmark_run(MeasuredSource& source, const VllmBenchmarkResult& run, int count,
                       const MeasurementContext& context, const std::string& where) {
    int batch = run.max_concurrency;
    std::string at;
    if (batch > 0) {
        at = fmt::format("at max_concurrency {}", batch);
    } else if (context.batch > 0) {
        batch = context.batch;
        at = fmt::format("with no max_concurrency recorded: at --batch {}", batch);
    } else {
        at = fmt::format(
            "with no max_concurrency recorded ({}): at the workload's batch",
            run.request_rate ? fmt::format("request rate {:g} req/s", *run.request_rate) : "requests sent at once");
    }
    add_point(source, count, MeasuredMetric::output_tokens_per_s, run.output_tokens_per_s, batch);
    source.provenance.push_back(fmt::format("{}output_throughput {:g} tok/s {}", where, run.output_tokens_per_s, at));
    if (!run.ttft_s && !run.tpot_s) {
        return;
    }
    if (batch == 1) {
        if (run.ttft_s) {
            add_point(source, count, MeasuredMetric::ttft, *run.ttft_s, 0);
            source.provenance.push_back(
                fmt::format("{}median_ttft_ms {} at one request at a time", where, milliseconds(*run.ttft_s)));
        }
        if (run.tpot_s) {
            add_point(source, count, MeasuredMetric::tpot, *run.tpot_s, 0);
            source.provenance.push_back(
                fmt::format("{}median_tpot_ms {} at one request at a time", where, milliseconds(*run.tpot_s)));
        }
        return;
    }
    source.notes.push_back(fmt::format(
        "{}median TTFT {} and TPOT {} are not points: they were measured {}, and the model's ttft and tpot are one "
        "request alone (a run with --max-concurrency 1 measures them)",
        where, run.ttft_s ? milliseconds(*run.ttft_s) : "-", run.tpot_s ? milliseconds(*run.tpot_s) : "-",
        batch > 1 ? fmt::format("with {} requests at a time", batch) : std::string("under an open request rate")));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// vLLM and SGLang benchmark results

bool is_vllm_bench_serve(std::string_view text) {
    return is_json_object(text) && contains(text, "\"output_throughput\"") &&
           !contains(text, "\"median_e2e_latency_ms\"");
}

MeasuredSource read_vllm_bench_serve(std::string_view text, const std::string& path,
                                     const MeasurementContext& context) {
    MeasuredSource source;
    source.path = path;
    source.format = MeasurementFormat::vllm_bench_serve;
    const VllmBenchmarkResult run = parse_vllm_benchmark(text, path);
    source.gpu = measured_gpu(context, path, "vllm bench serve result");
    const int count = measured_count(source, context);
    add_benchmark_run(source, run, count, context, "");
    return source;
}

// SGLang names its end-to-end latency e2e_latency (vLLM: e2el), which tells the results apart.
bool is_sglang_bench_serving(std::string_view text) {
    return is_json_object(text) && contains(text, "\"output_throughput\"") &&
           contains(text, "\"median_e2e_latency_ms\"");
}

MeasuredSource read_sglang_bench_serving(std::string_view text, const std::string& path,
                                         const MeasurementContext& context) {
    MeasuredSource source;
    source.path = path;
    source.format = MeasurementFormat::sglang_bench_serving;
    source.gpu = measured_gpu(context, path, "SGLang bench_serving result");
    const int count = measured_count(source, context);
    std::vector<std::pair<int, VllmBenchmarkResult>> runs;
    for_each_line(text, [&](std::string_view line, int number) {
        if (trimmed(line).empty()) {
            return true;
        }
        try {
            runs.emplace_back(number, parse_vllm_benchmark(line, path));
        } catch (const InputError&) {
            throw file_error(path, number,
                             "expected one bench_serving result (a JSON object with a positive output_throughput) "
                             "per line");
        }
        return true;
    });
    for (const auto& [line, run] : runs) {
        add_benchmark_run(source, run, count, context, runs.size() > 1 ? fmt::format("line {}: ", line) : "");
    }
    return source;
}

// ---------------------------------------------------------------------------------------------
// trtllm-bench

bool is_trtllm_bench(std::string_view text) {
    return contains(text, "PERFORMANCE OVERVIEW") && contains(text, "Total Output Throughput (tokens/sec)");
}

MeasuredSource read_trtllm_bench(std::string_view text, const std::string& path, const MeasurementContext& context) {
    MeasuredSource source;
    source.path = path;
    source.format = MeasurementFormat::trtllm_bench;
    // "Label (unit):   value": the label is everything before the last ':' of the line.
    struct Field {
        std::string value;
        int line = 0;
        int column = 0;
    };
    std::map<std::string, Field, std::less<>> fields;
    for_each_line(text, [&](std::string_view line, int number) {
        const std::size_t colon = line.rfind(':');
        if (colon == std::string_view::npos) {
            return true;
        }
        const std::string_view label = trimmed(line.substr(0, colon));
        const std::string_view value = trimmed(line.substr(colon + 1));
        if (!label.empty() && !value.empty()) {
            const std::size_t column = line.find(value, colon + 1);
            fields.try_emplace(std::string(label), Field{std::string(value), number, static_cast<int>(column) + 1});
        }
        return true;
    });
    const auto number = [&](std::string_view label) -> std::optional<double> {
        const auto found = fields.find(label);
        if (found == fields.end() || found->second.value == "None") {
            return std::nullopt;
        }
        const Field& field = found->second;
        std::size_t used = 0;
        double value = 0;
        try {
            value = std::stod(field.value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != field.value.size() || !std::isfinite(value) || value < 0) {
            throw InputError(Diagnostic{path,
                                        {field.line, field.column},
                                        std::string(label),
                                        fmt::format("'{}' is not a number", field.value)});
        }
        return value;
    };
    const std::optional<double> output = number("Total Output Throughput (tokens/sec)");
    if (!output || !(*output > 0)) {
        throw file_error(path, 0, "no positive \"Total Output Throughput (tokens/sec)\" in the PERFORMANCE OVERVIEW");
    }
    source.gpu = measured_gpu(context, path, "trtllm-bench report");
    // The run's GPUs: tensor × pipeline parallel, as the report's WORLD section prints them.
    const std::optional<double> tensor = number("TP Size");
    const std::optional<double> pipeline = number("PP Size");
    int count = 0;
    if (tensor && *tensor >= 1) {
        count = static_cast<int>(std::lround(*tensor * (pipeline && *pipeline >= 1 ? *pipeline : 1)));
        if (context.count > 0 && context.count != count) {
            source.notes.push_back(fmt::format(
                "--count {} differs from the report's TP × PP ({}); the report's is used", context.count, count));
        }
    } else {
        count = measured_count(source, context);
    }
    // trtllm-bench --concurrency caps the requests in flight, and the report prints the average
    // it reached ("Number of concurrent requests"); --batch, when given, is taken instead.
    int batch = context.batch;
    std::string at = fmt::format("at --batch {}", batch);
    if (batch == 0) {
        if (const std::optional<double> concurrent = number("Number of concurrent requests");
            concurrent && *concurrent >= 0.5) {
            batch = static_cast<int>(std::lround(*concurrent));
            at = fmt::format("at {:g} concurrent requests on average (batch {})", *concurrent, batch);
        } else {
            at = "at the workload's batch (the report gives no concurrency)";
        }
    }
    add_point(source, count, MeasuredMetric::output_tokens_per_s, *output, batch);
    source.provenance.push_back(
        fmt::format("Total Output Throughput {:g} tokens/sec on TP × PP = {} GPUs, {}", *output, count, at));
    const std::optional<double> ttft = number("Average time-to-first-token [TTFT] (ms)");
    const std::optional<double> tpot = number("Average time-per-output-token [TPOT] (ms)");
    if (!ttft && !tpot) {
        return source;
    }
    if (batch == 1) {
        if (ttft && *ttft > 0) {
            add_point(source, count, MeasuredMetric::ttft, *ttft / 1000, 0);
            source.provenance.push_back(fmt::format("Average TTFT {:g} ms at one request at a time", *ttft));
        }
        if (tpot && *tpot > 0) {
            add_point(source, count, MeasuredMetric::tpot, *tpot / 1000, 0);
            source.provenance.push_back(fmt::format("Average TPOT {:g} ms at one request at a time", *tpot));
        }
    } else {
        source.notes.push_back(
            fmt::format("average TTFT {} ms and TPOT {} ms are not points: the run was not one request at a time, and "
                        "the model's ttft and tpot are one request alone (trtllm-bench --concurrency 1 --streaming)",
                        ttft ? fmt::format("{:g}", *ttft) : "-", tpot ? fmt::format("{:g}", *tpot) : "-"));
    }
    return source;
}

// ---------------------------------------------------------------------------------------------
// Engine metrics and GPU telemetry

bool is_prometheus_metrics(std::string_view text) {
    bool found = false;
    for_each_line(text, [&](std::string_view line, int) {
        const std::string_view content = trimmed(line);
        if (content.rfind("vllm:", 0) == 0 || content.rfind("sglang:", 0) == 0) {
            found = true;
            return false;
        }
        return true;
    });
    return found;
}

MeasuredSource read_prometheus_metrics(std::string_view text, const std::string& path,
                                       const MeasurementContext& context) {
    MeasuredSource source;
    source.path = path;
    source.format = MeasurementFormat::prometheus_metrics;
    DiagnoseInputs inputs;
    inputs.prometheus = parse_prometheus_text(text, path);
    // diagnose reads the engine's counters, gauges and histograms into its serving context: the
    // figures `gpusel diagnose` shows and --write-calibration writes.
    const ServingContext serving = diagnose(inputs).serving;
    source.notes.insert(source.notes.end(), serving.notes.begin(), serving.notes.end());
    // The histograms' means cover every request of the span (since start-up for one scrape):
    // one request alone only when the server ran one at a time.
    const bool alone =
        context.batch == 1 || (context.batch == 0 && serving.running_requests && *serving.running_requests <= 1.0);
    const bool has_point = serving.output_tokens_per_s || ((serving.ttft_s || serving.tpot_s) && alone);
    if (has_point) {
        source.gpu = measured_gpu(context, path, "metrics scrape");
    }
    if (!serving.output_tokens_per_s) {
        source.notes.push_back(
            "no output tokens/s: the generated-token counter needs two scrapes with timestamps (through Prometheus: "
            "/federate or a range query)");
    }
    const int count = has_point ? measured_count(source, context) : 0;
    int batch = context.batch;
    if (batch == 0 && serving.running_requests && *serving.running_requests >= 0.5) {
        batch = static_cast<int>(std::lround(*serving.running_requests));
    }
    const std::string running = context.batch == 1 ? std::string("one request at a time (--batch 1)")
                                : serving.running_requests
                                    ? fmt::format("running-requests gauge {:g} on average", *serving.running_requests)
                                    : std::string("no running-requests gauge");
    if (serving.output_tokens_per_s) {
        add_point(source, count, MeasuredMetric::output_tokens_per_s, *serving.output_tokens_per_s, batch);
        source.provenance.push_back(
            fmt::format("{}'s generated-token counter: {:g} tok/s between the scrapes, {}{}", serving.engine,
                        *serving.output_tokens_per_s, running,
                        context.batch > 0 ? fmt::format(" (--batch {} used)", context.batch) : std::string()));
    }
    if (serving.ttft_s || serving.tpot_s) {
        if (alone) {
            if (serving.ttft_s) {
                add_point(source, count, MeasuredMetric::ttft, *serving.ttft_s, 0);
                source.provenance.push_back(
                    fmt::format("{}'s time-to-first-token histogram: mean {} (_sum / _count), {}", serving.engine,
                                milliseconds(*serving.ttft_s), running));
            }
            if (serving.tpot_s) {
                add_point(source, count, MeasuredMetric::tpot, *serving.tpot_s, 0);
                source.provenance.push_back(
                    fmt::format("{}'s inter-token latency histogram: mean {} (_sum / _count), {}", serving.engine,
                                milliseconds(*serving.tpot_s), running));
            }
        } else {
            source.notes.push_back(fmt::format(
                "mean TTFT {} and TPOT {} are not points: {}, and the model's ttft and tpot are one request alone "
                "(--batch 1 when the server ran one request at a time)",
                serving.ttft_s ? milliseconds(*serving.ttft_s) : "-",
                serving.tpot_s ? milliseconds(*serving.tpot_s) : "-",
                serving.running_requests ? running : "the scrape has no running-requests gauge"));
        }
    }
    if (serving.kv_cache_used_pct) {
        source.notes.push_back(
            fmt::format("KV cache {:g} % used on average (no calibration point: the model sizes "
                        "the cache from the workload)",
                        *serving.kv_cache_used_pct));
    }
    if (serving.requests_per_s) {
        source.notes.push_back(fmt::format("{:g} requests/s finished between the scrapes", *serving.requests_per_s));
    }
    return source;
}

namespace {

enum class Capture { none, dmon, dcgmi, query, prometheus };

Capture capture_kind(std::string_view text) {
    const std::string_view first = first_content_line(text);
    if (first.rfind("# gpu", 0) == 0) {
        return Capture::dmon;
    }
    if (first.rfind("# Entity", 0) == 0 || first.rfind("#Entity", 0) == 0) {
        return Capture::dcgmi;
    }
    if (first.rfind("timestamp,", 0) == 0 || first.rfind("index,", 0) == 0 || contains(first, "utilization.gpu")) {
        return Capture::query;
    }
    if (is_json_object(text) ? contains(text, "\"resultType\"") : contains(text, "DCGM_FI_")) {
        return Capture::prometheus;
    }
    return Capture::none;
}

}  // namespace

bool is_gpu_telemetry(std::string_view text) {
    return capture_kind(text) != Capture::none;
}

MeasuredSource read_gpu_telemetry(std::string_view text, const std::string& path, const MeasurementContext& context) {
    MeasuredSource source;
    source.path = path;
    source.format = MeasurementFormat::gpu_telemetry;
    source.gpu = context.gpu;
    DiagnoseInputs inputs;
    switch (capture_kind(text)) {
        case Capture::dmon:
            inputs.dmon = parse_nvidia_smi_dmon(text, path);
            break;
        case Capture::dcgmi:
            inputs.dcgm = parse_dcgmi_dmon(text, path);
            break;
        case Capture::query:
            inputs.query = parse_nvidia_smi_query(text, path);
            break;
        case Capture::prometheus:
            inputs.prometheus = parse_prometheus(text, path);
            break;
        case Capture::none:
            throw file_error(path, 0, "not a GPU telemetry capture");
    }
    const Diagnosis diagnosis = diagnose(inputs);
    for (const InputSummary& input : diagnosis.inputs) {
        source.provenance.push_back(fmt::format("{}: {} samples of GPU{} {}", to_string(input.kind), input.samples,
                                                input.gpus.size() == 1 ? "" : "s", fmt::join(input.gpus, ", ")));
    }
    if (diagnosis.gpu_busy_pct) {
        source.notes.push_back(
            fmt::format("GPU utilisation {:.2f} % on average ({}): no calibration point, "
                        "utilisation is no speed",
                        *diagnosis.gpu_busy_pct, diagnosis.gpu_busy_source));
    }
    source.notes.push_back(
        "framebuffer use is what the device shows (allocations, CUDA context, caches, a serving engine's "
        "pre-allocation), not the allocated peak calibration.memory takes (torch.cuda.max_memory_allocated)");
    return source;
}

}  // namespace gpusel
