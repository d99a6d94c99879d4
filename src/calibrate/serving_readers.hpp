#pragma once
// The serving measurements `gpusel calibrate` reads (calibrate.hpp): benchmark results of vLLM,
// SGLang and TensorRT-LLM, the engines' Prometheus /metrics scrapes, and GPU telemetry captures.
// Each format is a detector (`is_<format>`: does the text look like it, from its content) and a
// reader (`read_<format>`: its points, with provenance; InputError for a malformed file or a fact
// the file lacks and the context does not give). calibrate.cpp's table lists them in the order
// they are tried.
//
// What becomes a point (docs/calibrate.md):
//  - output tokens/s of a run, at the concurrency it ran at (the batch per replica);
//  - TTFT and TPOT only when the run had one request at a time (max_concurrency 1, or --batch 1):
//    the model's ttft and tpot are one request alone on a replica (workload.hpp, MeasuredMetric);
//    under load they are queueing and batching too, and are kept as notes instead;
//  - nothing from GPU telemetry: utilisation is no speed, and the framebuffer a device shows is
//    not the allocated peak calibration.memory takes (diagnose/calibration.cpp says why).

#include <string>
#include <string_view>

#include "calibrate/calibrate.hpp"

namespace gpusel {

// `vllm bench serve --save-result`: one JSON object with output_throughput, max_concurrency and
// the median_ttft_ms / median_tpot_ms of its requests.
bool is_vllm_bench_serve(std::string_view text);
MeasuredSource read_vllm_bench_serve(std::string_view text, const std::string& path, const MeasurementContext& context);

// `python -m sglang.bench_serving --output-file F.jsonl`: one JSON object per run appended per
// line, with the same figures as vLLM's result (and median_e2e_latency_ms, which tells it apart).
bool is_sglang_bench_serving(std::string_view text);
MeasuredSource read_sglang_bench_serving(std::string_view text, const std::string& path,
                                         const MeasurementContext& context);

// `trtllm-bench ... throughput` report: the "PERFORMANCE OVERVIEW" section's "Total Output
// Throughput (tokens/sec)", TP and PP sizes from "WORLD + RUNTIME INFORMATION", and the average
// TTFT / TPOT of a streaming run.
bool is_trtllm_bench(std::string_view text);
MeasuredSource read_trtllm_bench(std::string_view text, const std::string& path, const MeasurementContext& context);

// A vLLM or SGLang /metrics scrape (Prometheus text, one scrape or several appended), read by the
// telemetry reader and diagnose's serving context: generated tokens/s from the counter between
// timestamped scrapes, mean TTFT and TPOT from the histograms (_sum over _count), KV-cache usage
// and running requests (notes).
bool is_prometheus_metrics(std::string_view text);
MeasuredSource read_prometheus_metrics(std::string_view text, const std::string& path,
                                       const MeasurementContext& context);

// nvidia-smi dmon, dcgmi dmon, nvidia-smi --query-gpu CSV with its header, or a DCGM exporter
// scrape or query_range export: read by the diagnose readers; what they show goes into notes.
bool is_gpu_telemetry(std::string_view text);
MeasuredSource read_gpu_telemetry(std::string_view text, const std::string& path, const MeasurementContext& context);

}  // namespace gpusel
