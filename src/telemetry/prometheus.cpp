// DCGM-exporter metrics as Prometheus serves them: the text exposition format of a scrape
// (https://prometheus.io/docs/instrumenting/exposition_formats/) and the JSON of a range query
// (https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries). Both become the
// same GpuSample rows as `dcgmi dmon`, so the rules cannot tell the sources apart.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
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

// The GPU (or MIG instance) a series describes.
struct EntityKey {
    std::string host;
    std::string gpu;
    std::string instance;  // GPU_I_ID; empty for a whole GPU
    bool operator<(const EntityKey& other) const {
        return std::tie(host, gpu, instance) < std::tie(other.host, other.gpu, other.instance);
    }
};

// A series as SampleBuilder files its values: the metric, its entity and its labels, each
// looked up once per series rather than copied per value.
struct SeriesRef {
    const PromMetric* metric = nullptr;
    std::uint32_t entity = 0;     // index into SampleBuilder's entities
    std::uint32_t label_set = 0;  // 1-based index into the label sets
};

// One value, kept until finish() gathers the values of one entity at one time into a sample.
// Small on purpose: a 16 MiB range query holds two million of them.
struct PromValue {
    double order = 0;  // the scrape number, or the time (ms in the text format, s in JSON)
    double value = 0;
    std::uint32_t entity = 0;
    std::uint32_t label_set = 0;
    int line = 0;
    std::uint8_t metric = 0;  // GpuMetric
    bool has_value = false;
    bool has_time = false;  // `order` is a time; the sample's time is order / time_divisor
};

class SampleBuilder {
public:
    // `time_divisor` turns an order that is a time into seconds: 1000 for the text format's
    // milliseconds, 1 for the JSON's seconds.
    SampleBuilder(const std::string& file, NoteLog& notes, double time_divisor)
        : m_file(file), m_notes(notes), m_time_divisor(time_divisor) {}

    // The series of metric `name` with `labels`; nullopt for a metric gpusel does not read
    // (noted). Throws InputError at line:column when the labels name no GPU.
    std::optional<SeriesRef> series(const std::string& name, const Labels& labels, int line, int column) {
        const PromMetric* metric = prom_metric(name);
        if (metric == nullptr) {
            if (name.rfind("DCGM_FI_", 0) == 0) {
                if (m_skipped.size() < max_skipped_names) {
                    m_skipped.insert(name);
                }
            } else {
                m_notes.add("skipped metrics that are neither DCGM_FI_ fields nor a serving engine's");
            }
            return std::nullopt;
        }
        const auto gpu = labels.find("gpu");
        if (gpu == labels.end() || !parse_index_label(gpu->second)) {
            throw input_error(m_file, line, column,
                              fmt::format("{}: no numeric 'gpu' label; expected a DCGM exporter series", name));
        }
        const std::string instance = label(labels, "GPU_I_ID");
        if (!instance.empty() && !parse_index_label(instance)) {
            throw input_error(m_file, line, column,
                              fmt::format("{}: GPU_I_ID {} is not an instance number", name, quote(instance)));
        }
        SeriesRef series;
        series.metric = metric;
        EntityKey key{label(labels, "Hostname"), gpu->second, instance};
        const auto entity = m_entities.try_emplace(std::move(key), static_cast<std::uint32_t>(m_entities.size()));
        series.entity = entity.first->second;
        std::array<std::string, 3> set{label(labels, "UUID"), label(labels, "Hostname"), label(labels, "pod")};
        const auto labels_at =
            m_label_sets.try_emplace(std::move(set), static_cast<std::uint32_t>(m_label_sets.size()));
        series.label_set = labels_at.first->second + 1;
        return series;
    }

