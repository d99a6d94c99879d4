// nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/units.hpp"
#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

// Names accepted on the --query-gpu command line that nvidia-smi prints under another name in
// the CSV header (`nvidia-smi --help-query-gpu`; the 8x H100 sample shows gpu_name -> name and
// gpu_bus_id -> pci.bus_id).
constexpr std::pair<std::string_view, std::string_view> field_aliases[] = {
    {"gpu_name", "name"},
    {"gpu_bus_id", "pci.bus_id"},
    {"gpu_serial", "serial"},
    {"gpu_uuid", "uuid"},
    {"clocks.gr", "clocks.current.graphics"},
    {"clocks.sm", "clocks.current.sm"},
    {"clocks.mem", "clocks.current.memory"},
    {"clocks.video", "clocks.current.video"},
    {"clocks.max.gr", "clocks.max.graphics"},
    {"clocks.max.mem", "clocks.max.memory"},
    {"clocks.applications.gr", "clocks.applications.graphics"},
    {"clocks.applications.mem", "clocks.applications.memory"},
    {"clocks_throttle_reasons.active", "clocks_event_reasons.active"},
};

struct FieldMeaning {
    std::string_view field;
    GpuMetric metric;
    double scale;  // to the metric's unit when the value carries no unit (nounits)
};

// Fields gpusel reads, by canonical name. Sizes are MiB in --query-gpu output (the header says
// "[MiB]").
constexpr FieldMeaning field_meanings[] = {
    {"utilization.gpu", GpuMetric::sm_util_pct, 1},
    {"utilization.memory", GpuMetric::mem_util_pct, 1},
    {"memory.used", GpuMetric::fb_used_bytes, bytes_per_mib},
    {"memory.total", GpuMetric::fb_total_bytes, bytes_per_mib},
    {"memory.free", GpuMetric::fb_free_bytes, bytes_per_mib},
    {"power.draw", GpuMetric::power_watts, 1},
    {"power.limit", GpuMetric::power_limit_watts, 1},
    {"temperature.gpu", GpuMetric::gpu_temp_c, 1},
    {"temperature.memory", GpuMetric::mem_temp_c, 1},
    {"clocks.current.sm", GpuMetric::sm_clock_mhz, 1},
    {"clocks.current.memory", GpuMetric::mem_clock_mhz, 1},
    {"pcie.link.gen.current", GpuMetric::pcie_link_gen_current, 1},
    {"pcie.link.gen.max", GpuMetric::pcie_link_gen_max, 1},
    {"pcie.link.width.current", GpuMetric::pcie_link_width_current, 1},
    {"pcie.link.width.max", GpuMetric::pcie_link_width_max, 1},
};

// Fallbacks, used only when the preferred field is absent from the file: power.draw was split
// into .average and .instant on newer drivers; graphics and SM clocks are the same domain.
constexpr std::pair<std::string_view, std::string_view> fallbacks[] = {
    {"power.draw.average", "power.draw"},
    {"power.draw.instant", "power.draw"},
    {"clocks.current.graphics", "clocks.current.sm"},
};

std::string canonical(std::string_view name) {
    for (const auto& [alias, target] : field_aliases) {
        if (alias == name) {
            return std::string(target);
        }
    }
    return std::string(name);
}

const FieldMeaning* meaning_of(std::string_view field) {
    for (const FieldMeaning& meaning : field_meanings) {
        if (meaning.field == field) {
            return &meaning;
        }
    }
    return nullptr;
}

bool is_known_field(std::string_view field) {
    if (meaning_of(field) != nullptr || field == "index" || field == "timestamp" || field == "name" ||
        field == "uuid" || field == "pci.bus_id" || field == "driver_version" || field == "pstate" ||
        field == "serial" || field == "vbios_version") {
        return true;
    }
    return std::any_of(std::begin(fallbacks), std::end(fallbacks),
                       [field](const auto& fallback) { return fallback.first == field; });
}

// "memory.total [MiB]" -> {"memory.total", "MiB"}
std::pair<std::string, std::string> split_header_cell(std::string_view cell) {
    cell = trim(cell);
    const std::size_t bracket = cell.find(" [");
    if (bracket != std::string_view::npos && cell.back() == ']') {
        return {canonical(trim(cell.substr(0, bracket))),
                std::string(cell.substr(bracket + 2, cell.size() - bracket - 3))};
    }
    return {canonical(cell), ""};
}

