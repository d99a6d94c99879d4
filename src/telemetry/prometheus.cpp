// DCGM-exporter metrics as Prometheus serves them: the text exposition format of a scrape
// (https://prometheus.io/docs/instrumenting/exposition_formats/) and the JSON of a range query
// (https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries). Both become the
// same GpuSample rows as `dcgmi dmon`, so the rules cannot tell the sources apart.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/units.hpp"
#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

// The exporter's names for the DCGM fields gpusel reads (NVIDIA/dcgm-exporter
// etc/default-counters.csv and etc/dcp-metrics-included.csv; DCGM field ids in
// dcgm_fields.h). PROF ratios 0..1 are scaled to percent, FB sizes are MiB.
struct PromMetric {
    std::string_view name;
    GpuMetric metric;
    double scale;
};

constexpr PromMetric prom_metrics[] = {
    {"DCGM_FI_DEV_GPU_UTIL", GpuMetric::sm_util_pct, 1},                      // 203
    {"DCGM_FI_DEV_MEM_COPY_UTIL", GpuMetric::mem_util_pct, 1},                // 204
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", GpuMetric::gr_engine_active_pct, 100},  // 1001
    {"DCGM_FI_PROF_SM_ACTIVE", GpuMetric::sm_active_pct, 100},                // 1002
    {"DCGM_FI_PROF_SM_OCCUPANCY", GpuMetric::sm_occupancy_pct, 100},          // 1003
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", GpuMetric::tensor_active_pct, 100},   // 1004
    {"DCGM_FI_PROF_DRAM_ACTIVE", GpuMetric::dram_active_pct, 100},            // 1005
    {"DCGM_FI_PROF_PCIE_TX_BYTES", GpuMetric::pcie_tx_bytes_per_s, 1},        // 1009
    {"DCGM_FI_PROF_PCIE_RX_BYTES", GpuMetric::pcie_rx_bytes_per_s, 1},        // 1010
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", GpuMetric::nvlink_tx_bytes_per_s, 1},    // 1011
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", GpuMetric::nvlink_rx_bytes_per_s, 1},    // 1012
    {"DCGM_FI_DEV_FB_TOTAL", GpuMetric::fb_total_bytes, bytes_per_mib},       // 250
    {"DCGM_FI_DEV_FB_FREE", GpuMetric::fb_free_bytes, bytes_per_mib},         // 251
    {"DCGM_FI_DEV_FB_USED", GpuMetric::fb_used_bytes, bytes_per_mib},         // 252
    {"DCGM_FI_DEV_POWER_USAGE", GpuMetric::power_watts, 1},                   // 155
    {"DCGM_FI_DEV_GPU_TEMP", GpuMetric::gpu_temp_c, 1},                       // 150
    {"DCGM_FI_DEV_MEMORY_TEMP", GpuMetric::mem_temp_c, 1},                    // 140
    {"DCGM_FI_DEV_SM_CLOCK", GpuMetric::sm_clock_mhz, 1},                     // 100
    {"DCGM_FI_DEV_MEM_CLOCK", GpuMetric::mem_clock_mhz, 1},                   // 101
};

const PromMetric* prom_metric(std::string_view name) {
    for (const PromMetric& metric : prom_metrics) {
        if (metric.name == name) {
            return &metric;
        }
    }
    return nullptr;
}

// DCGM marks "no value" with sentinels near INT64_MAX (DCGM_INT64_BLANK 0x7ffffffffffffff0 and
// the NOT_FOUND / NOT_SUPPORTED / NOT_PERMISSIONED values above it), which the exporter prints
// as they are: 9223372036854775794 for an unsupported memory temperature in its README.
constexpr double dcgm_blank = 9223372036854775792.0;

using Labels = std::map<std::string, std::string>;

