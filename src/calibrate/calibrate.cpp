// `gpusel calibrate`: which format a measurement is, its reader, and the calibration file
// (calibrate.hpp). The formats are one table: a name, a detector and a reader each; a new format
// is one more row (its reader in a file of its own: serving_readers.cpp for the serving ones).

#include "calibrate/calibrate.hpp"

#include <array>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/units.hpp"
#include "calibrate/log_readers.hpp"
#include "calibrate/serving_readers.hpp"

namespace gpusel {

namespace {

struct FormatEntry {
    MeasurementFormat format;
    std::string_view name;
    std::string_view what;  // the tool and command that write it, for the unknown-format message
    bool (*detect)(std::string_view text);
    MeasuredSource (*read)(std::string_view text, const std::string& path, const MeasurementContext& context);
};

// Tried in order: the first detector that matches names the format. The engine metrics come
// before the GPU telemetry, since a federated scrape may hold both (the engine's are the speeds).
constexpr FormatEntry formats[] = {
    {MeasurementFormat::vllm_bench_serve, "vllm-bench-serve", "vllm bench serve --save-result JSON",
     is_vllm_bench_serve, read_vllm_bench_serve},
    {MeasurementFormat::sglang_bench_serving, "sglang-bench-serving", "SGLang bench_serving --output-file JSONL",
     is_sglang_bench_serving, read_sglang_bench_serving},
    {MeasurementFormat::trtllm_bench, "trtllm-bench", "trtllm-bench throughput report", is_trtllm_bench,
     read_trtllm_bench},
    {MeasurementFormat::prometheus_metrics, "prometheus-metrics", "vLLM or SGLang /metrics scrape",
     is_prometheus_metrics, read_prometheus_metrics},
    {MeasurementFormat::hf_trainer_state, "hf-trainer-state",
     "Hugging Face Trainer trainer_state.json or its {'train_runtime': ...} log line", is_hf_trainer_state,
     read_hf_trainer_state},
    {MeasurementFormat::megatron_log, "megatron-log", "Megatron-LM training log (elapsed time per iteration)",
     is_megatron_log, read_megatron_log},
    {MeasurementFormat::lightning_log, "lightning-log", "torchtune metric lines or a PyTorch Lightning progress bar",
     is_lightning_log, read_lightning_log},
    {MeasurementFormat::torch_memory_summary, "torch-memory-summary", "torch.cuda.memory_summary() text",
     is_torch_memory_summary, read_torch_memory_summary},
    {MeasurementFormat::torch_max_memory, "torch-max-memory", "printed torch.cuda.max_memory_allocated() figures",
     is_torch_max_memory, read_torch_max_memory},
    {MeasurementFormat::vllm_startup_log, "vllm-startup-log", "vLLM engine start-up log", is_vllm_startup_log,
     read_vllm_startup_log},
    {MeasurementFormat::gpu_telemetry, "gpu-telemetry",
     "nvidia-smi dmon, dcgmi dmon, nvidia-smi --query-gpu CSV with its header, DCGM exporter scrape", is_gpu_telemetry,
     read_gpu_telemetry},
};

// The names of every format.
constexpr std::pair<MeasurementFormat, std::string_view> format_names[] = {
    {MeasurementFormat::vllm_bench_serve, "vllm-bench-serve"},
    {MeasurementFormat::sglang_bench_serving, "sglang-bench-serving"},
    {MeasurementFormat::trtllm_bench, "trtllm-bench"},
    {MeasurementFormat::prometheus_metrics, "prometheus-metrics"},
    {MeasurementFormat::hf_trainer_state, "hf-trainer-state"},
    {MeasurementFormat::megatron_log, "megatron-log"},
    {MeasurementFormat::lightning_log, "lightning-log"},
    {MeasurementFormat::torch_memory_summary, "torch-memory-summary"},
    {MeasurementFormat::torch_max_memory, "torch-max-memory"},
    {MeasurementFormat::vllm_startup_log, "vllm-startup-log"},
    {MeasurementFormat::gpu_telemetry, "gpu-telemetry"},
};

const FormatEntry* detect_entry(std::string_view text) {
    for (const FormatEntry& entry : formats) {
        if (entry.detect(text)) {
            return &entry;
        }
    }
    return nullptr;
}

// The first line of the text, shortened, for the unknown-format message.
std::string opening(std::string_view text) {
    const std::size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) {
        return "the file is empty";
    }
    std::string_view line = text.substr(start);
    line = line.substr(0, line.find_first_of("\r\n"));
    constexpr std::size_t shown = 60;
    return fmt::format("it starts '{}{}'", line.substr(0, shown), line.size() > shown ? "..." : "");
}

// YAML: figures as plain scalars, the file names double-quoted (any byte a path may hold).
std::string number(double value) {
    return fmt::format("{:.8g}", value);
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// A comment line: a line end in the text would end the comment.
std::string comment(std::string_view indent, std::string_view text) {
    std::string line = std::string(indent) + "# ";
    for (const char c : text) {
        line += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return line + "\n";
}

std::string source_header(std::string_view indent, const MeasuredSource& source) {
    std::string out = comment(indent, fmt::format("{} ({}):", source.path, to_string(source.format)));
    for (const std::string& line : source.provenance) {
        out += comment(indent, "  " + line);
    }
    for (const std::string& note : source.notes) {
        out += comment(indent, "  note: " + note);
    }
    return out;
}

std::string speed_line(const SpeedCalibrationPoint& point) {
    const bool time = point.metric == MeasuredMetric::ttft || point.metric == MeasuredMetric::tpot;
    const std::string_view run = point.run == SpeedCalibrationPoint::Run::training    ? ", kind: training"
                                 : point.run == SpeedCalibrationPoint::Run::inference ? ", kind: inference"
                                                                                      : "";
    return fmt::format("    - {{gpu: {}, count: {}, metric: {}, measured: {}{}{}{}, from: {}}}\n", point.gpu,
                       point.count, to_string(point.metric), number(point.measured), time ? "s" : "",
                       point.batch > 0 ? fmt::format(", batch: {}", point.batch) : std::string(), run,
                       quoted(point.from));
}

std::string memory_line(const MemoryCalibrationPoint& point) {
    return fmt::format("    - {{gpu: {}, micro_batch: {}, peak: {}GiB, from: {}}}\n", point.gpu, point.micro_batch,
                       number(point.peak_bytes / bytes_per_gib), quoted(point.from));
}

std::string serving_memory_line(const ServingMemoryCalibrationPoint& point) {
    std::string line = fmt::format("    - {{gpu: {}, tensor_parallel: {}", point.gpu, point.tensor_parallel);
    const auto size = [&line](std::string_view key, double bytes) {
        if (bytes > 0) {
            line += fmt::format(", {}: {}GiB", key, number(bytes / bytes_per_gib));
        }
    };
    size("weights", point.weights_bytes);
    size("activation_peak", point.activation_peak_bytes);
    size("non_torch", point.non_torch_bytes);
    if (point.kv_cache_tokens > 0) {
        line += fmt::format(", kv_cache_tokens: {}", point.kv_cache_tokens);
    }
    return line + fmt::format(", from: {}}}\n", quoted(point.from));
}

}  // namespace

std::string_view to_string(MeasurementFormat format) {
    for (const auto& [value, name] : format_names) {
        if (value == format) {
            return name;
        }
    }
    return "?";
}

std::optional<MeasurementFormat> detect_measurement_format(std::string_view text) {
    const FormatEntry* entry = detect_entry(text);
    return entry == nullptr ? std::nullopt : std::optional<MeasurementFormat>(entry->format);
}

MeasuredSource read_measurement(std::string_view text, const std::string& path, const MeasurementContext& context) {
    const FormatEntry* entry = detect_entry(text);
    if (entry == nullptr) {
        std::string known;
        for (const FormatEntry& format : formats) {
            known += fmt::format("{}{} ({})", known.empty() ? "" : "; ", format.name, format.what);
        }
        throw InputError(Diagnostic{
            path,
            {},
            "",
            fmt::format("not a recognised measurement: {}; gpusel calibrate reads {}", opening(text), known)});
    }
    MeasuredSource source = entry->read(text, path, context);
    source.path = path;
    source.format = entry->format;
    // What ran is the format's: a training log measured training, a benchmark or engine metrics
    // measured serving (samples_per_s alone does not say which).
    const bool training_format = entry->format == MeasurementFormat::hf_trainer_state ||
                                 entry->format == MeasurementFormat::megatron_log ||
                                 entry->format == MeasurementFormat::lightning_log;
    for (SpeedCalibrationPoint& point : source.speed) {
        point.from = path;
        point.run = training_format ? SpeedCalibrationPoint::Run::training : SpeedCalibrationPoint::Run::inference;
    }
    for (MemoryCalibrationPoint& point : source.memory) {
        point.from = path;
    }
    if (entry->format == MeasurementFormat::vllm_startup_log) {
        source.serving_memory.push_back(vllm_startup_serving_memory(text, path, context));
    }
    for (ServingMemoryCalibrationPoint& point : source.serving_memory) {
        point.from = path;
    }
    return source;
}

std::string calibration_file_yaml(const std::vector<MeasuredSource>& sources) {
    std::string out;
    out += "# Written by gpusel calibrate: the measurements below as calibration points (docs/calibrate.md).\n";
    out += "# Use it with gpusel plan|perf|memory WORKLOAD --calibration FILE, or paste the block into the\n";
    out += "# workload (docs/workload.md, calibration). Each point names the file it was read from.\n";
    out += "calibration:\n";
    const auto has_speed = [](const MeasuredSource& source) { return !source.speed.empty(); };
    const auto has_memory = [](const MeasuredSource& source) { return !source.memory.empty(); };
    if (std::any_of(sources.begin(), sources.end(), has_speed)) {
        out += "  speed:\n";
        for (const MeasuredSource& source : sources) {
            if (has_speed(source)) {
                out += source_header("    ", source);
                for (const SpeedCalibrationPoint& point : source.speed) {
                    out += speed_line(point);
                }
            }
        }
    }
    if (std::any_of(sources.begin(), sources.end(), has_memory)) {
        out += "  memory:\n";
        for (const MeasuredSource& source : sources) {
            if (has_memory(source)) {
                // A source with speeds too has its provenance under speed already.
                out += has_speed(source)
                           ? comment("    ", fmt::format("{} ({}):", source.path, to_string(source.format)))
                           : source_header("    ", source);
                for (const MemoryCalibrationPoint& point : source.memory) {
                    out += memory_line(point);
                }
            }
        }
    }
    const auto has_serving_memory = [](const MeasuredSource& source) { return !source.serving_memory.empty(); };
    if (std::any_of(sources.begin(), sources.end(), has_serving_memory)) {
        out += "  serving_memory:\n";
        for (const MeasuredSource& source : sources) {
            if (has_serving_memory(source)) {
                out += has_speed(source) || has_memory(source)
                           ? comment("    ", fmt::format("{} ({}):", source.path, to_string(source.format)))
                           : source_header("    ", source);
                for (const ServingMemoryCalibrationPoint& point : source.serving_memory) {
                    out += serving_memory_line(point);
                }
            }
        }
    }
    bool first = true;
    for (const MeasuredSource& source : sources) {
        if (!has_speed(source) && !has_memory(source) && !has_serving_memory(source)) {
            if (first) {
                out += "# Read, but no calibration points:\n";
                first = false;
            }
            out += source_header("", source);
        }
    }
    return out;
}

}  // namespace gpusel
