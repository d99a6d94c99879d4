// What the job is: a serving engine or not, and the load it serves. A serving engine that pages
// its KV cache (vLLM, SGLang, TensorRT-LLM) claims a fixed share of the device at start-up (vLLM's
// gpu_memory_utilization, 0.9 by default; SGLang's mem_fraction_static; TensorRT-LLM's
// free_gpu_memory_fraction): nvidia-smi then shows the framebuffer nearly full whatever the
// load (vLLM docs, "Engine arguments", --gpu-memory-utilization). Read as memory pressure, that
// gives a lightly loaded server training remedies; read as what it is, low utilisation with
// reserved memory is a replica with spare capacity.

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"
#include "diagnose/internal.hpp"

namespace gpusel::diagnose_detail {

namespace {

// The engine a process or command names, by the names the engines give themselves: vLLM v1's
// engine core and workers set their titles to VLLM::EngineCore and VLLM::Worker_TP<n>, and
// `vllm serve`, `python -m sglang.launch_server` and `trtllm-serve` are commands of those names.
std::string engine_named(std::string_view name) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("vllm") != std::string::npos) {
        return "vllm";
    }
    if (lower.find("sglang") != std::string::npos) {
        return "sglang";
    }
    if (lower.find("trtllm") != std::string::npos || lower.find("tensorrt_llm") != std::string::npos ||
        lower.find("tensorrt-llm") != std::string::npos) {
        return "tensorrt-llm";
    }
    return "";
}

struct Detected {
    std::string engine;
    std::string source;
};

std::optional<Detected> detect_engine(const DiagnoseInputs& in) {
    if (in.processes) {
        for (const GpuProcess& process : in.processes->processes) {
            const std::string engine = engine_named(process.name);
            if (!engine.empty()) {
                return Detected{engine, fmt::format("process '{}'{} in {} (line {})", process.name,
                                                    process.gpu ? fmt::format(" on GPU {}", *process.gpu) : "",
                                                    in.processes->file, process.line)};
            }
        }
    }
    if (in.cpu) {
        for (const CpuProcess& process : in.cpu->processes) {
            const std::string engine = engine_named(process.command);
            if (!engine.empty()) {
                return Detected{
                    engine, fmt::format("process '{}' in {} (line {})", process.command, in.cpu->file, process.line)};
            }
        }
    }
    for (const std::optional<GpuTelemetry>* t : {&in.prometheus, &in.dcgm, &in.dmon, &in.query}) {
        if (*t && (*t)->serving.found()) {
            return Detected{(*t)->serving.engine, fmt::format("metric {} in {} (line {})", (*t)->serving.first_name,
                                                              (*t)->file, (*t)->serving.first_line)};
        }
    }
    return std::nullopt;
}

const std::vector<ServingPoint>* first_of(const ServingMetrics& metrics, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (const std::vector<ServingPoint>* points = metrics.get(name)) {
            return points;
        }
    }
    return nullptr;
}

// The increase of a counter per second over the capture: first to last scrape, which must both
// carry a timestamp. nullopt (with a note) otherwise, or when the counter went down (a restart).
std::optional<double> counter_rate(const std::vector<ServingPoint>* points, const std::string& what,
                                   std::vector<std::string>& notes) {
    if (points == nullptr || points->size() < 2) {
        return std::nullopt;
    }
    const ServingPoint& first = points->front();
    const ServingPoint& last = points->back();
    if (!first.time_s || !last.time_s || !(*last.time_s > *first.time_s)) {
        notes.push_back(
            fmt::format("{}: the scrapes carry no timestamps, so no rate per second: scrape through Prometheus "
                        "(/federate writes them) or use a range query",
                        what));
        return std::nullopt;
    }
    if (last.value < first.value) {
        notes.push_back(fmt::format("{}: the counter went down during the capture (the engine restarted)", what));
        return std::nullopt;
    }
    return (last.value - first.value) / (*last.time_s - *first.time_s);
}

std::optional<double> gauge_mean(const std::vector<ServingPoint>* points, double scale) {
    if (points == nullptr) {
        return std::nullopt;
    }
    double sum = 0;
    for (const ServingPoint& point : *points) {
        sum += point.value;
    }
    return sum / static_cast<double>(points->size()) * scale;
}