bool looks_like_field_name(std::string_view cell) {
    cell = trim(cell);
    const std::size_t bracket = cell.find(" [");
    if (bracket != std::string_view::npos && cell.back() == ']') {
        cell = cell.substr(0, bracket);
    }
    if (cell.empty() || cell.front() < 'a' || cell.front() > 'z') {
        return false;
    }
    return std::all_of(cell.begin(), cell.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    });
}

struct Cell {
    std::string_view text;
    int column = 0;
};

std::vector<Cell> split_csv(std::string_view line) {
    std::vector<Cell> cells;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        const std::string_view raw =
            line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        const std::string_view value = trim(raw);
        const std::size_t offset = value.empty() ? start : static_cast<std::size_t>(value.data() - line.data());
        cells.push_back(Cell{value, static_cast<int>(offset) + 1});
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    return cells;
}

// Unit suffixes printed after values (format=csv without nounits) and their factor to the base
// unit of the metric (bytes, percent, watts, MHz, degrees C).
std::optional<double> unit_factor(std::string_view unit) {
    static constexpr std::pair<std::string_view, double> units[] = {
        {"%", 1}, {"MiB", bytes_per_mib}, {"KiB", 1024}, {"GiB", bytes_per_mib * 1024}, {"W", 1}, {"MHz", 1}, {"C", 1},
        {"x", 1},
    };
    for (const auto& [name, factor] : units) {
        if (name == unit) {
            return factor;
        }
    }
    return std::nullopt;
}

// The value in the metric's unit; with `metric`, range-checked (checked_gpu_reading).
std::optional<double> read_value(const Cell& cell, const std::string& field, double default_scale,
                                 const std::string& file, int line, std::optional<GpuMetric> metric = std::nullopt) {
    if (is_missing_value(cell.text)) {
        return std::nullopt;
    }
    std::string_view number = cell.text;
    double scale = default_scale;
    const std::size_t space = number.find(' ');
    if (space != std::string_view::npos) {
        const std::optional<double> factor = unit_factor(trim(number.substr(space + 1)));
        if (!factor) {
            throw input_error(file, line, cell.column,
                              fmt::format("field '{}': {} is not a number with a known unit", field, quote(cell.text)));
        }
        scale = *factor;
        number = number.substr(0, space);
    }
    const std::optional<double> value = parse_decimal(number);
    if (!value) {
        throw input_error(file, line, cell.column,
                          fmt::format("field '{}': {} is not a number", field, quote(cell.text)));
    }
    if (metric) {
        return checked_gpu_reading(*metric, *value, scale, fmt::format("field '{}'", field), cell.text, file, line,
                                   cell.column);
    }
    return *value * scale;
}

// The field names of a capture, from its header line or from --query-fields when it has none,
// and the index of its first data line.
struct QueryHeader {
    std::vector<std::string> columns;  // canonical names
    std::vector<std::string> units;    // from the header ("memory.used [MiB]"), empty otherwise
    bool present = false;              // the file has a header line
    int first_row_line = 0;            // the line number of the first data line
};

QueryHeader parse_query_header(const LineRange& lines, const std::string& file,
                               const std::vector<std::string>& fields) {
    QueryHeader header;
    std::string first_text;  // a copy: a line's text lives only as long as the loop's step
    int first_number = 0;
    for (const Line& line : lines) {
        if (!is_blank(line.text)) {
            first_text = line.text;
            first_number = line.number;
            break;
        }
    }
    if (first_number == 0) {
        throw input_error(file, 1, 1, "empty file; expected `nvidia-smi --query-gpu=... --format=csv` output");
    }
    const std::vector<Cell> head = split_csv(first_text);
    header.present = std::all_of(head.begin(), head.end(), [](const Cell& c) { return looks_like_field_name(c.text); });
    if (!header.present) {
        if (fields.empty()) {
            throw input_error(file, first_number, 1,
                              "no header line (captured with --format=csv,noheader?); pass the --query-gpu field "
                              "list with --query-fields, e.g. --query-fields index,utilization.gpu,memory.used");
        }
        for (const std::string& field : fields) {
            header.columns.push_back(canonical(field));
            header.units.emplace_back();
        }
        header.first_row_line = first_number;
        return header;
    }
    for (const Cell& cell : head) {
        auto [name, unit] = split_header_cell(cell.text);
        header.columns.push_back(std::move(name));
        header.units.push_back(std::move(unit));
    }
    if (!fields.empty()) {
        std::vector<std::string> wanted;
        for (const std::string& field : fields) {
            wanted.push_back(canonical(field));
        }
        if (wanted != header.columns) {
            throw input_error(file, first_number, 1,
                              "the header names other fields than --query-fields; drop --query-fields or make "
                              "it match the header");
        }
    }
    header.first_row_line = first_number + 1;
    return header;
}