    // Adds one value of `series`. `order` orders samples in time (the scrape number, or a time
    // when `is_time`).
    void add(const SeriesRef& series, double order, bool is_time, std::string_view value_text,
             std::optional<double> value, int line, int column) {
        ++m_dcgm_values;
        PromValue entry;
        entry.order = order;
        entry.entity = series.entity;
        entry.label_set = series.label_set;
        entry.line = line;
        entry.metric = static_cast<std::uint8_t>(series.metric->metric);
        entry.has_time = is_time;
        if (value && *value >= dcgm_blank) {
            m_notes.add("DCGM blank values (>= 2^63 - 16: not supported or not found) read as no value", line);
        } else if (value) {
            entry.value = checked_gpu_reading(series.metric->metric, *value, series.metric->scale, series.metric->name,
                                              value_text, m_file, line, column);
            entry.has_value = true;
        }
        // A value without a reading still makes its sample (a GPU whose field is blank is there).
        m_values.push_back(entry);
    }

    // `serving_only`: the file holds a serving engine's metrics, so no DCGM series is no error.
    GpuTelemetry finish(TelemetryKind kind, std::vector<std::string> columns, bool serving_only = false) {
        if (m_dcgm_values == 0 && !serving_only) {
            throw input_error(m_file, 1, 1,
                              "no DCGM_FI_ series gpusel reads (DCGM_FI_DEV_GPU_UTIL, "
                              "DCGM_FI_PROF_GR_ENGINE_ACTIVE, ...) nor vLLM/SGLang metrics; expected DCGM exporter "
                              "metrics");
        }
        // Samples in time order, the entities of one time in the order of their labels; the
        // values of one sample in file order, so that a later value of a field wins.
        std::vector<const EntityKey*> key_of(m_entities.size());
        std::vector<std::uint32_t> rank_of(m_entities.size());
        std::set<std::string_view> hosts;
        std::uint32_t rank = 0;
        for (const auto& [key, index] : m_entities) {
            key_of[index] = &key;
            rank_of[index] = rank++;
            hosts.insert(key.host);
        }
        std::stable_sort(m_values.begin(), m_values.end(), [&rank_of](const PromValue& a, const PromValue& b) {
            return std::make_pair(a.order, rank_of[a.entity]) < std::make_pair(b.order, rank_of[b.entity]);
        });
        // One host: the exporter's `gpu` label is the index. Several: GPU 0 exists on each, so
        // GPUs are numbered by first appearance and the note gives the mapping.
        std::map<std::pair<std::string_view, std::string_view>, int> numbers;
        GpuTelemetry telemetry;
        telemetry.kind = kind;
        telemetry.file = m_file;
        telemetry.columns = std::move(columns);
        for (std::size_t i = 0; i < m_values.size();) {
            const PromValue& first = m_values[i];
            const EntityKey& key = *key_of[first.entity];
            GpuSample sample;
            sample.line = first.line;
            sample.label_set = first.label_set;
            if (!key.instance.empty()) {
                sample.entity = GpuEntity::gpu_instance;
            }
            if (first.has_time) {
                sample.set_time(SampleTime{first.order / m_time_divisor, true});
            }
            if (hosts.size() > 1) {
                const auto [found, inserted] =
                    numbers.emplace(std::make_pair(std::string_view(key.host), std::string_view(key.gpu)),
                                    static_cast<int>(numbers.size()));
                if (inserted) {
                    // The bound of a `gpu` label: each GPU costs memory in every step of a diagnosis.
                    if (numbers.size() > 100000) {
                        throw input_error(m_file, first.line, 1,
                                          "more than 100000 GPUs across hosts; expected the GPUs of one job");
                    }
                    m_notes.add(fmt::format("GPU {} is gpu {} of host {}", found->second, key.gpu, quote(key.host)));
                }
                sample.gpu = found->second;
            } else {
                sample.gpu = parse_index_label(key.instance.empty() ? key.gpu : key.instance).value_or(0);
            }
            for (; i < m_values.size() && m_values[i].order == first.order && m_values[i].entity == first.entity; ++i) {
                if (m_values[i].has_value) {
                    sample.set(static_cast<GpuMetric>(m_values[i].metric), m_values[i].value);
                }
            }
            telemetry.samples.push_back(std::move(sample));
        }
        telemetry.label_sets.resize(m_label_sets.size());
        for (const auto& [set, index] : m_label_sets) {
            telemetry.label_sets[index] = SampleLabels{set[0], set[1], set[2]};
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
            m_notes.add(fmt::format("{} DCGM metrics gpusel does not read were skipped: {}",
                                    m_skipped.size() < max_skipped_names ? fmt::format("{}", m_skipped.size())
                                                                         : fmt::format("{} or more", m_skipped.size()),
                                    names));
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
    // Names of skipped DCGM metrics kept for the note: it shows five, and counts up to this.
    static constexpr std::size_t max_skipped_names = 1000;

    static std::string label(const Labels& labels, const std::string& name) {
        const auto found = labels.find(name);
        return found == labels.end() ? std::string() : found->second;
    }

    const std::string& m_file;
    NoteLog& m_notes;
    double m_time_divisor = 1;
    std::map<EntityKey, std::uint32_t> m_entities;
    std::map<std::array<std::string, 3>, std::uint32_t> m_label_sets;  // UUID, Hostname, pod
    std::deque<PromValue> m_values;                                    // file order until finish()
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

// A serving engine's metrics (vLLM's /metrics, SGLang's with --enable-metrics): the engine is
// known from any of its names; the series diagnose reads are summed per scrape. Names: vLLM
// docs, "Production Metrics" (vllm/v1/metrics/loggers.py); SGLang docs, "Production Metrics".
// Only the names below are kept, so that a file of distinct names costs no memory per name.
class ServingCollector {
public:
    // True when `name` belongs to a serving engine (and was taken).
    bool take(const std::string& name, const Labels& labels, std::optional<double> value, std::optional<double> ms,
              int line) {
        std::string engine;
        if (name.rfind("vllm:", 0) == 0) {
            engine = "vllm";
        } else if (name.rfind("sglang:", 0) == 0) {
            engine = "sglang";
        } else {
            return false;
        }
        if (m_metrics.engine.empty()) {
            m_metrics.engine = engine;
            m_metrics.first_name = name;
            m_metrics.first_line = line;
        }
        static const std::set<std::string, std::less<>> kept = {
            "vllm:request_success_total",
            "vllm:generation_tokens_total",
            "vllm:prompt_tokens_total",
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:gpu_cache_usage_perc",
            "vllm:kv_cache_usage_perc",
            "vllm:inter_token_latency_seconds_sum",
            "vllm:inter_token_latency_seconds_count",
            "vllm:time_per_output_token_seconds_sum",
            "vllm:time_per_output_token_seconds_count",
            "vllm:time_to_first_token_seconds_sum",
            "vllm:time_to_first_token_seconds_count",
            "sglang:num_requests_total",
            "sglang:generation_tokens_total",
            "sglang:prompt_tokens_total",
            "sglang:num_running_reqs",
            "sglang:token_usage",
            "sglang:time_to_first_token_seconds_sum",
            "sglang:time_to_first_token_seconds_count",
            "sglang:inter_token_latency_seconds_sum",
            "sglang:inter_token_latency_seconds_count",
        };
        if (!value || !std::isfinite(*value) || kept.find(name) == kept.end()) {
            return true;
        }
        std::string key = name;
        for (const auto& [label, text] : labels) {
            key += '\x1f';
            key += label;
            key += '=';
            key += text;
        }
        const std::size_t scrape = m_scrapes[key]++;
        std::vector<ServingPoint>& points = m_metrics.series[name];
        if (points.size() <= scrape) {
            points.resize(scrape + 1);
        }
        points[scrape].value += *value;
        if (ms && !points[scrape].time_s) {
            points[scrape].time_s = *ms / 1000;
        }
        return true;
    }

    ServingMetrics finish() { return std::move(m_metrics); }

private:
    ServingMetrics m_metrics;
    std::map<std::string, std::size_t> m_scrapes;  // values so far per series (name and labels)
};

GpuTelemetry parse_prometheus_text(std::string_view text, const std::string& file) {
    NoteLog notes;
    SampleBuilder builder(file, notes, 1000);  // exposition timestamps are milliseconds
    ServingCollector serving;
    std::map<std::pair<const PromMetric*, std::uint32_t>, double> scrapes;  // values per series so far
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
        std::optional<double> ms;
        if (rest.size() == 2) {
            ms = parse_decimal(rest[1].text);
            if (!ms || rest[1].text.find_first_of(".eE") != std::string_view::npos) {
                throw input_error(file, line.number, rest[1].column + static_cast<int>(i),
                                  fmt::format("{}: timestamp {} is not whole milliseconds", name, quote(rest[1].text)));
            }
        }
        if (serving.take(name, labels, value, ms, line.number)) {
            continue;
        }
        const std::optional<SeriesRef> series = builder.series(name, labels, line.number, value_column);
        if (!series) {
            continue;
        }
        if (std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);  // at most one per metric gpusel reads
        }
        // Without a timestamp, the k-th value of a series is its k-th scrape.
        const double scrape = scrapes[{series->metric, series->entity}]++;
        builder.add(*series, ms ? *ms : scrape, ms.has_value(), rest[0].text, value, line.number, value_column);
    }
    ServingMetrics metrics = serving.finish();
    GpuTelemetry telemetry = builder.finish(TelemetryKind::prometheus_text, names, metrics.found());
    telemetry.serving = std::move(metrics);
    return telemetry;
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
// position of its own is reported (nlohmann's SAX events carry none). Asked for n = 0, 1, 2, ...
// as the series go by, so one scan serves them all: the text is read once, whatever the number
// of series. {1, 1} when there are fewer occurrences.
class KeyPositions {
public:
    KeyPositions(std::string_view text, std::string_view key) : m_text(text), m_quoted(fmt::format("\"{}\"", key)) {}

    // `n` must not be smaller than in the call before.
    Position at(std::size_t n) {
        while (!m_exhausted && m_found <= n) {
            const std::size_t next = m_text.find(m_quoted, m_search);
            if (next == std::string_view::npos) {
                m_exhausted = true;
                break;
            }
            for (; m_counted < next; ++m_counted) {
                if (m_text[m_counted] == '\n') {
                    ++m_position.line;
                    m_position.column = 1;
                } else {
                    ++m_position.column;
                }
            }
            m_search = next + m_quoted.size();
            ++m_found;
        }
        return m_found > n ? m_position : Position{1, 1};
    }

private:
    std::string_view m_text;
    std::string m_quoted;
    std::size_t m_found = 0;    // occurrences found so far
    std::size_t m_search = 0;   // where the next search starts
    std::size_t m_counted = 0;  // m_position is that of this offset
    Position m_position{1, 1};
    bool m_exhausted = false;
};

// The first occurrence of `"key"`: for the errors of the envelope, reported once.
Position key_position(std::string_view text, std::string_view key) {
    return KeyPositions(text, key).at(0);
}

[[noreturn]] void json_error(const std::string& file, Position position, std::string path, std::string message) {
    throw InputError(Diagnostic{file, position, std::move(path), std::move(message)});
}

using Json = nlohmann::json;

// A JSON scalar as the SAX events give it.
struct JsonScalar {
    enum class Kind { null, boolean, number, string } kind = Kind::null;
    double number = 0;
    const std::string* text = nullptr;  // the string, for Kind::string
};

// nlohmann's SAX interface turned into four events: a scalar, the start of an object or array,
// the end of one, an object key. Parsing through it holds one value at a time, never the
// document: a 16 MiB range query stays a few MiB in memory. A syntax error (or a number beyond
// double) is an InputError at its byte.
class JsonEvents {
public:
    JsonEvents(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}
    JsonEvents(const JsonEvents&) = delete;
    JsonEvents& operator=(const JsonEvents&) = delete;
    virtual ~JsonEvents() = default;

    void parse() { Json::sax_parse(m_text.begin(), m_text.end(), this); }

    virtual void on_scalar(const JsonScalar& value) = 0;
    virtual void on_open(bool object) = 0;
    virtual void on_close() = 0;
    virtual void on_key(const std::string& name) = 0;

    // nlohmann::json_sax
    bool null() {
        on_scalar(JsonScalar{});
        return true;
    }
    bool boolean(bool /*value*/) {
        on_scalar(JsonScalar{JsonScalar::Kind::boolean, 0, nullptr});
        return true;
    }
    bool number_integer(Json::number_integer_t value) {
        on_scalar(JsonScalar{JsonScalar::Kind::number, static_cast<double>(value), nullptr});
        return true;
    }
    bool number_unsigned(Json::number_unsigned_t value) {
        on_scalar(JsonScalar{JsonScalar::Kind::number, static_cast<double>(value), nullptr});
        return true;
    }
    bool number_float(Json::number_float_t value, const std::string& /*text*/) {
        on_scalar(JsonScalar{JsonScalar::Kind::number, value, nullptr});
        return true;
    }
    bool string(std::string& value) {
        on_scalar(JsonScalar{JsonScalar::Kind::string, 0, &value});
        return true;
    }
    bool binary(Json::binary_t& /*value*/) {
        on_scalar(JsonScalar{});  // not produced by the JSON reader
        return true;
    }
    bool start_object(std::size_t /*elements*/) {
        on_open(true);
        return true;
    }
    bool key(std::string& name) {
        on_key(name);
        return true;
    }
    bool end_object() {
        on_close();
        return true;
    }
    bool start_array(std::size_t /*elements*/) {
        on_open(false);
        return true;
    }
    bool end_array() {
        on_close();
        return true;
    }
    bool parse_error(std::size_t byte, const std::string& /*token*/, const nlohmann::detail::exception& /*error*/) {
        json_error(m_file, position_of_offset(m_text, byte == 0 ? 0 : byte - 1), {},
                   "not valid JSON; expected the answer of Prometheus /api/v1/query_range");
    }

protected:
    std::string_view m_text;
    const std::string& m_file;
};

// What the answer says around its series: status, error, data.resultType, whether data.result
// is an array; for a key given twice, the last (as a JSON object keeps it). Also which
// occurrence of `data` and of its `result` are the last, for the second pass.
class EnvelopeReader : public JsonEvents {
public:
    using JsonEvents::JsonEvents;

    bool top_is_object = false;
    bool status_success = false;
    bool has_status = false;
    std::optional<std::string> error;
    bool has_data = false;
    bool data_is_object = false;
    bool type_is_matrix = false;
    bool has_result = false;
    bool result_is_array = false;
    std::size_t last_data = 0;    // the last `data` of the document: its occurrence (0-based)
    std::size_t last_result = 0;  // the last `result` in that `data`

    void on_scalar(const JsonScalar& value) override {
        if (m_depth == 0) {
            return;
        }
        if (m_depth == 1 && m_top_key == "status") {
            status_success = value.kind == JsonScalar::Kind::string && *value.text == "success";
        } else if (m_depth == 1 && m_top_key == "error") {
            error = value.kind == JsonScalar::Kind::string ? std::optional<std::string>(*value.text) : std::nullopt;
        } else if (m_depth == 2 && m_in_data && m_data_key == "resultType") {
            type_is_matrix = value.kind == JsonScalar::Kind::string && *value.text == "matrix";
        }
    }
    void on_open(bool object) override {
        if (m_depth == 0) {
            top_is_object = object;
        } else if (m_depth == 1 && m_top_key == "data") {
            data_is_object = object;
            m_in_data = object;
        } else if (m_depth == 2 && m_in_data && m_data_key == "result") {
            result_is_array = !object;
        }
        ++m_depth;
    }
    void on_close() override {
        --m_depth;
        if (m_depth == 1) {
            m_in_data = false;
        }
    }
    void on_key(const std::string& name) override {
        if (m_depth == 1) {
            m_top_key = name;
            if (name == "status") {
                has_status = true;
                status_success = false;
            } else if (name == "error") {
                error.reset();
            } else if (name == "data") {
                last_data = m_data_count++;
                has_data = true;
                data_is_object = false;
                type_is_matrix = false;
                has_result = false;
                result_is_array = false;
                m_result_count = 0;
            }
        } else if (m_depth == 2 && m_in_data) {
            m_data_key = name;
            if (name == "result") {
                last_result = m_result_count++;
                has_result = true;
                result_is_array = false;
            } else if (name == "resultType") {
                type_is_matrix = false;
            }
        }
    }

private:
    std::size_t m_depth = 0;
    std::string m_top_key;
    std::string m_data_key;
    bool m_in_data = false;
    std::size_t m_data_count = 0;
    std::size_t m_result_count = 0;
};

// A [time, "value"] pair of a series, as read.
struct ValuePair {
    bool valid = false;  // [number, string]
    double seconds = 0;
    std::string text;
};

// The second pass: each series of the last data.result, its labels and its values, handed to
// the SampleBuilder as they are read.
class SeriesReader : public JsonEvents {
public:
    SeriesReader(std::string_view text, const std::string& file, const EnvelopeReader& envelope, SampleBuilder& builder,
                 NoteLog& notes)
        : JsonEvents(text, file),
          m_envelope(envelope),
          m_builder(builder),
          m_notes(notes),
          m_metric_keys(text, "metric"),
          m_values_keys(text, "values") {}

    std::vector<std::string> names;  // metrics gpusel reads, in order of first appearance

    void on_scalar(const JsonScalar& value) override {
        if (!m_in_result) {
            return;
        }
        if (m_depth == 3) {
            begin_series();
            fail_metric("expected an object of labels");  // a series that is not an object
        } else if (m_depth == 4) {
            value_is_not_container();
        } else if (m_depth == 5 && m_in_metric) {
            if (value.kind != JsonScalar::Kind::string) {
                label_is_not_string();
            }
            m_labels[m_label] = *value.text;
        } else if (m_depth == 5 && m_in_values) {
            pair_done(ValuePair{});  // a scalar where a pair belongs
        } else if (m_depth == 6 && m_in_values) {
            ++m_pair_elements;
            if (m_pair_elements == 1 && value.kind == JsonScalar::Kind::number) {
                m_pair.seconds = value.number;
                m_pair_time_ok = true;
            } else if (m_pair_elements == 2 && value.kind == JsonScalar::Kind::string) {
                m_pair.text = *value.text;
                m_pair_value_ok = true;
            }
        }
    }

    void on_open(bool object) override {
        if (!m_in_result) {
            watch_for_result(object);
        } else if (m_depth == 3) {
            begin_series();
            if (!object) {
                fail_metric("expected an object of labels");
            }
        } else if (m_depth == 4 && m_series_key == part::metric && object) {
            m_in_metric = true;
            m_has_metric = true;
            m_labels.clear();
        } else if (m_depth == 4 && m_series_key == part::values && !object) {
            m_in_values = true;
            m_has_values = true;
        } else if (m_depth == 4) {
            value_is_not_container();
        } else if (m_depth == 5 && m_in_metric) {
            label_is_not_string();
        } else if (m_depth == 5 && m_in_values) {
            m_pair = ValuePair{};
            m_pair_elements = 0;
            m_pair_time_ok = false;
            m_pair_value_ok = false;
            m_pair_nested = object;
        } else if (m_depth == 6 && m_in_values) {
            ++m_pair_elements;
            m_pair_nested = true;
        }
        ++m_depth;
    }

    void on_close() override {
        --m_depth;
        if (!m_in_result) {
            return;
        }
        if (m_depth == 2) {
            m_in_result = false;  // the end of data.result
        } else if (m_depth == 3) {
            end_series();
        } else if (m_depth == 4 && m_in_metric) {
            m_in_metric = false;
            metric_done();
        } else if (m_depth == 4 && m_in_values) {
            m_in_values = false;
        } else if (m_depth == 5 && m_in_values) {
            pair_done(ValuePair{m_pair_time_ok && m_pair_value_ok && !m_pair_nested && m_pair_elements == 2,
                                m_pair.seconds, std::move(m_pair.text)});
        }
    }

    void on_key(const std::string& name) override {
        if (!m_in_result) {
            watch_key(name);
        } else if (m_depth == 4) {
            m_series_key = name == "metric" ? part::metric : name == "values" ? part::values : part::other;
        } else if (m_depth == 5 && m_in_metric) {
            m_label = name;
        }
    }

private:
    enum class part { other, metric, values };

    // Outside the series: follows the document down to the last data.result.
    void watch_key(const std::string& name) {
        if (m_depth == 1) {
            m_top_key = name;
            if (name == "data") {
                ++m_data_seen;
                m_result_seen = 0;
            }
        } else if (m_depth == 2 && m_top_key == "data") {
            m_data_key = name;
            if (name == "result") {
                ++m_result_seen;
            }
        }
    }
    void watch_for_result(bool object) {
        if (m_depth == 2 && !object && m_top_key == "data" && m_data_key == "result" &&
            m_data_seen == m_envelope.last_data + 1 && m_result_seen == m_envelope.last_result + 1) {
            m_in_result = true;
        }
        if (m_depth == 1) {
            m_data_key.clear();
        }
    }

    std::string path() const { return fmt::format("data.result[{}]", m_series); }
    Position metric_position() { return m_metric_keys.at(m_series); }
    [[noreturn]] void fail_metric(const std::string& message) {
        json_error(m_file, metric_position(), path() + ".metric", message);
    }
    // A series' metric or values that is a scalar, or of the wrong kind of container. Values
    // are only looked at in a series gpusel reads: when they come before the labels, the end of
    // the series decides.
    void value_is_not_container() {
        if (m_series_key == part::metric) {
            fail_metric("expected an object of labels");
        }
        if (m_series_key == part::values && m_has_metric && m_named) {
            values_not_array();
        }
    }
    [[noreturn]] void label_is_not_string() {
        json_error(m_file, metric_position(), fmt::format("{}.metric.{}", path(), m_label),
                   "a label value must be a string");
    }
    [[noreturn]] void values_not_array() {
        json_error(m_file, m_values_keys.at(m_series), path() + ".values",
                   "expected an array of [time, \"value\"] pairs");
    }

    void begin_series() {
        if (m_started) {
            ++m_series;
        }
        m_started = true;
        m_series_key = part::other;
        m_in_metric = false;
        m_in_values = false;
        m_has_metric = false;
        m_has_values = false;
        m_named = false;
        m_ref.reset();
        m_pairs = 0;
        m_buffered.clear();
        m_labels.clear();
    }

    // The labels are read: whether the series is one gpusel reads, and the values that came first.
    void metric_done() {
        const auto name = m_labels.find("__name__");
        m_named = name != m_labels.end();
        m_name = m_named ? name->second : std::string();
        m_line = metric_position().line;
        m_column = metric_position().column;
        if (m_named) {
            if (std::find(names.begin(), names.end(), m_name) == names.end() && prom_metric(m_name) != nullptr) {
                names.push_back(m_name);
            }
        }
        std::vector<ValuePair> buffered = std::move(m_buffered);
        m_buffered.clear();
        m_pairs = 0;
        for (ValuePair& pair : buffered) {
            pair_done(std::move(pair));
        }
    }

    void end_series() {
        if (!m_has_metric) {
            fail_metric("expected an object of labels");
        }
        if (!m_named) {
            m_notes.add(
                "skipped series without __name__ (an expression such as rate() or avg by drops it; query "
                "the DCGM_FI_ metric itself)");
            return;
        }
        if (!m_has_values) {
            values_not_array();
        }
    }

    void pair_done(ValuePair pair) {
        if (!m_has_metric) {
            m_buffered.push_back(std::move(pair));  // "values" before "metric": kept until the labels come
            return;
        }
        if (!m_named) {
            return;
        }
        const std::size_t v = m_pairs++;
        const std::string at = fmt::format("{}.values[{}]", path(), v);
        const auto fail = [&](const std::string& message) {
            json_error(m_file, m_values_keys.at(m_series), at, message);
        };
        if (!pair.valid) {
            fail("expected [unix seconds, \"value\"]");
        }
        if (!std::isfinite(pair.seconds) || pair.seconds < 0) {
            fail("the time is not a unix timestamp");
        }
        std::optional<double> value;
        try {
            const Position values_at = m_values_keys.at(m_series);
            value = read_prom_value(pair.text, m_name, m_file, values_at.line, values_at.column, m_notes);
        } catch (const InputError&) {
            fail(fmt::format("{} is not a number", quote(pair.text)));
        }
        try {
            if (!m_ref) {
                m_ref = m_builder.series(m_name, m_labels, m_line, m_column);
                if (!m_ref) {
                    m_named = false;  // a metric gpusel does not read (noted): its values are not looked at
                    return;
                }
            }
            m_builder.add(*m_ref, pair.seconds, true, pair.text, value, m_line, m_column);
        } catch (const InputError& error) {
            fail(error.diagnostics().front().message);
        }
    }

    const EnvelopeReader& m_envelope;
    SampleBuilder& m_builder;
    NoteLog& m_notes;
    KeyPositions m_metric_keys;
    KeyPositions m_values_keys;

    std::size_t m_depth = 0;
    std::string m_top_key;
    std::string m_data_key;
    std::size_t m_data_seen = 0;
    std::size_t m_result_seen = 0;
    bool m_in_result = false;

    // The series being read.
    std::size_t m_series = 0;
    bool m_started = false;
    part m_series_key = part::other;
    bool m_in_metric = false;
    bool m_in_values = false;
    bool m_has_metric = false;
    bool m_has_values = false;
    bool m_named = false;
    std::string m_name;
    std::string m_label;
    Labels m_labels;
    int m_line = 0;
    int m_column = 0;
    std::optional<SeriesRef> m_ref;
    std::size_t m_pairs = 0;
    std::vector<ValuePair> m_buffered;

    // The pair being read.
    ValuePair m_pair;
    std::size_t m_pair_elements = 0;
    bool m_pair_time_ok = false;
    bool m_pair_value_ok = false;
    bool m_pair_nested = false;
};

}  // namespace

GpuTelemetry parse_prometheus_query_range(std::string_view text, const std::string& file) {
    // Two passes over the text, neither of which builds the document: the envelope first (its
    // errors come before any series'), then the series, value by value.
    EnvelopeReader envelope(text, file);
    envelope.parse();
    const Position top{1, 1};
    if (!envelope.top_is_object) {
        json_error(file, top, {}, "expected a JSON object with status and data (Prometheus /api/v1/query_range)");
    }
    if (!envelope.has_status || !envelope.status_success) {
        json_error(
            file, key_position(text, "status"), "status",
            envelope.error ? fmt::format("the query failed: {}", quote(*envelope.error)) : "expected \"success\"");
    }
    if (!envelope.has_data || !envelope.data_is_object) {
        json_error(file, key_position(text, "data"), "data", "expected an object with resultType and result");
    }
    if (!envelope.type_is_matrix) {
        json_error(file, key_position(text, "resultType"), "data.resultType",
                   "expected \"matrix\" (a range query: /api/v1/query_range, not /api/v1/query)");
    }
    if (!envelope.has_result || !envelope.result_is_array) {
        json_error(file, key_position(text, "result"), "data.result", "expected an array of series");
    }
    NoteLog notes;
    SampleBuilder builder(file, notes, 1);  // the API's times are seconds
    SeriesReader series(text, file, envelope, builder, notes);
    series.parse();
    return builder.finish(TelemetryKind::prometheus_query_range, series.names);
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
