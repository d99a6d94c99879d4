// nvidia-smi dmon and dcgmi dmon: whitespace-aligned columns under '#' header lines.

#include <fmt/format.h>

#include "base/units.hpp"
#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

struct ColumnMeaning {
    std::string_view name;
    std::optional<GpuMetric> metric;
    double scale = 1;
};

// nvidia-smi dmon column names (nvidia-smi(1), "dmon"; and the samples in
// tests/data/telemetry). `temp` is the single temperature column of drivers before `gtemp`/
// `mtemp` existed. fb, bar1 and ccpm are printed in MB, which nvidia-smi means as MiB.
constexpr ColumnMeaning dmon_columns[] = {
    {"sm", GpuMetric::sm_util_pct, 1},
    {"mem", GpuMetric::mem_util_pct, 1},
    {"fb", GpuMetric::fb_used_bytes, bytes_per_mib},
    {"pwr", GpuMetric::power_watts, 1},
    {"gtemp", GpuMetric::gpu_temp_c, 1},
    {"temp", GpuMetric::gpu_temp_c, 1},
    {"mtemp", GpuMetric::mem_temp_c, 1},
    {"pclk", GpuMetric::sm_clock_mhz, 1},
    {"mclk", GpuMetric::mem_clock_mhz, 1},
    {"rxpci", GpuMetric::pcie_rx_bytes_per_s, bytes_per_mib},
    {"txpci", GpuMetric::pcie_tx_bytes_per_s, bytes_per_mib},
};

std::optional<ColumnMeaning> dmon_meaning(std::string_view column) {
    for (const ColumnMeaning& meaning : dmon_columns) {
        if (meaning.name == column) {
            return meaning;
        }
    }
    return std::nullopt;
}

// DCGM field tags as dcgmi prints them in the header (NVIDIA/DCGM dcgmlib/src/dcgm_fields.cpp,
// DcgmFieldsPopulateOneFieldWithFormatting). The profiling fields 1001-1008 are ratios 0..1,
// shown here as percent. 1009-1012 are bytes per second. FB fields are MiB.
struct DcgmField {
    int id;
    std::string_view tag;
    std::optional<GpuMetric> metric;
    double scale;
};

constexpr DcgmField dcgm_fields[] = {
    {100, "SMCLK", GpuMetric::sm_clock_mhz, 1},
    {101, "MMCLK", GpuMetric::mem_clock_mhz, 1},
    {140, "MMTMP", GpuMetric::mem_temp_c, 1},
    {150, "TMPTR", GpuMetric::gpu_temp_c, 1},
    {155, "POWER", GpuMetric::power_watts, 1},
    {203, "GPUTL", GpuMetric::sm_util_pct, 1},
    {204, "MCUTL", GpuMetric::mem_util_pct, 1},
    {250, "FBTTL", GpuMetric::fb_total_bytes, bytes_per_mib},
    {251, "FBFRE", GpuMetric::fb_free_bytes, bytes_per_mib},
    {252, "FBUSD", GpuMetric::fb_used_bytes, bytes_per_mib},
    {1001, "GRACT", GpuMetric::gr_engine_active_pct, 100},
    {1002, "SMACT", GpuMetric::sm_active_pct, 100},
    {1003, "SMOCC", GpuMetric::sm_occupancy_pct, 100},
    {1004, "TENSO", GpuMetric::tensor_active_pct, 100},
    {1005, "DRAMA", GpuMetric::dram_active_pct, 100},
    {1006, "FP64A", std::nullopt, 1},
    {1007, "FP32A", std::nullopt, 1},
    {1008, "FP16A", std::nullopt, 1},
    {1009, "PCITX", GpuMetric::pcie_tx_bytes_per_s, 1},
    {1010, "PCIRX", GpuMetric::pcie_rx_bytes_per_s, 1},
    {1011, "NVLTX", GpuMetric::nvlink_tx_bytes_per_s, 1},
    {1012, "NVLRX", GpuMetric::nvlink_rx_bytes_per_s, 1},
};

const DcgmField* dcgm_field(std::string_view tag) {
    for (const DcgmField& field : dcgm_fields) {
        if (field.tag == tag) {
            return &field;
        }
    }
    return nullptr;
}

