// Shared pieces of the telemetry module: names, sample accessors, file reading.

#include <algorithm>
#include <bit>

#include "io/yaml.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

std::string_view to_string(TelemetryKind kind) {
    switch (kind) {
        case TelemetryKind::nvidia_smi_dmon:
            return "nvidia-smi-dmon";
        case TelemetryKind::dcgmi_dmon:
            return "dcgmi-dmon";
        case TelemetryKind::nvidia_smi_query:
            return "nvidia-smi-query";
        case TelemetryKind::mpstat:
            return "mpstat";
        case TelemetryKind::sar:
            return "sar";
        case TelemetryKind::top:
            return "top";
        case TelemetryKind::perf_report:
            return "perf-report";
        case TelemetryKind::nvidia_smi_topo:
            return "nvidia-smi-topo";
        case TelemetryKind::nvidia_smi_q:
            return "nvidia-smi-q";
        case TelemetryKind::nvidia_smi_nvlink:
            return "nvidia-smi-nvlink";
        case TelemetryKind::prometheus_text:
            return "prometheus-text";
        case TelemetryKind::prometheus_query_range:
            return "prometheus-query-range";
        case TelemetryKind::nvidia_smi_processes:
            return "nvidia-smi-processes";
    }
    return "?";
}

std::string_view metric_name(GpuMetric metric) {
    switch (metric) {
        case GpuMetric::sm_util_pct:
            return "sm_util_pct";
        case GpuMetric::mem_util_pct:
            return "mem_util_pct";
        case GpuMetric::gr_engine_active_pct:
            return "gr_engine_active_pct";
        case GpuMetric::sm_active_pct:
            return "sm_active_pct";
        case GpuMetric::sm_occupancy_pct:
            return "sm_occupancy_pct";
        case GpuMetric::tensor_active_pct:
            return "tensor_active_pct";
        case GpuMetric::dram_active_pct:
            return "dram_active_pct";
        case GpuMetric::fb_used_bytes:
            return "fb_used_bytes";
        case GpuMetric::fb_total_bytes:
            return "fb_total_bytes";
        case GpuMetric::fb_free_bytes:
            return "fb_free_bytes";
        case GpuMetric::pcie_tx_bytes_per_s:
            return "pcie_tx_bytes_per_s";
        case GpuMetric::pcie_rx_bytes_per_s:
            return "pcie_rx_bytes_per_s";
        case GpuMetric::nvlink_tx_bytes_per_s:
            return "nvlink_tx_bytes_per_s";
        case GpuMetric::nvlink_rx_bytes_per_s:
            return "nvlink_rx_bytes_per_s";
        case GpuMetric::power_watts:
            return "power_watts";
        case GpuMetric::power_limit_watts:
            return "power_limit_watts";
        case GpuMetric::gpu_temp_c:
            return "gpu_temp_c";
        case GpuMetric::mem_temp_c:
            return "mem_temp_c";
        case GpuMetric::sm_clock_mhz:
            return "sm_clock_mhz";
        case GpuMetric::mem_clock_mhz:
            return "mem_clock_mhz";
        case GpuMetric::pcie_link_gen_current:
            return "pcie_link_gen_current";
        case GpuMetric::pcie_link_gen_max:
            return "pcie_link_gen_max";
        case GpuMetric::pcie_link_width_current:
            return "pcie_link_width_current";
        case GpuMetric::pcie_link_width_max:
            return "pcie_link_width_max";
    }
    return "?";
}

static_assert(static_cast<std::size_t>(GpuMetric::pcie_link_width_max) + 1 == gpu_metric_count,
              "gpu_metric_count must count every GpuMetric");

std::size_t GpuValues::count() const {
    return static_cast<std::size_t>(std::popcount(m_present));
}

std::size_t GpuValues::rank(GpuMetric metric) const {
    const std::uint32_t below = (std::uint32_t{1} << static_cast<unsigned>(metric)) - 1;
    return static_cast<std::size_t>(std::popcount(m_present & below));
}

void GpuValues::release() {
    if (count() > 1) {
        delete[] m_many;
    }
    m_present = 0;
    m_one = 0;
}

GpuValues::GpuValues(const GpuValues& other) : m_present(other.m_present) {
    if (count() > 1) {
        m_many = new double[count()];
        std::copy(other.m_many, other.m_many + count(), m_many);
    } else {
        m_one = other.m_one;
    }
}