// Which column feeds which metric, at which scale, with fallbacks for fields the file lacks; and
// the columns that identify a row: GPU index, timestamp, uuid or bus id.
struct QueryColumns {
    std::vector<std::optional<GpuMetric>> metric_of;
    std::vector<double> scale_of;
    std::optional<std::size_t> index;
    std::optional<std::size_t> time;
    std::optional<std::size_t> identity;
};

QueryColumns query_columns(const QueryHeader& header, NoteLog& notes) {
    const std::vector<std::string>& columns = header.columns;
    QueryColumns result;
    result.metric_of.resize(columns.size());
    result.scale_of.assign(columns.size(), 1);
    std::vector<std::string> ignored;
    for (std::size_t i = 0; i < columns.size(); ++i) {
        std::string target = columns[i];
        for (const auto& [fallback, preferred] : fallbacks) {
            if (fallback == columns[i] && std::find(columns.begin(), columns.end(), preferred) == columns.end()) {
                target = std::string(preferred);
            }
        }
        if (const FieldMeaning* meaning = meaning_of(target)) {
            result.metric_of[i] = meaning->metric;
            result.scale_of[i] = meaning->scale;
            if (!header.units[i].empty()) {
                if (const std::optional<double> factor = unit_factor(header.units[i])) {
                    result.scale_of[i] = *factor;
                }
            }
        }
        if (!is_known_field(columns[i])) {
            ignored.push_back(columns[i]);
        }
    }
    if (!ignored.empty()) {
        std::string names;
        for (std::size_t i = 0; i < std::min<std::size_t>(ignored.size(), 3); ++i) {
            names += (i == 0 ? "'" : ", '") + ignored[i] + "'";
        }
        notes.add(fmt::format("{} field{} gpusel does not read {} ignored: {}{}", ignored.size(),
                              ignored.size() == 1 ? "" : "s", ignored.size() == 1 ? "was" : "were", names,
                              ignored.size() > 3 ? ", ..." : ""));
    }
    const auto column_of = [&columns](std::string_view name) -> std::optional<std::size_t> {
        const auto found = std::find(columns.begin(), columns.end(), name);
        if (found == columns.end()) {
            return std::nullopt;
        }
        return static_cast<std::size_t>(found - columns.begin());
    };
    result.index = column_of("index");
    result.time = column_of("timestamp");
    result.identity = column_of("uuid");
    if (!result.identity) {
        result.identity = column_of("pci.bus_id");
    }
    if (!result.index && !result.identity) {
        notes.add("no index, uuid or pci.bus_id field: every row is counted as GPU 0");
    }
    return result;
}

// The GPU a row belongs to: its index field, else the order in which its uuid / bus id first
// appeared, else GPU 0.
int row_gpu(const std::vector<Cell>& cells, const QueryColumns& columns,
            std::map<std::string, int>& ordinal_of_identity, const std::string& file, int line) {
    if (columns.index && *columns.index < cells.size()) {
        const Cell& cell = cells[*columns.index];
        const std::optional<double> index = read_value(cell, "index", 1, file, line);
        if (!index || *index < 0 || *index > 100000 || *index != static_cast<double>(static_cast<int>(*index))) {
            throw input_error(file, line, cell.column,
                              fmt::format("field 'index': {} is not a GPU index", quote(cell.text)));
        }
        return static_cast<int>(*index);
    }
    if (columns.identity && *columns.identity < cells.size()) {
        const std::string identity(cells[*columns.identity].text);
        const auto inserted = ordinal_of_identity.emplace(identity, static_cast<int>(ordinal_of_identity.size()));
        // The same bound as an index field's: a GPU numbered beyond 100000 is not one of a
        // machine, and each costs memory in every step of a diagnosis.
        if (inserted.second && ordinal_of_identity.size() > 100000) {
            throw input_error(file, line, cells[*columns.identity].column,
                              "more than 100000 distinct GPUs (uuid / pci.bus_id); expected one machine's GPUs");
        }
        return inserted.first->second;
    }
    return 0;
}