std::optional<int> parse_index(std::string_view text) {
    const std::optional<double> value = parse_decimal(text);
    if (!value || *value < 0 || *value > 100000 || *value != static_cast<double>(static_cast<int>(*value)) ||
        text.find_first_of(".eE") != std::string_view::npos) {
        return std::nullopt;
    }
    return static_cast<int>(*value);
}

// Reads one value cell: no value for "-"/"N/A"; a number otherwise; InputError for anything
// else, naming the column.
std::optional<double> read_cell(const Token& cell, std::string_view column, const std::string& file, int line) {
    if (is_missing_value(cell.text)) {
        return std::nullopt;
    }
    const std::optional<double> value = parse_decimal(cell.text);
    if (!value) {
        throw input_error(file, line, cell.column,
                          fmt::format("column '{}': {} is not a number", column, quote(cell.text)));
    }
    return value;
}

// Whether a row has a cell besides its index, date and time.
bool has_value_cell(const std::vector<Token>& cells, const std::vector<std::string>& columns, std::size_t gpu_at) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i != gpu_at && columns[i] != "Date" && columns[i] != "Time") {
            return true;
        }
    }
    return false;
}

// A dmon row of `columns` (no more cells than columns) as a sample.
GpuSample read_dmon_row(const std::vector<Token>& cells, const std::vector<std::string>& columns, std::size_t gpu_at,
                        const std::string& file, int line) {
    GpuSample sample;
    sample.gpu = *parse_index(cells[gpu_at].text);
    sample.line = line;
    std::string_view date;
    std::string_view clock;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string& column = columns[i];
        if (i == gpu_at) {
            continue;
        }
        if (column == "Date") {
            date = cells[i].text;
            continue;
        }
        if (column == "Time") {
            clock = cells[i].text;
            continue;
        }
        const std::optional<double> value = read_cell(cells[i], column, file, line);
        const std::optional<ColumnMeaning> meaning = dmon_meaning(column);
        if (value && meaning && meaning->metric) {
            sample.set(*meaning->metric,
                       checked_gpu_reading(*meaning->metric, *value, meaning->scale, fmt::format("column '{}'", column),
                                           cells[i].text, file, line, cells[i].column));
        }
    }
    // Date and time (-o DT) compare across midnight; a time alone (-o T) is a time of day.
    if (!clock.empty()) {
        const std::optional<SampleTime> time =
            parse_sample_time(date.empty() ? std::string(clock) : fmt::format("{} {}", date, clock));
        if (time) {
            sample.set_time(*time);
        }
    }
    return sample;
}

}  // namespace

GpuTelemetry parse_nvidia_smi_dmon(std::string_view text, const std::string& file) {
    GpuTelemetry telemetry;
    telemetry.kind = TelemetryKind::nvidia_smi_dmon;
    telemetry.file = file;
    NoteLog notes;
    std::vector<std::string> columns;
    int gpu_column = -1;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        if (content.front() == '#') {
            const std::vector<Token> tokens = split_whitespace(content.substr(1));
            std::vector<std::string> names;
            int found_gpu = -1;
            bool units = false;
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                names.emplace_back(tokens[i].text);
                if (tokens[i].text == "gpu") {
                    found_gpu = static_cast<int>(i);
                }
                if (tokens[i].text == "Idx") {
                    units = true;
                }
            }
            if (found_gpu >= 0) {
                if (!columns.empty() && names != columns) {
                    notes.add("the column header changed mid-stream; later rows follow the new header", line.number);
                }
                columns = std::move(names);
                gpu_column = found_gpu;
            } else if (!units) {
                notes.add("skipped a comment line that is not a dmon header", line.number);
            }
            continue;
        }
        const std::vector<Token> cells = split_whitespace(line.text);
        if (columns.empty()) {
            throw input_error(file, line.number, cells.front().column,
                              "data before the '# gpu ...' header line; expected `nvidia-smi dmon` output");
        }
        const auto gpu_at = static_cast<std::size_t>(gpu_column);
        if (cells.size() <= gpu_at || !parse_index(cells[gpu_at].text)) {
            notes.add("skipped a line that is not a dmon row", line.number);
            continue;
        }
        if (cells.size() > columns.size()) {
            throw input_error(
                file, line.number, cells[columns.size()].column,
                fmt::format("row has {} values but the header names {} columns", cells.size(), columns.size()));
        }
        if (!has_value_cell(cells, columns, gpu_at)) {
            // A row cut short to its index (and time) holds no reading: a capture stopped mid-row,
            // or a file of such rows, which would cost a sample each and say nothing.
            notes.add("skipped a row cut short before its first value", line.number);
            continue;
        }
        if (cells.size() < columns.size()) {
            notes.add("row cut short; its missing columns have no value", line.number);
        }
        telemetry.samples.push_back(read_dmon_row(cells, columns, gpu_at, file, line.number));
    }
    if (columns.empty()) {
        throw input_error(file, 1, 1, "no '# gpu ...' header line; expected `nvidia-smi dmon` output");
    }
    if (telemetry.samples.empty()) {
        throw input_error(file, 1, 1, "no sample rows under the '# gpu ...' header");
    }
    telemetry.columns = columns;
    telemetry.notes = notes.finish();
    return telemetry;
}