// Where a value goes: the entity its labels name and the slot (k-th scrape, or a timestamp).
struct EntityKey {
    std::string host;
    std::string gpu;
    std::string instance;  // GPU_I_ID; empty for a whole GPU
    bool operator<(const EntityKey& other) const {
        return std::tie(host, gpu, instance) < std::tie(other.host, other.gpu, other.instance);
    }
};

struct Slot {
    GpuSample sample;
    EntityKey entity;
};

class SampleBuilder {
public:
    SampleBuilder(const std::string& file, NoteLog& notes) : m_file(file), m_notes(notes) {}

    // Adds one value. `order` orders samples in time (scrape number or timestamp in ms).
    void add(const std::string& name, const Labels& labels, double order, std::string_view value_text,
             std::optional<double> value, std::string time, int line, int column) {
        const PromMetric* metric = prom_metric(name);
        if (metric == nullptr) {
            if (name.rfind("DCGM_FI_", 0) == 0) {
                m_skipped.insert(name);
            } else {
                m_notes.add("skipped metrics that are not DCGM_FI_ fields");
            }
            return;
        }
        const auto gpu = labels.find("gpu");
        if (gpu == labels.end() || !parse_index_label(gpu->second)) {
            throw input_error(m_file, line, column,
                              fmt::format("{}: no numeric 'gpu' label; expected a DCGM exporter series", name));
        }
        ++m_dcgm_values;
        EntityKey key{label(labels, "Hostname"), gpu->second, label(labels, "GPU_I_ID")};
        Slot& slot = m_slots[{order, key}];
        if (slot.sample.line == 0) {
            slot.entity = key;
            slot.sample.line = line;
            slot.sample.time = std::move(time);
            slot.sample.uuid = label(labels, "UUID");
            slot.sample.host = key.host;
            slot.sample.pod = label(labels, "pod");
            if (!key.instance.empty()) {
                slot.sample.entity = GpuEntity::gpu_instance;
            }
        }
        if (!value) {
            return;
        }
        if (*value >= dcgm_blank) {
            m_notes.add("DCGM blank values (>= 2^63 - 16: not supported or not found) read as no value", line);
            return;
        }
        slot.sample.set(metric->metric, checked_gpu_reading(metric->metric, *value, metric->scale, name, value_text,
                                                            m_file, line, column));
    }

    GpuTelemetry finish(TelemetryKind kind, std::vector<std::string> columns) {
        if (m_dcgm_values == 0) {
            throw input_error(m_file, 1, 1,
                              "no DCGM_FI_ series gpusel reads (DCGM_FI_DEV_GPU_UTIL, "
                              "DCGM_FI_PROF_GR_ENGINE_ACTIVE, ...); expected DCGM exporter metrics");
        }
        std::set<std::string> hosts;
        for (const auto& [where, slot] : m_slots) {
            hosts.insert(slot.entity.host);
        }
        // One host: the exporter's `gpu` label is the index. Several: GPU 0 exists on each, so
        // GPUs are numbered by first appearance and the note gives the mapping.
        std::map<std::pair<std::string, std::string>, int> numbers;
        GpuTelemetry telemetry;
        telemetry.kind = kind;
        telemetry.file = m_file;
        telemetry.columns = std::move(columns);
        for (auto& [where, slot] : m_slots) {
            const EntityKey& key = slot.entity;
            if (hosts.size() > 1) {
                const auto [found, inserted] =
                    numbers.emplace(std::make_pair(key.host, key.gpu), static_cast<int>(numbers.size()));
                if (inserted) {
                    m_notes.add(fmt::format("GPU {} is gpu {} of host {}", found->second, key.gpu, key.host));
                }
                slot.sample.gpu = found->second;
            } else {
                slot.sample.gpu = *parse_index_label(key.instance.empty() ? key.gpu : key.instance);
            }
            telemetry.samples.push_back(std::move(slot.sample));
        }
        if (!m_skipped.empty()) {
            std::string names;
            std::size_t shown = 0;
            for (const std::string& name : m_skipped) {
                if (shown++ == 5) {
                    names += ", ...";  // untrusted input: the note stays short
                    break;
                }
                names += (names.empty() ? "" : ", ") + quote(name);
            }
            m_notes.add(fmt::format("{} DCGM metrics gpusel does not read were skipped: {}", m_skipped.size(), names));
        }
        telemetry.notes = m_notes.finish();
        return telemetry;
    }

