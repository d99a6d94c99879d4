#pragma once
// A `vllm bench serve --save-result` result (vLLM benchmarks/serve.py): the figures calibration
// reads from it. SGLang's bench_serving writes the same names one result per line (it was adapted
// from vLLM's benchmark_serving.py), so both readers share this one.

#include <optional>
#include <string>
#include <string_view>

namespace gpusel {

struct VllmBenchmarkResult {
    double output_tokens_per_s = 0;      // output_throughput: output tokens/s of the whole run
    int max_concurrency = 0;             // 0 = not recorded (the request rate set the load)
    std::optional<double> ttft_s;        // median_ttft_ms / 1000
    std::optional<double> tpot_s;        // median_tpot_ms / 1000
    std::optional<double> request_rate;  // request_rate in req/s; nullopt when absent or "inf"
};

// Reads one result object; `path` names the file in messages. Throws InputError (no position)
// whose message names the file: not a JSON object, or no positive output_throughput.
VllmBenchmarkResult parse_vllm_benchmark(std::string_view text, const std::string& path);

}  // namespace gpusel