GpuTelemetry parse_dcgmi_dmon(std::string_view text, const std::string& file) {
    GpuTelemetry telemetry;
    telemetry.kind = TelemetryKind::dcgmi_dmon;
    telemetry.file = file;
    NoteLog notes;
    std::vector<std::string> columns;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        if (content.front() == '#') {
            const std::vector<Token> tokens = split_whitespace(content.substr(1));
            if (!tokens.empty() && tokens.front().text == "Entity") {
                std::vector<std::string> names;
                for (std::size_t i = 1; i < tokens.size(); ++i) {
                    names.emplace_back(tokens[i].text);
                    if (dcgm_field(tokens[i].text) == nullptr) {
                        notes.add(fmt::format("column {} is not a DCGM field gpusel reads; kept without a metric",
                                              quote(tokens[i].text)));
                    }
                }
                if (!columns.empty() && names != columns) {
                    notes.add("the column header changed mid-stream; later rows follow the new header", line.number);
                }
                columns = std::move(names);
            } else {
                notes.add("skipped a comment line that is not a dcgmi header", line.number);
            }
            continue;
        }
        const std::vector<Token> cells = split_whitespace(line.text);
        if (cells.front().text == "ID" || cells.front().text == "Id") {
            continue;  // the units line under the header
        }
        if (columns.empty()) {
            throw input_error(file, line.number, cells.front().column,
                              "data before the '#Entity ...' header line; expected `dcgmi dmon` output");
        }
        const std::string_view entity = cells.front().text;
        GpuEntity kind = GpuEntity::other;
        if (entity == "GPU") {
            kind = GpuEntity::gpu;
        } else if (entity == "GPU-I") {
            kind = GpuEntity::gpu_instance;
        } else if (entity == "GPU-CI") {
            kind = GpuEntity::compute_instance;
        }
        if (cells.size() < 2 || !parse_index(cells[1].text) ||
            (kind == GpuEntity::other && (entity.empty() || entity.front() < 'A' || entity.front() > 'Z'))) {
            notes.add("skipped a line that is not a dcgmi row", line.number);
            continue;
        }
        const std::size_t values = cells.size() - 2;
        if (values > columns.size()) {
            throw input_error(file, line.number, cells[2 + columns.size()].column,
                              fmt::format("row has {} values but the header names {} fields", values, columns.size()));
        }
        if (values == 0) {
            notes.add("skipped a row cut short before its first value", line.number);
            continue;
        }
        if (values < columns.size()) {
            notes.add("row cut short; its missing columns have no value", line.number);
        }
        GpuSample sample;
        sample.gpu = *parse_index(cells[1].text);
        sample.entity = kind;
        sample.line = line.number;
        for (std::size_t i = 0; i < values; ++i) {
            const std::optional<double> value = read_cell(cells[2 + i], columns[i], file, line.number);
            const DcgmField* field = dcgm_field(columns[i]);
            if (value && field != nullptr && field->metric) {
                sample.set(
                    *field->metric,
                    checked_gpu_reading(*field->metric, *value, field->scale, fmt::format("column '{}'", columns[i]),
                                        cells[2 + i].text, file, line.number, cells[2 + i].column));
            }
        }
        telemetry.samples.push_back(std::move(sample));
    }
    if (columns.empty()) {
        throw input_error(file, 1, 1, "no '#Entity ...' header line; expected `dcgmi dmon -e ...` output");
    }
    if (telemetry.samples.empty()) {
        throw input_error(file, 1, 1, "no sample rows under the '#Entity ...' header");
    }
    telemetry.columns = columns;
    telemetry.notes = notes.finish();
    return telemetry;
}

}  // namespace gpusel