// One data line as a sample; nullopt for a line that holds none (blank, elided, a repeated header).
std::optional<GpuSample> parse_query_row(const Line& line, const QueryHeader& header, const QueryColumns& columns,
                                         std::map<std::string, int>& ordinal_of_identity, const std::string& file,
                                         NoteLog& notes) {
    const std::string_view content = trim(line.text);
    if (content.empty()) {
        return std::nullopt;
    }
    if (content == "[...]" || content == "..." || content == "...." || content == "[…]") {
        notes.add("skipped an elision line", line.number);
        return std::nullopt;
    }
    const std::vector<Cell> cells = split_csv(line.text);
    if (header.present &&
        std::all_of(cells.begin(), cells.end(), [](const Cell& c) { return looks_like_field_name(c.text); })) {
        notes.add("skipped a repeated header line", line.number);
        return std::nullopt;
    }
    const std::size_t width = header.columns.size();
    if (cells.size() > width) {
        throw input_error(file, line.number, cells[width].column,
                          fmt::format("row has {} values but there are {} fields", cells.size(), width));
    }
    if (cells.size() < width) {
        const bool any_reading = std::any_of(columns.metric_of.begin(),
                                             columns.metric_of.begin() + static_cast<std::ptrdiff_t>(cells.size()),
                                             [](const std::optional<GpuMetric>& metric) { return metric.has_value(); });
        if (!any_reading) {
            // No reading at all: a capture stopped mid-row, or a file of such rows, which would
            // cost a sample each and say nothing.
            notes.add("skipped a row cut short before its first value", line.number);
            return std::nullopt;
        }
        notes.add("row cut short; its missing fields have no value", line.number);
    }
    GpuSample sample;
    sample.line = line.number;
    sample.gpu = row_gpu(cells, columns, ordinal_of_identity, file, line.number);
    if (columns.time && *columns.time < cells.size()) {
        if (const std::optional<SampleTime> time = parse_sample_time(trim(cells[*columns.time].text))) {
            sample.set_time(*time);
        }
    }
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::optional<GpuMetric>& metric = columns.metric_of[i];
        if (!metric) {
            continue;
        }
        const std::optional<double> value =
            read_value(cells[i], header.columns[i], columns.scale_of[i], file, line.number, metric);
        if (value && !sample.value(*metric)) {  // a fallback never overwrites
            sample.set(*metric, *value);
        }
    }
    return sample;
}

// Rows whose timestamps all carry a date are put in time order when the file has them in
// another (a log written newest first, or merged from several): the steady state and the
// capture's length read samples in time order. Rows of one time keep their file order. Times
// of day alone are left as printed: across midnight only the file knows their order.
void sort_dated_rows(std::deque<GpuSample>& samples, NoteLog& notes) {
    const auto dated = [](const GpuSample& sample) { return sample.time() && sample.time()->dated; };
    if (!std::all_of(samples.begin(), samples.end(), dated)) {
        return;
    }
    const auto earlier = [](const GpuSample& a, const GpuSample& b) {
        return std::make_pair(a.time()->seconds, a.line) < std::make_pair(b.time()->seconds, b.line);
    };
    if (std::is_sorted(samples.begin(), samples.end(), earlier)) {
        return;
    }
    std::sort(samples.begin(), samples.end(), earlier);
    notes.add("the rows are not in time order (newest first?); they are read in time order");
}

}  // namespace

std::vector<std::string> split_query_fields(std::string_view list, const std::string& origin) {
    std::vector<std::string> fields;
    for (const Cell& cell : split_csv(list)) {
        if (cell.text.empty()) {
            throw InputError(Diagnostic{origin, {}, {}, fmt::format("empty field name in '{}'", list)});
        }
        fields.emplace_back(cell.text);
    }
    return fields;
}

GpuTelemetry parse_nvidia_smi_query(std::string_view text, const std::string& file,
                                    const std::vector<std::string>& fields) {
    GpuTelemetry telemetry;
    telemetry.kind = TelemetryKind::nvidia_smi_query;
    telemetry.file = file;
    NoteLog notes;
    const LineRange lines = split_lines(text);
    const QueryHeader header = parse_query_header(lines, file, fields);
    const QueryColumns columns = query_columns(header, notes);
    std::map<std::string, int> ordinal_of_identity;
    for (const Line& line : lines) {
        if (line.number < header.first_row_line) {
            continue;
        }
        if (std::optional<GpuSample> sample =
                parse_query_row(line, header, columns, ordinal_of_identity, file, notes)) {
            telemetry.samples.push_back(std::move(*sample));
        }
    }
    if (telemetry.samples.empty()) {
        throw input_error(file, 1, 1, "no data rows; expected `nvidia-smi --query-gpu=... --format=csv` output");
    }
    sort_dated_rows(telemetry.samples, notes);
    if (!columns.index && columns.identity) {
        notes.add("no index field: GPUs are numbered in order of first appearance of their uuid / pci.bus_id");
    }
    telemetry.columns = header.columns;
    telemetry.notes = notes.finish();
    return telemetry;
}

}  // namespace gpusel
