// Host CPU load: sysstat's mpstat and sar -u, procps' top -b.

#include <algorithm>

#include <fmt/format.h>

#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

bool is_cpu_label(std::string_view text) {
    if (text == "all") {
        return true;
    }
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "Linux 4.15.0 (host) \t03/14/2022 \t_x86_64_\t(1 CPU)" -> 1
std::optional<int> banner_cpu_count(std::string_view line) {
    const std::size_t end = line.rfind(" CPU)");
    if (!starts_with(line, "Linux") || end == std::string_view::npos) {
        return std::nullopt;
    }
    const std::size_t open = line.rfind('(', end);
    if (open == std::string_view::npos) {
        return std::nullopt;
    }
    const std::optional<double> count = parse_decimal(line.substr(open + 1, end - open - 1));
    if (!count || *count < 1 || *count > 1e6) {
        return std::nullopt;
    }
    return static_cast<int>(*count);
}

// A report's rows are 60 bytes and more (a time, a CPU, six to ten shares): 16 MiB holds some
// 300,000. A million rows means rows of a few bytes, which the tools never print and which
// would cost 128 bytes each in memory: an error rather than half a GiB.
constexpr std::size_t max_cpu_rows = 1000000;

void check_row_count(std::size_t rows, const std::string& file, int line) {
    if (rows == max_cpu_rows) {
        throw input_error(
            file, line, 1,
            fmt::format("more than {} CPU rows; mpstat, sar and top rows are longer than these", max_cpu_rows));
    }
}

// A sysstat section header: a CPU (or NODE) column and no numbers after it.
struct SysstatHeader {
    std::vector<std::string> after_cpu;  // column names right of CPU, in order
    bool is_cpu = false;                 // CPU (not NODE) with %idle: a section gpusel reads
};

std::optional<SysstatHeader> sysstat_header(const std::vector<Token>& tokens) {
    std::optional<std::size_t> label;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].text == "CPU" || tokens[i].text == "NODE") {
            label = i;
            break;
        }
    }
    if (!label || *label + 1 >= tokens.size()) {
        return std::nullopt;
    }
    SysstatHeader header;
    for (std::size_t i = *label + 1; i < tokens.size(); ++i) {
        if (parse_decimal(tokens[i].text)) {
            return std::nullopt;
        }
        header.after_cpu.emplace_back(tokens[i].text);
    }
    header.is_cpu = tokens[*label].text == "CPU" &&
                    std::find(header.after_cpu.begin(), header.after_cpu.end(), "%idle") != header.after_cpu.end();
    return header;
}

