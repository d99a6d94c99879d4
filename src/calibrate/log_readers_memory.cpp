// Memory reports → calibration points: torch.cuda.memory_summary() tables and printed
// max_memory_allocated / max_memory_reserved figures (training memory points at a micro-batch),
// and vLLM's start-up log (a serving engine's weights, activation peak and non-torch memory on one
// GPU of a replica: calibration.serving_memory).

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/units.hpp"
#include "calibrate/log_readers.hpp"
#include "calibrate/log_readers_text.hpp"

namespace gpusel {

using namespace calibrate_detail;

namespace {

MemoryCalibrationPoint memory_point(const std::string& gpu, int micro_batch, double peak_bytes) {
    MemoryCalibrationPoint point;
    point.gpu = gpu;
    point.micro_batch = micro_batch;
    point.peak_bytes = peak_bytes;
    return point;
}

constexpr std::string_view summary_title = "PyTorch CUDA memory summary";

// torch.cuda.memory_summary() (torch/cuda/memory.py): rows "| Metric | Cur Usage | Peak Usage |
// Tot Alloc | Tot Freed |"; sizes by _format_size, a whole number of B, KiB, MiB, GiB … (floor
// division, the unit chosen so that the row's figure stays below 768 of the next one).
struct SummaryRow {
    double peak_bytes = 0;
    std::string peak_text;
};

SummaryRow summary_row(const std::string& path, const TextLine& line, std::string_view metric) {
    // "| Allocated memory      | 184648 KiB | 192833 KiB | 258378 KiB |  73729 KiB |"
    std::vector<std::size_t> bars;
    for (std::size_t at = line.text.find('|'); at != std::string_view::npos; at = line.text.find('|', at + 1)) {
        bars.push_back(at);
    }
    const std::string field = fmt::format("{} (Peak Usage)", metric);
    if (bars.size() < 4) {
        fail_at(path, {line.number, 1}, field, "expected the columns | Cur Usage | Peak Usage | …");
    }
    const std::string_view cell = line.text.substr(bars[2] + 1, bars[3] - bars[2] - 1);
    const Position where{line.number, static_cast<int>(bars[2]) + 2};
    const std::optional<NumberAt> number = number_at(cell);
    if (!number || number->value < 0) {
        fail_at(path, where, field, fmt::format("expected a size such as '192833 KiB', got '{}'", trim(cell)));
    }
    const std::string_view unit = trim(cell.substr(number->end));
    const std::optional<double> bytes = bytes_per_unit(unit);
    if (!bytes || (unit != "B" && unit.find('i') == std::string_view::npos)) {  // _format_size: binary units only
        fail_at(path, where, field, fmt::format("unknown unit '{}' (expected B, KiB, MiB, GiB or TiB)", unit));
    }
    return {number->value * *bytes, std::string(trim(cell))};
}

// The device of a summary's title line ("PyTorch CUDA memory summary, device ID 0"); -1 when none.
int summary_device(std::string_view title) {
    const LabelledFigure device = figure_after(title, "device ID");
    return device.number ? static_cast<int>(*device.number) : -1;
}

// ---------------------------------------------------------------------------------------------
// Printed peaks: "max_memory_allocated: 35.2 GiB", "torch.cuda.max_memory_allocated() = 37812345678",
// "Max memory allocated: 35.2 GB". A figure without a unit is a byte count (what the calls return).

struct PrintedPeak {
    double bytes = 0;
    int line = 0;
    std::string as_printed;
};

constexpr std::string_view allocated_keys[] = {"max_memory_allocated", "max memory allocated"};
constexpr std::string_view reserved_keys[] = {"max_memory_reserved", "max memory reserved"};

std::optional<PrintedPeak> printed_peak(const std::string& path, const TextLine& line,
                                        const std::string_view (&keys)[2], std::vector<std::string>& notes) {
    for (std::string_view key : keys) {
        const std::size_t at = find_case_insensitive(line.text, key);
        if (at == std::string_view::npos) {
            continue;
        }
        std::size_t after = at + key.size();
        if (after < line.text.size() && line.text[after] == '(') {  // the call's arguments: (), (device=0)
            const std::size_t close = line.text.find(')', after);
            after = close == std::string_view::npos ? line.text.size() : close + 1;
        }
        const LabelledFigure figure = figure_after(line.text.substr(after), "");
        const std::string field(key);
        const Position where{line.number, static_cast<int>(after) + figure.column};
        if (!figure.number || *figure.number <= 0) {
            fail_at(path, where, field, "expected a positive size after the label (e.g. '35.2 GiB' or a byte count)");
        }
        double bytes = *figure.number;
        if (!figure.unit.empty()) {
            const std::optional<double> unit = bytes_per_unit(figure.unit);
            if (!unit) {
                fail_at(path, where, field,
                        fmt::format("unknown unit '{}' (expected B, KiB, MiB, GiB, KB, MB or GB)", figure.unit));
            }
            bytes *= *unit;
            if (figure.unit == "GB" || figure.unit == "MB") {
                notes.push_back(
                    fmt::format("line {}: '{}' read as 10^{} bytes per {} (a script dividing by 2^30 "
                                "would print GiB figures under that name)",
                                line.number, figure.unit, figure.unit == "GB" ? 9 : 6, figure.unit));
            }
        } else if (bytes < 1048576) {
            fail_at(path, where, field,
                    fmt::format("{:g} has no unit and is too small for a byte count: add the unit (GiB, MiB)", bytes));
        }
        return PrintedPeak{
            bytes, line.number,
            figure.unit.empty() ? fmt::format("{:.0f} B", bytes) : fmt::format("{:g} {}", *figure.number, figure.unit)};
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// vLLM start-up. V0 worker.py (determine_num_available_blocks): "Loading model weights took X GB"
// (X is bytes / 2^30, so GiB), "model weights take XGiB; non_torch_memory takes XGiB; PyTorch
// activation peak memory takes XGiB; the rest of the memory reserved for KV Cache is XGiB.", "# GPU
// blocks: N, # CPU blocks: M" ("# cuda blocks" in later V0). V1 gpu_model_runner / gpu_worker:
// "Model loading took X GiB [memory] and … seconds", DEBUG "Memory profiling takes … seconds. Total
// non KV cache memory: XGiB; torch peak memory increase: XGiB; non-torch forward increase memory:
// XGiB; weights memory: XGiB.", "Available KV cache memory: X GiB", "GPU KV cache size: N tokens",
// "Maximum concurrency for L tokens per request: Cx". Every figure is per GPU (per worker).

struct VllmFigure {
    std::optional<double> gib;
    int line = 0;
    int occurrences = 0;
    std::string label;
};

struct VllmStartup {
    VllmFigure weights;
    VllmFigure activation_peak;
    VllmFigure non_torch;
    VllmFigure kv_memory;
    std::optional<long long> kv_tokens;
    int kv_tokens_line = 0;
    std::optional<long long> gpu_blocks;
    int gpu_blocks_line = 0;
    std::optional<long long> block_size;
    std::optional<int> tensor_parallel;
    std::optional<int> pipeline_parallel;
    std::string concurrency;  // as printed
};

// A label as a field name: "torch peak memory increase:" → "torch peak memory increase".
std::string label_name(std::string_view label) {
    label = trim(label);
    if (!label.empty() && label.back() == ':') {
        label.remove_suffix(1);
    }
    return std::string(label);
}

// The last figure after one of `labels` in the log (a restarted engine prints again; tensor-parallel
// workers print the same figures each).
void read_gib(const std::string& path, const TextLine& line, std::initializer_list<std::string_view> labels,
              VllmFigure& into, bool may_be_negative) {
    for (std::string_view label : labels) {
        const LabelledFigure figure = figure_after(line.text, label);
        if (!figure.found) {
            continue;
        }
        const std::string field = label_name(label);
        if (!figure.number || (!may_be_negative && *figure.number < 0)) {
            fail_at(path, {line.number, figure.column}, field, "expected a size in GiB after the label");
        }
        if (!figure.unit.empty() && figure.unit != "GiB" && figure.unit != "GB") {
            fail_at(path, {line.number, figure.column}, field,
                    fmt::format("unknown unit '{}' (vLLM prints GiB)", figure.unit));
        }
        into.gib = *figure.number;
        into.line = line.number;
        into.label = field;
        ++into.occurrences;
        return;
    }
}

std::optional<long long> read_count(const std::string& path, const TextLine& line, std::string_view label) {
    const LabelledFigure figure = figure_after(line.text, label);
    if (!figure.found) {
        return std::nullopt;
    }
    if (!figure.number || *figure.number < 0 ||
        *figure.number != static_cast<double>(static_cast<long long>(*figure.number))) {
        fail_at(path, {line.number, figure.column}, label_name(label), "expected a whole number");
    }
    return static_cast<long long>(*figure.number);
}

VllmStartup parse_vllm_startup(std::string_view text, const std::string& path) {
    VllmStartup startup;
    // The loading line's weights (four decimals) before the profiling line's (two).
    VllmFigure loading;
    VllmFigure profiled;
    for (const TextLine& line : text_lines(text)) {
        read_gib(path, line, {"Model loading took", "Loading model weights took"}, loading, false);
        read_gib(path, line, {"model weights take", "weights memory:"}, profiled, false);
        read_gib(path, line, {"PyTorch activation peak memory takes", "torch peak memory increase:"},
                 startup.activation_peak, true);
        read_gib(path, line, {"non_torch_memory takes", "non-torch forward increase memory:", "non_torch_memory="},
                 startup.non_torch, true);
        read_gib(path, line, {"the rest of the memory reserved for KV Cache is", "Available KV cache memory:"},
                 startup.kv_memory, true);
        if (const std::optional<long long> tokens = read_count(path, line, "GPU KV cache size:")) {
            startup.kv_tokens = tokens;
            startup.kv_tokens_line = line.number;
        }
        for (std::string_view label : {std::string_view("# GPU blocks:"), std::string_view("# cuda blocks:"),
                                       std::string_view("num_gpu_blocks is:")}) {
            if (const std::optional<long long> blocks = read_count(path, line, label)) {
                startup.gpu_blocks = blocks;
                startup.gpu_blocks_line = line.number;
            }
        }
        if (const LabelledFigure size = figure_after(line.text, "block_size="); size.number && *size.number >= 1) {
            startup.block_size = static_cast<long long>(*size.number);
        }
        if (const LabelledFigure size = figure_after(line.text, "tensor_parallel_size=");
            size.number && *size.number >= 1) {
            startup.tensor_parallel = static_cast<int>(*size.number);
        }
        if (const LabelledFigure size = figure_after(line.text, "pipeline_parallel_size=");
            size.number && *size.number >= 1) {
            startup.pipeline_parallel = static_cast<int>(*size.number);
        }
        if (const std::size_t at = line.text.find("Maximum concurrency for"); at != std::string_view::npos) {
            startup.concurrency = std::string(trim(line.text.substr(at)));
        }
    }
    startup.weights = loading.gib ? loading : profiled;
    if (!startup.weights.gib && !startup.activation_peak.gib && !startup.non_torch.gib) {
        fail(path, "vllm start-up",
             "no weights, activation peak or non-torch figure in the log (looked for 'Model loading took', 'model "
             "weights take', 'torch peak memory increase', 'non_torch_memory takes'; the last two are DEBUG lines in "
             "vLLM V1: VLLM_LOGGING_LEVEL=DEBUG)");
    }
    return startup;
}

struct VllmResult {
    ServingMemoryCalibrationPoint point;
    MeasuredSource source;
};

VllmResult read_vllm(std::string_view text, const std::string& path, const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "vLLM start-up log");
    const VllmStartup startup = parse_vllm_startup(text, path);
    VllmResult result;
    MeasuredSource& source = result.source;
    source = source_for(path, MeasurementFormat::vllm_startup_log, gpu);
    ServingMemoryCalibrationPoint& point = result.point;
    point.gpu = gpu;
    point.from = path;
    if (startup.tensor_parallel) {
        point.tensor_parallel = *startup.tensor_parallel;
    } else if (context.count > 0) {
        point.tensor_parallel = context.count;
        source.notes.push_back(
            fmt::format("tensor_parallel {} from --count (the log has no engine config line with tensor_parallel_size)",
                        context.count));
    } else {
        source.notes.push_back(
            "tensor_parallel 1 assumed (the log has no engine config line with tensor_parallel_size): give --count");
    }
    if (startup.pipeline_parallel && *startup.pipeline_parallel > 1) {
        source.notes.push_back(fmt::format(
            "pipeline_parallel_size {}: the figures are one stage's; the memory estimate applies them only to "
            "replicas without pipeline stages",
            *startup.pipeline_parallel));
    }
    const auto take = [&](const VllmFigure& figure, std::string_view term, double& into) {
        if (!figure.gib) {
            return;
        }
        const std::string repeated =
            figure.occurrences > 1 ? fmt::format("; printed {} times, the last used", figure.occurrences) : "";
        if (*figure.gib <= 0) {
            source.notes.push_back(fmt::format(
                "{} {:g} GiB printed (line {}: '{}'; another process's memory changed during profiling): not used",
                term, *figure.gib, figure.line, figure.label));
            return;
        }
        into = *figure.gib * bytes_per_gib;
        source.provenance.push_back(fmt::format("{} {:g} GiB (vLLM start-up log line {}: '{}'{})", term, *figure.gib,
                                                figure.line, figure.label, repeated));
    };
    take(startup.weights, "weights", point.weights_bytes);
    if (startup.weights.label == "Loading model weights took") {
        source.notes.push_back("'Loading model weights took X GB' is bytes / 2^30: read as GiB");
    }
    take(startup.activation_peak, "activation peak", point.activation_peak_bytes);
    take(startup.non_torch, "non-torch memory", point.non_torch_bytes);
    if (point.weights_bytes <= 0 && point.activation_peak_bytes <= 0 && point.non_torch_bytes <= 0) {
        fail(path, "vllm start-up",
             "every weights, activation peak and non-torch figure in the log is negative or zero");
    }
    if (startup.kv_tokens) {
        point.kv_cache_tokens = *startup.kv_tokens;
        source.provenance.push_back(fmt::format("KV cache {} tokens (vLLM start-up log line {}: 'GPU KV cache size')",
                                                *startup.kv_tokens, startup.kv_tokens_line));
    } else if (startup.gpu_blocks && startup.block_size) {
        point.kv_cache_tokens = *startup.gpu_blocks * *startup.block_size;
        source.provenance.push_back(fmt::format("KV cache {} tokens = {} GPU blocks (line {}) × block_size {}",
                                                point.kv_cache_tokens, *startup.gpu_blocks, startup.gpu_blocks_line,
                                                *startup.block_size));
    } else if (startup.gpu_blocks) {
        source.notes.push_back(
            fmt::format("{} GPU blocks (line {}): tokens not taken, the log does not print the block size",
                        *startup.gpu_blocks, startup.gpu_blocks_line));
    }
    if (startup.kv_memory.gib) {
        source.notes.push_back(
            fmt::format("KV cache memory {:g} GiB (line {}): follows the run's gpu_memory_utilization, read, not a "
                        "calibration term",
                        *startup.kv_memory.gib, startup.kv_memory.line));
    }
    if (!startup.concurrency.empty()) {
        source.notes.push_back(fmt::format("'{}': at that run's max_model_len", startup.concurrency));
    }
    source.notes.push_back(
        "serving start-up figures fit no training point: they go to calibration.serving_memory, which the inference "
        "memory estimate takes on this GPU at this tensor-parallel size");
    return result;
}

}  // namespace

bool is_torch_memory_summary(std::string_view text) {
    return contains(text, summary_title);
}

MeasuredSource read_torch_memory_summary(std::string_view text, const std::string& path,
                                         const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "torch.cuda.memory_summary() report");
    int device = -1;
    int summaries = 0;
    std::optional<SummaryRow> peak;
    int peak_device = -1;
    int peak_line = 0;
    std::optional<SummaryRow> reserved;
    for (const TextLine& line : text_lines(text)) {
        if (contains(line.text, summary_title)) {
            device = summary_device(line.text);
            ++summaries;
            continue;
        }
        const std::string_view row = trim(line.text);
        if (row.substr(0, 2) != "| ") {
            continue;
        }
        const std::string_view metric = trim(row.substr(1, row.find('|', 1) - 1));
        if (metric == "Allocated memory") {
            const SummaryRow value = summary_row(path, line, metric);
            if (!peak || value.peak_bytes > peak->peak_bytes) {
                peak = value;
                peak_device = device;
                peak_line = line.number;
            }
        } else if (metric == "GPU reserved memory") {
            const SummaryRow value = summary_row(path, line, metric);
            if (!reserved || value.peak_bytes > reserved->peak_bytes) {
                reserved = value;
            }
        }
    }
    if (!peak) {
        fail(path, "Allocated memory", "the memory summary has no 'Allocated memory' row");
    }
    const int batch = require_batch(context, path,
                                    "a memory point is the peak at a micro-batch, and the summary does not say the "
                                    "batch it ran");
    MeasuredSource source = source_for(path, MeasurementFormat::torch_memory_summary, gpu);
    source.memory.push_back(memory_point(gpu, batch, peak->peak_bytes));
    source.provenance.push_back(fmt::format(
        "peak {:.0f} bytes at micro-batch {} (torch.cuda.memory_summary{}, Allocated memory Peak Usage '{}', line {})",
        peak->peak_bytes, batch, peak_device >= 0 ? fmt::format(" device ID {}", peak_device) : std::string(),
        peak->peak_text, peak_line));
    source.notes.push_back("the summary prints whole units (rounded down): the peak is exact to that unit");
    if (reserved) {
        source.notes.push_back(fmt::format(
            "GPU reserved memory peak '{}' (the caching allocator's, allocated + cached free blocks): read, not used",
            reserved->peak_text));
    }
    if (summaries > 1) {
        source.notes.push_back(fmt::format("{} summaries in the file: the largest allocated peak used", summaries));
    }
    return source;
}

bool is_torch_max_memory(std::string_view text) {
    if (contains(text, summary_title)) {
        return false;
    }
    for (std::string_view key :
         {"max_memory_allocated", "max_memory_reserved", "max memory allocated", "max memory reserved"}) {
        if (find_case_insensitive(text, key) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

MeasuredSource read_torch_max_memory(std::string_view text, const std::string& path,
                                     const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "max_memory_allocated printout");
    std::vector<std::string> notes;
    std::optional<PrintedPeak> allocated;
    std::optional<PrintedPeak> reserved;
    int allocated_count = 0;
    for (const TextLine& line : text_lines(text)) {
        if (const std::optional<PrintedPeak> value = printed_peak(path, line, allocated_keys, notes)) {
            ++allocated_count;
            if (!allocated || value->bytes > allocated->bytes) {
                allocated = value;
            }
        }
        if (const std::optional<PrintedPeak> value = printed_peak(path, line, reserved_keys, notes)) {
            if (!reserved || value->bytes > reserved->bytes) {
                reserved = value;
            }
        }
    }
    if (!allocated && !reserved) {
        fail(path, "max_memory_allocated", "no max_memory_allocated or max_memory_reserved figure in the file");
    }
    const int batch = require_batch(context, path,
                                    "a memory point is the peak at a micro-batch, and the printout does not say the "
                                    "batch it ran");
    MeasuredSource source = source_for(path, MeasurementFormat::torch_max_memory, gpu);
    const PrintedPeak& used = allocated ? *allocated : *reserved;
    source.memory.push_back(memory_point(gpu, batch, used.bytes));
    source.provenance.push_back(
        fmt::format("peak {:.0f} bytes at micro-batch {} ({} {}, line {}{})", used.bytes, batch,
                    allocated ? "max_memory_allocated" : "max_memory_reserved", used.as_printed, used.line,
                    allocated_count > 1 ? fmt::format("; the largest of {}", allocated_count) : std::string()));
    if (allocated && reserved) {
        source.notes.push_back(fmt::format(
            "max_memory_reserved {} (line {}): the caching allocator's, read, not used (allocated is what the memory "
            "model predicts)",
            reserved->as_printed, reserved->line));
    } else if (!allocated) {
        source.notes.push_back(
            "only max_memory_reserved printed: the point includes the caching allocator's free blocks and overstates "
            "the allocated peak");
    }
    source.notes.insert(source.notes.end(), notes.begin(), notes.end());
    return source;
}

bool is_vllm_startup_log(std::string_view text) {
    for (std::string_view key : {"Model loading took", "Loading model weights took", "model weights take",
                                 "torch peak memory increase:", "GPU KV cache size:", "# GPU blocks:"}) {
        if (contains(text, key)) {
            return true;
        }
    }
    return false;
}

MeasuredSource read_vllm_startup_log(std::string_view text, const std::string& path,
                                     const MeasurementContext& context) {
    return read_vllm(text, path, context).source;
}

ServingMemoryCalibrationPoint vllm_startup_serving_memory(std::string_view text, const std::string& path,
                                                          const MeasurementContext& context) {
    return read_vllm(text, path, context).point;
}

}  // namespace gpusel