    static std::optional<int> parse_index_label(const std::string& text) {
        const std::optional<double> value = parse_decimal(text);
        if (!value || *value < 0 || *value > 100000 || text.find_first_of(".eE-") != std::string::npos) {
            return std::nullopt;
        }
        return static_cast<int>(*value);
    }

private:
    static std::string label(const Labels& labels, const std::string& name) {
        const auto found = labels.find(name);
        return found == labels.end() ? std::string() : found->second;
    }

    const std::string& m_file;
    NoteLog& m_notes;
    std::map<std::pair<double, EntityKey>, Slot> m_slots;
    std::size_t m_dcgm_values = 0;
    std::set<std::string> m_skipped;
};

// A sample value as Prometheus writes it: a Go float (1.5e+06), NaN, +Inf, -Inf.
// NaN is "no value"; an infinite DCGM reading does not exist, so it is an error.
std::optional<double> read_prom_value(std::string_view text, const std::string& name, const std::string& file, int line,
                                      int column, NoteLog& notes) {
    if (text == "NaN") {
        notes.add("NaN values read as no value", line);
        return std::nullopt;
    }
    if (text == "+Inf" || text == "-Inf" || text == "Inf") {
        throw input_error(file, line, column, fmt::format("{}: {} is not a DCGM reading", name, quote(text)));
    }
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') {
        digits.remove_prefix(1);
    }
    const std::optional<double> value = parse_decimal(digits);
    if (!value) {
        throw input_error(file, line, column, fmt::format("{}: {} is not a number", name, quote(text)));
    }
    return value;
}

bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}

// Parses `{name="value",...}` starting at text[at] == '{'; returns the index after '}'.
std::size_t parse_labels(std::string_view text, std::size_t at, Labels& labels, const std::string& file, int line) {
    const auto fail = [&](std::size_t where, const std::string& message) {
        return input_error(file, line, static_cast<int>(where) + 1, message);
    };
    std::size_t i = at + 1;
    while (true) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
            ++i;
        }
        if (i < text.size() && text[i] == '}') {
            return i + 1;
        }
        const std::size_t start = i;
        while (i < text.size() && is_name_char(text[i])) {
            ++i;
        }
        if (i == start) {
            throw fail(i, "expected a label name or '}'");
        }
        const std::string name(text.substr(start, i - start));
        if (i >= text.size() || text[i] != '=' || i + 1 >= text.size() || text[i + 1] != '"') {
            throw fail(i, fmt::format("label '{}': expected =\"value\"", name));
        }
        i += 2;
        std::string value;
        while (i < text.size() && text[i] != '"') {
            if (text[i] == '\\' && i + 1 < text.size()) {
                ++i;
                value += text[i] == 'n' ? '\n' : text[i];
            } else {
                value += text[i];
            }
            ++i;
        }
        if (i >= text.size()) {
            throw fail(start, fmt::format("label '{}': the value has no closing quote", name));
        }
        ++i;
        labels[name] = std::move(value);
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
            ++i;
        }
        if (i < text.size() && text[i] == ',') {
            ++i;
        } else if (i >= text.size() || text[i] != '}') {
            throw fail(i, "expected ',' or '}' after a label");
        }
    }
}

}  // namespace