CpuTelemetry parse_sysstat(const LineRange& lines, const std::string& file) {
    CpuTelemetry telemetry;
    telemetry.file = file;
    telemetry.kind = TelemetryKind::mpstat;
    NoteLog notes;
    std::optional<SysstatHeader> current;
    bool found_cpu_section = false;
    for (const Line& line : lines) {
        if (!telemetry.cpu_count) {
            telemetry.cpu_count = banner_cpu_count(line.text);
            if (telemetry.cpu_count) {
                continue;
            }
        }
        const std::vector<Token> tokens = split_whitespace(line.text);
        if (tokens.empty()) {
            continue;
        }
        if (std::optional<SysstatHeader> header = sysstat_header(tokens)) {
            if (header->is_cpu) {
                found_cpu_section = true;
                if (std::find(header->after_cpu.begin(), header->after_cpu.end(), "%user") != header->after_cpu.end()) {
                    telemetry.kind = TelemetryKind::sar;
                }
            }
            current = std::move(header);
            continue;
        }
        if (!current || !current->is_cpu) {
            continue;  // banner, other mpstat -A sections
        }
        const std::size_t value_count = current->after_cpu.size();
        if (tokens.size() < value_count + 1) {
            notes.add("skipped a line that is not a CPU row", line.number);
            continue;
        }
        const std::size_t cpu_at = tokens.size() - value_count - 1;
        if (!is_cpu_label(tokens[cpu_at].text)) {
            notes.add("skipped a line that is not a CPU row", line.number);
            continue;
        }
        CpuSample sample;
        sample.cpu = std::string(tokens[cpu_at].text);
        sample.line = line.number;
        for (std::size_t i = 0; i < cpu_at; ++i) {
            sample.time += (i == 0 ? "" : " ") + std::string(tokens[i].text);
        }
        std::optional<double> idle;
        for (std::size_t k = 0; k < value_count; ++k) {
            const Token& cell = tokens[cpu_at + 1 + k];
            const std::string& column = current->after_cpu[k];
            std::optional<double> value = parse_decimal(cell.text);
            if (!value) {
                throw input_error(file, line.number, cell.column,
                                  fmt::format("column '{}': {} is not a number", column, quote(cell.text)));
            }
            if (!column.empty() && column.front() == '%') {
                value = checked_share(*value, 100, fmt::format("column '{}'", column), cell.text, file, line.number,
                                      cell.column);
            }
            if (column == "%idle") {
                idle = value;
            } else if (column == "%usr" || column == "%user") {
                sample.user_pct = value;
            } else if (column == "%sys" || column == "%system") {
                sample.system_pct = value;
            } else if (column == "%iowait") {
                sample.iowait_pct = value;
            }
        }
        sample.busy_pct = std::clamp(100.0 - idle.value_or(100.0), 0.0, 100.0);
        check_row_count(telemetry.samples.size() + telemetry.averages.size(), file, line.number);
        if (sample.time == "Average:") {
            telemetry.averages.push_back(std::move(sample));
        } else {
            telemetry.samples.push_back(std::move(sample));
        }
    }
    if (!found_cpu_section) {
        throw input_error(file, 1, 1, "no 'CPU ... %idle' header; expected mpstat, sar -u or top -b output");
    }
    if (telemetry.samples.empty() && telemetry.averages.empty()) {
        throw input_error(file, 1, 1, "no CPU rows under the 'CPU ... %idle' header");
    }
    telemetry.notes = notes.finish();
    return telemetry;
}