// Mean of a histogram over the capture (the increase of _sum over that of _count), else since
// the engine started (one scrape).
std::optional<double> histogram_mean(const ServingMetrics& metrics, const std::string& name) {
    const std::vector<ServingPoint>* sum = metrics.get(name + "_sum");
    const std::vector<ServingPoint>* count = metrics.get(name + "_count");
    if (sum == nullptr || count == nullptr || sum->size() != count->size()) {
        return std::nullopt;
    }
    const double d_sum = sum->back().value - (sum->size() > 1 ? sum->front().value : 0);
    const double d_count = count->back().value - (count->size() > 1 ? count->front().value : 0);
    if (!(d_count > 0) || d_sum < 0) {
        return std::nullopt;
    }
    return d_sum / d_count;
}

double rounded(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    return std::round(value * scale) / scale;
}

void read_engine_metrics(const GpuTelemetry& telemetry, ServingContext& context) {
    const ServingMetrics& metrics = telemetry.serving;
    context.metrics_source = telemetry.file;
    if (std::optional<double> rate =
            counter_rate(first_of(metrics, {"vllm:request_success_total", "sglang:num_requests_total"}),
                         telemetry.file + ": requests finished", context.notes)) {
        context.requests_per_s = rounded(*rate, 2);
        context.requests_source = fmt::format("the engine's finished-request counter in {}", telemetry.file);
    }
    if (std::optional<double> rate =
            counter_rate(first_of(metrics, {"vllm:generation_tokens_total", "sglang:generation_tokens_total"}),
                         telemetry.file + ": generated tokens", context.notes)) {
        context.output_tokens_per_s = rounded(*rate, 2);
    }
    if (std::optional<double> rate =
            counter_rate(first_of(metrics, {"vllm:prompt_tokens_total", "sglang:prompt_tokens_total"}),
                         telemetry.file + ": prompt tokens", context.notes)) {
        context.prompt_tokens_per_s = rounded(*rate, 2);
    }
    if (std::optional<double> running =
            gauge_mean(first_of(metrics, {"vllm:num_requests_running", "sglang:num_running_reqs"}), 1)) {
        context.running_requests = rounded(*running, 2);
    }
    // vLLM's KV-cache usage is a ratio 0..1 (kv_cache_usage_perc in v1, gpu_cache_usage_perc in
    // v0), as is SGLang's token_usage.
    if (std::optional<double> used = gauge_mean(
            first_of(metrics, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"}), 100)) {
        context.kv_cache_used_pct = rounded(*used, 2);
    }
    // Newer vLLM names the histogram inter_token_latency (and may print the old name beside it);
    // SGLang's are sglang:inter_token_latency_seconds and sglang:time_to_first_token_seconds.
    std::optional<double> tpot;
    for (const char* name : {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds",
                             "sglang:inter_token_latency_seconds"}) {
        if (!tpot) {
            tpot = histogram_mean(metrics, name);
        }
    }
    if (tpot) {
        context.tpot_s = rounded(*tpot, 6);
    }
    std::optional<double> ttft = histogram_mean(metrics, "vllm:time_to_first_token_seconds");
    if (!ttft) {
        ttft = histogram_mean(metrics, "sglang:time_to_first_token_seconds");
    }
    if (ttft) {
        context.ttft_s = rounded(*ttft, 6);
    }
}

}  // namespace

ServingContext detect_serving(const DiagnoseInputs& in) {
    ServingContext context;
    const std::optional<Detected> detected = detect_engine(in);
    if (in.workload != nullptr) {
        const Workload& workload = *in.workload;
        if (workload.is_training()) {
            context.training = true;
            if (detected) {
                context.notes.push_back(fmt::format(
                    "workload {} is a training job; the serving engine seen ({}, {}) is not read as the job's",
                    workload.name, detected->engine, detected->source));
            }
            return context;
        }
        context.serving = true;
        if (workload.runtime.engine != Engine::automatic) {
            context.engine = std::string(to_string(workload.runtime.engine));
            context.paged = is_paged_engine(workload.runtime.engine);
            context.engine_source = fmt::format("workload {} (runtime.engine)", workload.name);
            if (workload.runtime.gpu_memory_utilization > 0) {
                context.gpu_memory_utilization = workload.runtime.gpu_memory_utilization;
            }
            if (detected && detected->engine != context.engine) {
                context.notes.push_back(fmt::format("the capture shows {} ({}), the workload names {}",
                                                    detected->engine, detected->source, context.engine));
            }
        }
        // Closed-loop clients (inference.concurrency) name no rate: only the engine's counters can.
        if (workload.inference.concurrency <= 0) {
            context.requests_per_s = workload.inference.requests_per_s;
            context.requests_source =
                fmt::format("workload {} (inference.requests_per_s, not measured)", workload.name);
        }
    }
    if (context.engine.empty() && detected) {
        context.serving = true;
        context.engine = detected->engine;
        context.paged = true;  // engine_named finds only the paged engines (vLLM, SGLang, TensorRT-LLM)
        context.engine_source = detected->source;
    }
    // The engine's own counters, where the capture has them, override the workload's figure.
    for (const std::optional<GpuTelemetry>* t : {&in.prometheus, &in.dcgm, &in.dmon, &in.query}) {
        if (*t && (*t)->serving.found()) {
            read_engine_metrics(**t, context);
            break;
        }
    }
    return context;
}

namespace {

// The model's largest load meeting the workload's SLO on `count` x `gpu`; nullopt when it cannot
// place the workload there or the SLO is missed at any load.
std::optional<double> model_capacity(const Workload& workload, const GpuSpec& gpu, int count,
                                     const EfficiencyTable& efficiency) {
    const std::optional<PerfEstimate> estimate = model_estimate(workload, gpu, count, efficiency);
    if (estimate && estimate->inference && estimate->inference->fits &&
        estimate->inference->max_requests_per_s_meeting_slo > 0 &&
        std::isfinite(estimate->inference->max_requests_per_s_meeting_slo)) {
        return estimate->inference->max_requests_per_s_meeting_slo;
    }
    return std::nullopt;
}

}  // namespace

void estimate_carry(ServingContext& context, const DiagnoseInputs& in, int gpu_count, std::optional<double> busy_pct) {
    if (!context.serving) {
        return;
    }
    if (in.workload != nullptr && in.gpu != nullptr && in.efficiency != nullptr && !in.workload->is_training()) {
        if (const std::optional<double> capacity = model_capacity(*in.workload, *in.gpu, gpu_count, *in.efficiency)) {
            context.carry_requests_per_s = rounded(*capacity, 2);
            context.carry_from_model = true;
            const SloSpec& slo = in.workload->inference.slo;
            const bool has_slo = slo.ttft_seconds > 0 || slo.tpot_seconds > 0 || slo.e2e_seconds > 0;
            context.carry_method = fmt::format(
                "gpusel's performance model: workload {} on {} x {} {} up to {:g} req/s (`gpusel perf` shows the "
                "layout)",
                in.workload->name, gpu_count, in.gpu->id,
                has_slo ? "meets its latency SLO" : "sustains its load (the workload sets no latency SLO)",
                rounded(*capacity, 2));
            return;
        }
        context.notes.push_back(fmt::format("the performance model cannot place workload {} on {} x {}",
                                            in.workload->name, gpu_count, in.gpu->id));
    }
    if (!context.requests_per_s || !busy_pct) {
        return;
    }
    if (!(*busy_pct > 0)) {
        context.notes.push_back("no kernel ran during the capture: the rate it could carry cannot be scaled from it");
        return;
    }
    // First order: each request costs the same busy time, so at 100 % the replica carries
    // rate / utilisation. A batching engine serves more requests per busy second as its batch
    // grows, so the estimate is conservative; the SLO may bind before 100 %.
    context.carry_requests_per_s = rounded(*context.requests_per_s * 100 / *busy_pct, 2);
    context.carry_method = fmt::format(
        "the request rate scaled by the utilisation headroom (100 % / {:.0f} %): first order, conservative for a "
        "batching engine (it serves more requests per busy second as its batch grows); the latency SLO may bind "
        "first",
        *busy_pct);
}

}  // namespace gpusel::diagnose_detail
