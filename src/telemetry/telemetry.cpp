// Shared pieces of the telemetry module: names, sample accessors, file reading.

#include <algorithm>
#include <set>

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

std::optional<double> GpuSample::value(GpuMetric metric) const {
    return m_values[static_cast<std::size_t>(metric)];
}

void GpuSample::set(GpuMetric metric, double value) {
    m_values[static_cast<std::size_t>(metric)] = value;
}

std::vector<int> GpuTelemetry::gpus() const {
    std::set<int> seen;
    for (const GpuSample& sample : samples) {
        if (sample.entity == GpuEntity::gpu) {
            seen.insert(sample.gpu);
        }
    }
    return {seen.begin(), seen.end()};
}

bool GpuTelemetry::has(GpuMetric metric) const {
    return std::any_of(samples.begin(), samples.end(), [metric](const GpuSample& sample) {
        return sample.entity == GpuEntity::gpu && sample.value(metric).has_value();
    });
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