// "%Cpu(s):  0.8 us,  3.1 sy, ..." (procps-ng) or "Cpu(s):  0.8%us,  3.1%sy, ..." (procps 3.2).
// `indent`: how many bytes of the line precede `content`, for positions in messages.
bool parse_top_cpu_line(std::string_view content, int indent, CpuSample& sample, const std::string& file, int line) {
    const std::size_t colon = content.find(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    std::string_view rest = content.substr(colon + 1);
    std::optional<double> idle;
    std::size_t start = 0;
    while (start <= rest.size()) {
        const std::size_t comma = rest.find(',', start);
        std::string_view item =
            trim(rest.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        std::size_t split = item.find_first_of(" %");
        if (!item.empty() && split != std::string_view::npos) {
            const std::string_view number = item.substr(0, split);
            std::string_view label = trim(item.substr(split));
            if (!label.empty() && label.front() == '%') {
                label.remove_prefix(1);
            }
            const int column = indent + static_cast<int>(colon + 2) + static_cast<int>(item.data() - rest.data());
            std::optional<double> value = parse_decimal(number);
            if (!value) {
                throw input_error(file, line, column, fmt::format("{} is not a CPU share", quote(item)));
            }
            value = checked_share(*value, 100, "CPU share", item, file, line, column);
            if (label == "id") {
                idle = value;
            } else if (label == "us") {
                sample.user_pct = value;
            } else if (label == "sy") {
                sample.system_pct = value;
            } else if (label == "wa") {
                sample.iowait_pct = value;
            }
        }
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    if (!idle) {
        return false;
    }
    sample.busy_pct = std::clamp(100.0 - *idle, 0.0, 100.0);
    return true;
}

CpuTelemetry parse_top(const LineRange& lines, const std::string& file) {
    CpuTelemetry telemetry;
    telemetry.file = file;
    telemetry.kind = TelemetryKind::top;
    NoteLog notes;
    std::string frame_time;
    std::optional<std::size_t> pid_at, user_at, cpu_at, command_at;
    std::size_t header_tokens = 0;
    bool in_table = false;
    for (const Line& line : lines) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            in_table = false;
            continue;
        }
        // Tokens are split from `content`: positions in messages add the indent back.
        const auto indent = static_cast<int>(content.data() - line.text.data());
        if (starts_with(content, "top - ")) {
            const std::vector<Token> tokens = split_whitespace(content);
            frame_time = tokens.size() > 2 ? std::string(tokens[2].text) : "";
            telemetry.processes.clear();  // keep the last frame's table
            in_table = false;
            continue;
        }
        if (starts_with(content, "%Cpu") || starts_with(content, "Cpu")) {
            CpuSample sample;
            sample.time = frame_time;
            sample.line = line.number;
            const std::string_view label = content.substr(0, content.find(':'));
            const std::size_t digit = label.find_first_of("0123456789");
            if (label == "%Cpu(s)" || label == "Cpu(s)") {
                sample.cpu = "all";
            } else if (digit != std::string_view::npos) {
                sample.cpu = std::string(trim(label.substr(digit)));  // "%Cpu0  :" with top's '1' toggle
            } else {
                notes.add("skipped a CPU line of an unknown kind", line.number);
                continue;
            }
            if (parse_top_cpu_line(content, indent, sample, file, line.number)) {
                check_row_count(telemetry.samples.size(), file, line.number);
                telemetry.samples.push_back(std::move(sample));
            } else {
                notes.add("skipped a CPU line without an 'id' share", line.number);
            }
            continue;
        }
        const std::vector<Token> tokens = split_whitespace(content);
        if (!tokens.empty() && tokens.front().text == "PID") {
            pid_at = user_at = cpu_at = command_at = std::nullopt;
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                if (tokens[i].text == "PID") {
                    pid_at = i;
                } else if (tokens[i].text == "USER") {
                    user_at = i;
                } else if (tokens[i].text == "%CPU") {
                    cpu_at = i;
                } else if (tokens[i].text == "COMMAND") {
                    command_at = i;
                }
            }
            header_tokens = tokens.size();
            in_table = pid_at && cpu_at && command_at;
            continue;
        }
        if (in_table) {
            if (tokens.size() < header_tokens || !parse_decimal(tokens[*pid_at].text)) {
                notes.add("skipped a line that is not a process row", line.number);
                continue;
            }
            CpuProcess process;
            process.pid = std::string(tokens[*pid_at].text);
            process.user = user_at ? std::string(tokens[*user_at].text) : "";
            const std::optional<double> share = parse_decimal(tokens[*cpu_at].text);
            if (!share) {
                throw input_error(file, line.number, indent + tokens[*cpu_at].column,
                                  fmt::format("column '%CPU': {} is not a number", quote(tokens[*cpu_at].text)));
            }
            // top's per-process %CPU adds up the CPUs a process uses (Irix mode, the default): at
            // most 100 % on each of 8192 CPUs, the largest NR_CPUS Linux builds with (MAXSMP).
            process.cpu_pct = checked_share(*share, 819200, "column '%CPU'", tokens[*cpu_at].text, file, line.number,
                                            indent + tokens[*cpu_at].column);
            process.command =
                std::string(trim(content.substr(static_cast<std::size_t>(tokens[*command_at].column) - 1)));
            process.line = line.number;
            telemetry.processes.push_back(std::move(process));
        }
    }
    if (telemetry.samples.empty()) {
        throw input_error(file, 1, 1, "no '%Cpu(s):' line; expected `top -b` output");
    }
    telemetry.notes = notes.finish();
    return telemetry;
}

}  // namespace

CpuTelemetry parse_cpu_report(std::string_view text, const std::string& file) {
    const LineRange lines = split_lines(text);
    for (const Line& line : lines) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        if (starts_with(content, "top - ") || starts_with(content, "%Cpu") || starts_with(content, "Cpu(s)")) {
            return parse_top(lines, file);
        }
        break;
    }
    return parse_sysstat(lines, file);
}

}  // namespace gpusel