GpuTelemetry parse_prometheus_text(std::string_view text, const std::string& file) {
    NoteLog notes;
    SampleBuilder builder(file, notes);
    std::map<std::pair<std::string, EntityKey>, int> seen;  // values per series so far
    std::vector<std::string> names;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = line.text;
        const std::size_t first = content.find_first_not_of(" \t");
        if (first == std::string_view::npos || content[first] == '#') {
            continue;  // # HELP, # TYPE, # EOF (OpenMetrics) and comments
        }
        std::size_t i = first;
        if (!is_name_start(content[i])) {
            throw input_error(file, line.number, static_cast<int>(i) + 1,
                              "expected a metric name; not the Prometheus text exposition format");
        }
        while (i < content.size() && is_name_char(content[i])) {
            ++i;
        }
        const std::string name(content.substr(first, i - first));
        Labels labels;
        if (i < content.size() && content[i] == '{') {
            i = parse_labels(content, i, labels, file, line.number);
        }
        const std::vector<Token> rest = split_whitespace(content.substr(i));
        if (rest.empty() || rest.size() > 2 || (i < content.size() && content[i] != ' ' && content[i] != '\t')) {
            throw input_error(file, line.number, static_cast<int>(i) + 1,
                              fmt::format("{}: expected `name{{labels}} value [timestamp]`", name));
        }
        const int value_column = rest[0].column + static_cast<int>(i);
        const std::optional<double> value = read_prom_value(rest[0].text, name, file, line.number, value_column, notes);
        std::string time;
        double order = 0;
        const auto gpu = labels.find("gpu");
        const EntityKey key{labels.count("Hostname") != 0 ? labels["Hostname"] : "",
                            gpu == labels.end() ? "" : gpu->second,
                            labels.count("GPU_I_ID") != 0 ? labels["GPU_I_ID"] : ""};
        order = seen[{name, key}]++;
        if (rest.size() == 2) {
            const std::optional<double> ms = parse_decimal(rest[1].text);
            if (!ms || rest[1].text.find_first_of(".eE") != std::string_view::npos) {
                throw input_error(file, line.number, rest[1].column + static_cast<int>(i),
                                  fmt::format("{}: timestamp {} is not whole milliseconds", name, quote(rest[1].text)));
            }
            order = *ms;
            time = std::string(rest[1].text);
        }
        if (std::find(names.begin(), names.end(), name) == names.end() && prom_metric(name) != nullptr) {
            names.push_back(name);
        }
        builder.add(name, labels, order, rest[0].text, value, time, line.number, value_column);
    }
    return builder.finish(TelemetryKind::prometheus_text, names);
}

namespace {

Position position_of_offset(std::string_view text, std::size_t offset) {
    Position position{1, 1};
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++position.line;
            position.column = 1;
        } else {
            ++position.column;
        }
    }
    return position;
}

// The n-th (0-based) occurrence of the key `"key"` in the text: where a JSON value without a
// position of its own is reported. nlohmann keeps no positions for parsed values.
Position key_position(std::string_view text, std::string_view key, std::size_t n) {
    const std::string quoted = fmt::format("\"{}\"", key);
    std::size_t at = 0;
    for (std::size_t found = 0;; ++found) {
        const std::size_t next = text.find(quoted, at);
        if (next == std::string_view::npos) {
            return Position{1, 1};
        }
        if (found == n) {
            return position_of_offset(text, next);
        }
        at = next + quoted.size();
    }
}

[[noreturn]] void json_error(const std::string& file, Position position, std::string path, std::string message) {
    throw InputError(Diagnostic{file, position, std::move(path), std::move(message)});
}

}  // namespace

