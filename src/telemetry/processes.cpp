// The processes on the GPUs, as nvidia-smi prints them: the "Processes:" box at the end of plain
// `nvidia-smi`, or the CSV of `nvidia-smi --query-compute-apps=...`. diagnose reads the names: a
// serving engine that pre-allocates memory names itself there (vLLM v1's engine process sets its
// title to VLLM::EngineCore, its workers VLLM::Worker_TP<n>; `vllm serve` and `trtllm-serve`
// are commands of those names).

#include <algorithm>

#include <fmt/format.h>

#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

// Upper bound on the rows kept: a node has at most a few hundred GPU processes.
constexpr std::size_t max_processes = 100000;

constexpr double bytes_per_mib = 1024.0 * 1024.0;

// "72000MiB" (the box) or "72000 MiB" / "72000" (the CSV, with or without units); nullopt for
// N/A and [N/A] (MIG, or no permission to see other users' processes).
std::optional<double> memory_bytes(std::string_view text, const std::string& file, int line, int column) {
    text = trim(text);
    if (is_missing_value(text)) {
        return std::nullopt;
    }
    std::string_view number = text;
    if (ends_with(number, "MiB")) {
        number = trim(number.substr(0, number.size() - 3));
    }
    const std::optional<double> mib = parse_decimal(number);
    if (!mib || *mib < 0 || *mib > max_counter_reading) {
        throw input_error(file, line, column, fmt::format("process memory {} is not a size in MiB", quote(text)));
    }
    return *mib * bytes_per_mib;
}

bool is_process_type(std::string_view token) {
    return token == "C" || token == "G" || token == "C+G" || token == "M" || token == "M+C" || token == "M+G" ||
           token == "M+C+G";
}

// One row of the box: `|    0   N/A  N/A   2412207      C   VLLM::EngineCore   72000MiB |` (GI and
// CI columns from driver 450 on) or `|    0      1234      C   python   2345MiB |` (older).
std::optional<GpuProcess> box_row(std::string_view content, int line_number, const std::string& file, NoteLog& notes) {
    const std::size_t open = content.find('|');
    const std::size_t close = content.rfind('|');
    if (open == std::string_view::npos || close == open) {
        return std::nullopt;
    }
    const std::string_view inside = content.substr(open + 1, close - open - 1);
    const std::vector<Token> tokens = split_whitespace(inside);
    if (tokens.size() < 4) {
        return std::nullopt;
    }
    std::optional<double> gpu = parse_decimal(tokens[0].text);
    std::size_t type_at = 0;
    for (std::size_t i = 2; i + 1 < tokens.size(); ++i) {
        if (is_process_type(tokens[i].text)) {
            type_at = i;
            break;
        }
    }
    if (!gpu || *gpu < 0 || *gpu > 100000 || type_at == 0) {
        notes.add("skipped a line of the process table that is not a process row", line_number);
        return std::nullopt;
    }
    GpuProcess process;
    process.gpu = static_cast<int>(*gpu);
    process.pid = std::string(tokens[type_at - 1].text);
    process.type = std::string(tokens[type_at].text);
    const Token& last = tokens.back();
    const std::size_t name_begin = static_cast<std::size_t>(tokens[type_at + 1].column) - 1;
    const std::size_t name_end = static_cast<std::size_t>(last.column) - 1;
    const bool has_memory = tokens.size() > type_at + 2;
    process.name =
        std::string(trim(has_memory ? inside.substr(name_begin, name_end - name_begin) : inside.substr(name_begin)));
    if (has_memory) {
        process.used_bytes = memory_bytes(last.text, file, line_number, static_cast<int>(open) + 1 + last.column);
    }
    process.line = line_number;
    return process;
}

std::vector<std::string> csv_cells(std::string_view line) {
    std::vector<std::string> cells;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        cells.emplace_back(
            trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
        if (comma == std::string_view::npos) {
            return cells;
        }
        start = comma + 1;
    }
}

// `--query-compute-apps=pid,process_name,used_memory --format=csv`: a header of field names with
// units in brackets ("used_gpu_memory [MiB]"), then one row per process.
GpuProcessTable read_compute_apps(std::string_view text, const std::string& file, NoteLog& notes) {
    GpuProcessTable table;
    table.file = file;
    std::optional<std::size_t> pid_at, name_at, memory_at;
    bool header = false;
    for (const Line& line : split_lines(text)) {
        if (is_blank(line.text)) {
            continue;
        }
        const std::vector<std::string> cells = csv_cells(line.text);
        if (!header) {
            for (std::size_t i = 0; i < cells.size(); ++i) {
                const std::string name = cells[i].substr(0, cells[i].find(' '));
                if (name == "pid") {
                    pid_at = i;
                } else if (name == "process_name" || name == "name") {
                    name_at = i;
                } else if (name == "used_gpu_memory" || name == "used_memory") {
                    memory_at = i;
                }
            }
            if (!name_at) {
                throw input_error(file, line.number, 1, "the header names no process_name field");
            }
            header = true;
            continue;
        }
        if (cells.size() <= *name_at) {
            notes.add("skipped a row with fewer cells than the header", line.number);
            continue;
        }
        if (table.processes.size() == max_processes) {
            throw input_error(file, line.number, 1, "more than 100000 processes; expected one node's GPU processes");
        }
        GpuProcess process;
        process.name = cells[*name_at];
        if (pid_at && *pid_at < cells.size()) {
            process.pid = cells[*pid_at];
        }
        if (memory_at && *memory_at < cells.size()) {
            process.used_bytes = memory_bytes(cells[*memory_at], file, line.number, 1);
        }
        process.line = line.number;
        table.processes.push_back(std::move(process));
    }
    return table;
}

}  // namespace

GpuProcessTable parse_nvidia_smi_processes(std::string_view text, const std::string& file) {
    NoteLog notes;
    // The CSV is told apart by its header: the first non-blank line names process_name.
    for (const Line& line : split_lines(text)) {
        if (is_blank(line.text)) {
            continue;
        }
        if (line.text.find("process_name") != std::string_view::npos && line.text.find('|') == std::string_view::npos) {
            GpuProcessTable table = read_compute_apps(text, file, notes);
            table.notes = notes.finish();
            return table;
        }
        break;
    }
    GpuProcessTable table;
    table.file = file;
    enum class State { before, header, rows, done } state = State::before;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        switch (state) {
            case State::before:
                if (content.find("Processes:") != std::string_view::npos) {
                    state = State::header;
                }
                break;
            case State::header:
                if (content.find("===") != std::string_view::npos) {
                    state = State::rows;
                }
                break;
            case State::rows:
                if (starts_with(content, "+")) {
                    state = State::done;  // the box closes
                } else if (content.find("No running processes found") != std::string_view::npos) {
                    break;
                } else if (std::optional<GpuProcess> process = box_row(line.text, line.number, file, notes)) {
                    if (table.processes.size() == max_processes) {
                        throw input_error(file, line.number, 1,
                                          "more than 100000 processes; expected one node's GPU processes");
                    }
                    table.processes.push_back(std::move(*process));
                }
                break;
            case State::done:
                break;
        }
        if (state == State::done) {
            break;
        }
    }
    if (state == State::before || state == State::header) {
        throw input_error(file, 1, 1,
                          "no process table: expected the output of `nvidia-smi` (its \"Processes:\" box) or of "
                          "`nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`");
    }
    table.notes = notes.finish();
    return table;
}

}  // namespace gpusel
