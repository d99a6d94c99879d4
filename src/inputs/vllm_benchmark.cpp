// The figures of a serving benchmark result, shared by the workload's `vllm_benchmark: FILE`
// points and `gpusel calibrate`'s vLLM and SGLang readers.

#include "inputs/vllm_benchmark.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace gpusel {

namespace {

// Python's json.dumps writes float('inf') and nan as the bare words Infinity and NaN, which are
// not JSON: SGLang's bench_serving dumps request_rate inf that way. They become null here, outside
// strings only, so that the rest of the object can be read.
std::string without_python_non_finite(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) {
                out += text[++i];
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        }
        bool replaced = false;
        for (const std::string_view word :
             {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
            if (text.substr(i, word.size()) == word) {
                out += "null";
                i += word.size() - 1;
                replaced = true;
                break;
            }
        }
        if (!replaced) {
            out += c;
        }
    }
    return out;
}

std::optional<double> positive_number(const nlohmann::json& object, const char* key) {
    const auto found = object.find(key);
    if (found == object.end() || !found->is_number()) {
        return std::nullopt;
    }
    const double value = found->get<double>();
    return std::isfinite(value) && value > 0 ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

VllmBenchmarkResult parse_vllm_benchmark(std::string_view text, const std::string& path) {
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(without_python_non_finite(text));
    } catch (const nlohmann::json::exception&) {
        throw InputError(
            Diagnostic{"", {}, "", fmt::format("{} is not JSON (expected a vLLM benchmark result)", path)});
    }
    const std::optional<double> output = json.is_object() ? positive_number(json, "output_throughput") : std::nullopt;
    if (!output) {
        throw InputError(Diagnostic{
            "",
            {},
            "",
            fmt::format("{} has no positive output_throughput (vllm bench serve --save-result writes it)", path)});
    }
    VllmBenchmarkResult result;
    result.output_tokens_per_s = *output;
    const auto concurrency = json.find("max_concurrency");
    if (concurrency != json.end() && concurrency->is_number_integer() && concurrency->get<long long>() >= 1 &&
        concurrency->get<long long>() <= (1 << 20)) {
        result.max_concurrency = static_cast<int>(concurrency->get<long long>());
    }
    // The benchmark prints milliseconds; calibration points are seconds.
    if (const std::optional<double> ttft = positive_number(json, "median_ttft_ms")) {
        result.ttft_s = *ttft / 1000;
    }
    if (const std::optional<double> tpot = positive_number(json, "median_tpot_ms")) {
        result.tpot_s = *tpot / 1000;
    }
    result.request_rate = positive_number(json, "request_rate");
    return result;
}

}  // namespace gpusel