GpuTelemetry parse_prometheus_query_range(std::string_view text, const std::string& file) {
    using Json = nlohmann::json;
    Json document;
    try {
        document = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& error) {
        // parse_error carries the byte; out_of_range (a number beyond double) does not.
        const auto* parse = dynamic_cast<const Json::parse_error*>(&error);
        const std::size_t byte = parse != nullptr ? parse->byte : 1;
        json_error(file, position_of_offset(text, byte == 0 ? 0 : byte - 1), {},
                   "not valid JSON; expected the answer of Prometheus /api/v1/query_range");
    }
    const Position top{1, 1};
    if (!document.is_object()) {
        json_error(file, top, {}, "expected a JSON object with status and data (Prometheus /api/v1/query_range)");
    }
    if (const auto status = document.find("status"); status == document.end() || *status != "success") {
        const auto error = document.find("error");
        json_error(file, key_position(text, "status", 0), "status",
                   error != document.end() && error->is_string()
                       ? fmt::format("the query failed: {}", quote(error->get<std::string>()))
                       : "expected \"success\"");
    }
    const auto data = document.find("data");
    if (data == document.end() || !data->is_object()) {
        json_error(file, key_position(text, "data", 0), "data", "expected an object with resultType and result");
    }
    const auto type = data->find("resultType");
    if (type == data->end() || *type != "matrix") {
        json_error(file, key_position(text, "resultType", 0), "data.resultType",
                   "expected \"matrix\" (a range query: /api/v1/query_range, not /api/v1/query)");
    }
    const auto result = data->find("result");
    if (result == data->end() || !result->is_array()) {
        json_error(file, key_position(text, "result", 0), "data.result", "expected an array of series");
    }
    NoteLog notes;
    SampleBuilder builder(file, notes);
    std::vector<std::string> names;
    for (std::size_t s = 0; s < result->size(); ++s) {
        const Json& series = (*result)[s];
        const std::string path = fmt::format("data.result[{}]", s);
        const Position metric_at = key_position(text, "metric", s);
        const auto metric = series.find("metric");
        if (!series.is_object() || metric == series.end() || !metric->is_object()) {
            json_error(file, metric_at, path + ".metric", "expected an object of labels");
        }
        Labels labels;
        for (const auto& [name, value] : metric->items()) {
            if (!value.is_string()) {
                json_error(file, metric_at, fmt::format("{}.metric.{}", path, name), "a label value must be a string");
            }
            labels[name] = value.get<std::string>();
        }
        const auto name = labels.find("__name__");
        if (name == labels.end()) {
            notes.add(
                "skipped series without __name__ (an expression such as rate() or avg by drops it; query "
                "the DCGM_FI_ metric itself)");
            continue;
        }
        const Position values_at = key_position(text, "values", s);
        const auto values = series.find("values");
        if (values == series.end() || !values->is_array()) {
            json_error(file, values_at, path + ".values", "expected an array of [time, \"value\"] pairs");
        }
        if (std::find(names.begin(), names.end(), name->second) == names.end() && prom_metric(name->second)) {
            names.push_back(name->second);
        }
        for (std::size_t v = 0; v < values->size(); ++v) {
            const Json& pair = (*values)[v];
            const std::string at = fmt::format("{}.values[{}]", path, v);
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
                json_error(file, values_at, at, "expected [unix seconds, \"value\"]");
            }
            const double seconds = pair[0].get<double>();
            if (!std::isfinite(seconds) || seconds < 0) {
                json_error(file, values_at, at, "the time is not a unix timestamp");
            }
            const std::string value_text = pair[1].get<std::string>();
            std::optional<double> value;
            try {
                value = read_prom_value(value_text, name->second, file, values_at.line, values_at.column, notes);
            } catch (const InputError&) {
                json_error(file, values_at, at, fmt::format("{} is not a number", quote(value_text)));
            }
            try {
                builder.add(name->second, labels, seconds, value_text, value, fmt::format("{:.3f}", seconds),
                            metric_at.line, metric_at.column);
            } catch (const InputError& error) {
                json_error(file, values_at, at, error.diagnostics().front().message);
            }
        }
    }
    return builder.finish(TelemetryKind::prometheus_query_range, names);
}

GpuTelemetry parse_prometheus(std::string_view text, const std::string& file) {
    std::size_t first = 0;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") {
        first = 3;
    }
    first = text.find_first_not_of(" \t\r\n", first);
    if (first != std::string_view::npos && text[first] == '{') {
        return parse_prometheus_query_range(text, file);
    }
    return parse_prometheus_text(text, file);
}

}  // namespace gpusel