GpuValues::GpuValues(GpuValues&& other) noexcept : m_present(other.m_present) {
    if (count() > 1) {
        m_many = other.m_many;
    } else {
        m_one = other.m_one;
    }
    other.m_present = 0;
    other.m_one = 0;
}

GpuValues& GpuValues::operator=(const GpuValues& other) {
    if (this != &other) {
        GpuValues copy(other);
        *this = std::move(copy);
    }
    return *this;
}

GpuValues& GpuValues::operator=(GpuValues&& other) noexcept {
    if (this != &other) {
        release();
        m_present = other.m_present;
        if (count() > 1) {
            m_many = other.m_many;
        } else {
            m_one = other.m_one;
        }
        other.m_present = 0;
        other.m_one = 0;
    }
    return *this;
}

GpuValues::~GpuValues() {
    release();
}

std::optional<double> GpuValues::get(GpuMetric metric) const {
    const std::uint32_t bit = std::uint32_t{1} << static_cast<unsigned>(metric);
    if ((m_present & bit) == 0) {
        return std::nullopt;
    }
    return count() == 1 ? m_one : m_many[rank(metric)];
}

void GpuValues::set(GpuMetric metric, double value) {
    const std::uint32_t bit = std::uint32_t{1} << static_cast<unsigned>(metric);
    const std::size_t n = count();
    if ((m_present & bit) != 0) {
        (n == 1 ? m_one : m_many[rank(metric)]) = value;
        return;
    }
    if (n == 0) {
        m_present = bit;
        m_one = value;
        return;
    }
    // One more value: a new array in metric order. A row sets at most 24, once each.
    auto* grown = new double[n + 1];
    const std::size_t at = rank(metric);
    const double* old = n == 1 ? &m_one : m_many;
    std::copy(old, old + at, grown);
    grown[at] = value;
    std::copy(old + at, old + n, grown + at + 1);
    if (n > 1) {
        delete[] m_many;
    }
    m_many = grown;
    m_present |= bit;
}

std::optional<SampleTime> GpuSample::time() const {
    if (!m_has_time) {
        return std::nullopt;
    }
    return SampleTime{m_seconds, m_dated};
}

void GpuSample::set_time(SampleTime time) {
    m_seconds = time.seconds;
    m_dated = time.dated;
    m_has_time = true;
}

namespace {

// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long days_from_civil(int year, unsigned month, unsigned day) {
    year -= month <= 2 ? 1 : 0;
    const int era = (year >= 0 ? year : year - 399) / 400;
    const auto year_of_era = static_cast<unsigned>(year - era * 400);
    const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return static_cast<long long>(era) * 146097 + static_cast<long long>(day_of_era) - 719468;
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int digits_value(std::string_view text) {
    int value = 0;
    for (const char c : text) {
        value = value * 10 + (c - '0');
    }
    return value;
}

// "20240104" (dmon), "2024/01/16" (--query-gpu), "2024-01-16": days since the epoch.
std::optional<long long> date_days(std::string_view text) {
    std::string_view year;
    std::string_view month;
    std::string_view day;
    if (text.size() == 8) {
        year = text.substr(0, 4);
        month = text.substr(4, 2);
        day = text.substr(6, 2);
    } else if (text.size() == 10 && text[4] == text[7] && (text[4] == '/' || text[4] == '-')) {
        year = text.substr(0, 4);
        month = text.substr(5, 2);
        day = text.substr(8, 2);
    } else {
        return std::nullopt;
    }
    if (!all_digits(year) || !all_digits(month) || !all_digits(day)) {
        return std::nullopt;
    }
    const int m = digits_value(month);
    const int d = digits_value(day);
    if (m < 1 || m > 12 || d < 1 || d > 31) {
        return std::nullopt;
    }
    return days_from_civil(digits_value(year), static_cast<unsigned>(m), static_cast<unsigned>(d));
}

// "13:54:35" or "14:44:16.977": seconds since midnight.
std::optional<double> clock_seconds(std::string_view text) {
    if (text.size() < 8 || text[2] != ':' || text[5] != ':') {
        return std::nullopt;
    }
    const std::string_view hours = text.substr(0, 2);
    const std::string_view minutes = text.substr(3, 2);
    const std::string_view whole = text.substr(6, 2);
    std::string_view fraction = text.substr(8);
    if (!all_digits(hours) || !all_digits(minutes) || !all_digits(whole)) {
        return std::nullopt;
    }
    double seconds = digits_value(whole);
    if (!fraction.empty()) {
        if (fraction.front() != '.' || !all_digits(fraction.substr(1))) {
            return std::nullopt;
        }
        double scale = 0.1;
        for (const char c : fraction.substr(1)) {
            seconds += (c - '0') * scale;
            scale /= 10;
        }
    }
    const int h = digits_value(hours);
    const int m = digits_value(minutes);
    if (h > 23 || m > 59 || seconds >= 61) {
        return std::nullopt;
    }
    return h * 3600.0 + m * 60.0 + seconds;
}

}  // namespace

