#pragma once
// `gpusel calibrate` (docs/calibrate.md): the measurements users already have — serving benchmark
// results, engine metrics scrapes, training logs, PyTorch memory reports, engine start-up logs and
// GPU telemetry — read into calibration points, each kept with where it came from, and written as a
// `calibration:` block that `plan`, `perf` and `memory` take with `--calibration FILE`. Pure: the
// CLI reads the files and writes the result.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/workload.hpp"

namespace gpusel {

// What the files may not say, from `calibrate --gpu/--count/--batch`: the GPU (catalog id) the
// measurement ran on, how many GPUs together, and the batch (inference batch per replica, training
// micro-batch). Empty / 0 = unknown; a reader that needs one the file lacks throws InputError naming
// the option.
struct MeasurementContext {
    std::string gpu;
    int count = 0;
    int batch = 0;
};

// The formats `calibrate` recognises, detected from the content (never from the file name alone).
enum class MeasurementFormat {
    vllm_bench_serve,      // `vllm bench serve --save-result` JSON
    sglang_bench_serving,  // SGLang `bench_serving --output-file` JSONL (one JSON object per run)
    trtllm_bench,          // TensorRT-LLM `trtllm-bench throughput` report
    prometheus_metrics,    // vLLM / SGLang `/metrics` scrape (TTFT/TPOT histograms, KV usage, running)
    hf_trainer_state,      // Hugging Face Trainer trainer_state.json or its log lines
    megatron_log,          // Megatron-LM training log (elapsed time per iteration, TFLOP/s)
    lightning_log,         // PyTorch Lightning / torchtune logs
    torch_memory_summary,  // torch.cuda.memory_summary() text
    torch_max_memory,      // max_memory_allocated / max_memory_reserved lines
    vllm_startup_log,      // vLLM engine start-up log (weights, activation peak, non-torch, KV blocks)
    gpu_telemetry,         // DCGM / nvidia-smi dmon / query captures (the diagnose readers)
};
std::string_view to_string(MeasurementFormat format);

// What one file measured: the points it yields and, for each, a line of provenance a reader can
// check against the file ("output_throughput 1843.2 tok/s at max_concurrency 16").
struct MeasuredSource {
    std::string path;
    MeasurementFormat format = MeasurementFormat::vllm_bench_serve;
    std::string gpu;  // the catalog id the points are on (from the file, else the context)
    std::vector<SpeedCalibrationPoint> speed;
    std::vector<MemoryCalibrationPoint> memory;
    std::vector<ServingMemoryCalibrationPoint> serving_memory;  // a serving engine's start-up figures
    std::vector<std::string> provenance;                        // one line per point or figure read
    std::vector<std::string> notes;                             // what was read but not used, and why
};

// The format of `text`, or nullopt when none matches.
std::optional<MeasurementFormat> detect_measurement_format(std::string_view text);

// The points `text` (read from `path`, shown in messages) yields. Throws InputError
// ("path: not a recognised measurement: ...", listing the formats) for an unknown format, and
// "path:line: field: message" for a malformed one.
MeasuredSource read_measurement(std::string_view text, const std::string& path, const MeasurementContext& context);

// The calibration file: a `calibration:` block (docs/workload.md) with one commented entry group
// per source, its provenance in the comments and `from:` on every point.
std::string calibration_file_yaml(const std::vector<MeasuredSource>& sources);

}  // namespace gpusel