std::optional<SampleTime> parse_sample_time(std::string_view text) {
    const std::size_t space = text.find(' ');
    if (space == std::string_view::npos) {
        const std::optional<double> clock = clock_seconds(text);
        return clock ? std::optional<SampleTime>(SampleTime{*clock, false}) : std::nullopt;
    }
    const std::optional<long long> days = date_days(text.substr(0, space));
    const std::optional<double> clock = clock_seconds(text.substr(space + 1));
    if (!days || !clock) {
        return std::nullopt;
    }
    return SampleTime{static_cast<double>(*days) * 86400 + *clock, true};
}

const std::vector<ServingPoint>* ServingMetrics::get(const std::string& name) const {
    const auto found = series.find(name);
    return found == series.end() || found->second.empty() ? nullptr : &found->second;
}

std::vector<int> GpuTelemetry::gpus() const {
    std::vector<int> seen;
    for (const GpuSample& sample : samples) {
        if (sample.entity == GpuEntity::gpu) {
            seen.push_back(sample.gpu);
        }
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    return seen;
}

bool GpuTelemetry::has(GpuMetric metric) const {
    return std::any_of(samples.begin(), samples.end(), [metric](const GpuSample& sample) {
        return sample.entity == GpuEntity::gpu && sample.value(metric).has_value();
    });
}

const SampleLabels& GpuTelemetry::labels(const GpuSample& sample) const {
    static const SampleLabels none;
    return sample.label_set == 0 || sample.label_set > label_sets.size() ? none : label_sets[sample.label_set - 1];
}

std::vector<const CpuSample*> CpuTelemetry::overall() const {
    std::vector<const CpuSample*> rows;
    for (const CpuSample& sample : samples) {
        if (sample.cpu == "all") {
            rows.push_back(&sample);
        }
    }
    return rows;
}

std::string_view to_string(LinkKind kind) {
    switch (kind) {
        case LinkKind::self:
            return "X";
        case LinkKind::nvlink:
            return "NV#";
        case LinkKind::pix:
            return "PIX";
        case LinkKind::pxb:
            return "PXB";
        case LinkKind::phb:
            return "PHB";
        case LinkKind::node:
            return "NODE";
        case LinkKind::sys:
            return "SYS";
        case LinkKind::unknown:
            return "?";
    }
    return "?";
}

std::vector<std::size_t> Topology::gpu_rows() const {
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (devices[i].gpu_index >= 0) {
            rows.push_back(i);
        }
    }
    return rows;
}

const TopoDevice* Topology::gpu(int index) const {
    for (const TopoDevice& device : devices) {
        if (device.gpu_index == index) {
            return &device;
        }
    }
    return nullptr;
}

const TopoLink* Topology::gpu_link(int a, int b) const {
    std::optional<std::size_t> row, column;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (devices[i].gpu_index == a) {
            row = i;
        }
        if (devices[i].gpu_index == b) {
            column = i;
        }
    }
    if (!row || !column || *row >= links.size() || *column >= links[*row].size()) {
        return nullptr;
    }
    return &links[*row][*column];
}

const SmiField* SmiGpu::field(const std::string& path) const {
    const auto found = fields.find(path);
    return found == fields.end() ? nullptr : &found->second;
}

std::string read_telemetry_file(const std::string& path) {
    std::string text = read_input_file(path, max_telemetry_bytes);
    // Windows PowerShell 5 writes UTF-16 with a byte order mark for `>`: `nvidia-smi -q > node1.txt`
    // gives such a file. Said plainly here rather than "no 'GPU <bus id>' section" from the parser.
    if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff'))) {
        throw InputError(Diagnostic{path == "-" ? "<stdin>" : path, {1, 1}, {}, "file is UTF-16; save it as UTF-8"});
    }
    return text;
}

}  // namespace gpusel
