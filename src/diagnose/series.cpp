// The telemetry series the diagnosis rules read, per GPU input and steady-state samples only:
// utilisation, DRAM and tensor activity, framebuffer in use, PCIe and NVLink traffic as a share
// of what the link achieves; and the mean and percentiles of a series.

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/units.hpp"
#include "diagnose/internal.hpp"

namespace gpusel {

namespace diagnose_detail {

namespace {

// `job` is ascending (Diagnosis::job_gpus): a binary search, not a scan per sample.
bool in_job(const std::vector<int>& job, int gpu) {
    return std::binary_search(job.begin(), job.end(), gpu);
}

bool steady(const SteadyMask& mask, const GpuTelemetry* t, std::size_t index) {
    const auto found = mask.find(t);
    return found == mask.end() || index >= found->second.size() || found->second[index];
}

// Whole-GPU samples of the job, steady state only, in file order.
template <typename Visit>
void for_job_samples(const GpuTelemetry& t, const std::vector<int>& job, const SteadyMask& mask, Visit visit) {
    for (std::size_t i = 0; i < t.samples.size(); ++i) {
        const GpuSample& sample = t.samples[i];
        if (sample.entity == GpuEntity::gpu && in_job(job, sample.gpu) && steady(mask, &t, i)) {
            visit(sample);
        }
    }
}

// What a link carries at best, as a share of its nominal rate (nvbandwidth, nccl-tests; see
// the sources above build_rules()).
constexpr double achievable_link_share = 0.8;

// nominal per-direction PCIe bandwidth, the catalog's convention (GpuSpec::host_link_bytes_per_s)
double link_bytes_per_s(int generation, int lanes) {
    GpuSpec link;
    link.host_link_generation = generation;
    link.host_link_lanes = lanes;
    return link.host_link_bytes_per_s();
}

}  // namespace

std::string source_of(TelemetryKind kind, const std::string& file) {
    return fmt::format("{} {}", to_string(kind), file);
}

std::vector<const GpuTelemetry*> gpu_inputs(const DiagnoseInputs& in) {
    std::vector<const GpuTelemetry*> inputs;
    for (const std::optional<GpuTelemetry>* t : {&in.dcgm, &in.prometheus, &in.dmon, &in.query}) {
        if (*t) {
            inputs.push_back(&**t);
        }
    }
    return inputs;
}

std::optional<Series> gpu_metric_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                        GpuMetric metric) {
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{std::string(metric_name(metric)), source_of(t->kind, t->file), {}};
        for_job_samples(*t, job, mask, [&](const GpuSample& sample) {
            if (const std::optional<double> v = sample.value(metric)) {
                series.values.push_back(*v);
            }
        });
        if (!series.values.empty()) {
            return series;
        }
    }
    return std::nullopt;
}

std::optional<GpuMetric> busy_metric(const GpuTelemetry& t) {
    if (t.has(GpuMetric::sm_util_pct)) {
        return GpuMetric::sm_util_pct;
    }
    if (t.has(GpuMetric::gr_engine_active_pct)) {
        return GpuMetric::gr_engine_active_pct;
    }
    return std::nullopt;
}

std::optional<Series> fb_used_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                     std::string& reason, std::vector<std::string>& notes) {
    std::map<int, double> total_of_gpu;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        for (const GpuSample& sample : t->samples) {
            if (const std::optional<double> total = sample.value(GpuMetric::fb_total_bytes)) {
                total_of_gpu.emplace(sample.gpu, *total);
            }
        }
    }
    bool saw_used = false;
    bool used_catalog = false;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{"fb_used_pct", source_of(t->kind, t->file), {}};
        for_job_samples(*t, job, mask, [&](const GpuSample& sample) {
            const std::optional<double> used = sample.value(GpuMetric::fb_used_bytes);
            if (!used) {
                return;
            }
            saw_used = true;
            std::optional<double> total = sample.value(GpuMetric::fb_total_bytes);
            if (!total && sample.value(GpuMetric::fb_free_bytes)) {
                total = *used + *sample.value(GpuMetric::fb_free_bytes);
            }
            if (!total && total_of_gpu.count(sample.gpu) != 0) {
                total = total_of_gpu[sample.gpu];
            }
            if (!total && in.gpu != nullptr) {
                // The catalog's capacity (GiB), slightly above the usable framebuffer nvidia-smi
                // shows (H100: 81559 of 81920 MiB): used shares come out up to a few % low.
                total = in.gpu->memory_bytes;
                used_catalog = true;
            }
            if (total && *total > 0) {
                series.values.push_back(std::min(100.0, *used / *total * 100));
            }
        });
        if (!series.values.empty()) {
            if (used_catalog) {
                notes.push_back(
                    fmt::format("framebuffer size from the catalog entry {} ({:.0f} GiB); the usable size "
                                "nvidia-smi shows is a little smaller",
                                in.gpu->id, in.gpu->memory_bytes / bytes_per_gib));
            }
            return series;
        }
    }
    reason = saw_used ? "framebuffer size unknown: add memory.total to --query, FBTTL (250) to --dcgm, or pass --gpu ID"
                      : "no framebuffer usage: capture dmon with -s m, --query-gpu memory.used, or DCGM FBUSD (252)";
    return std::nullopt;
}

std::optional<Series> pcie_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                  std::string& reason, std::vector<std::string>& notes) {
    // Link capacity per GPU from --query-gpu (max generation and width; the current ones drop
    // at idle), else --gpu.
    std::map<int, double> capacity_of_gpu;
    if (in.query) {
        for (const GpuSample& sample : in.query->samples) {
            const std::optional<double> generation = sample.value(GpuMetric::pcie_link_gen_max)
                                                         ? sample.value(GpuMetric::pcie_link_gen_max)
                                                         : sample.value(GpuMetric::pcie_link_gen_current);
            const std::optional<double> width = sample.value(GpuMetric::pcie_link_width_max)
                                                    ? sample.value(GpuMetric::pcie_link_width_max)
                                                    : sample.value(GpuMetric::pcie_link_width_current);
            if (generation && width && *generation >= 1 && *generation <= 7 && *width >= 1 && *width <= 32) {
                capacity_of_gpu.emplace(sample.gpu,
                                        link_bytes_per_s(static_cast<int>(*generation), static_cast<int>(*width)));
            }
        }
    }
    bool saw_traffic = false;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{"pcie_link_use_pct", source_of(t->kind, t->file), {}};
        for_job_samples(*t, job, mask, [&](const GpuSample& sample) {
            const std::optional<double> rx = sample.value(GpuMetric::pcie_rx_bytes_per_s);
            const std::optional<double> tx = sample.value(GpuMetric::pcie_tx_bytes_per_s);
            if (!rx && !tx) {
                return;
            }
            saw_traffic = true;
            double capacity = 0;
            if (capacity_of_gpu.count(sample.gpu) != 0) {
                capacity = capacity_of_gpu[sample.gpu];
            } else if (in.gpu != nullptr) {
                capacity = in.gpu->host_link_bytes_per_s();
            }
            if (capacity > 0) {
                series.values.push_back(std::max(rx.value_or(0), tx.value_or(0)) / (capacity * achievable_link_share) *
                                        100);
            }
        });
        if (!series.values.empty()) {
            if (capacity_of_gpu.empty() && in.gpu != nullptr) {
                notes.push_back(
                    fmt::format("PCIe link capacity from the catalog entry {} (PCIe Gen{} x{}, {:.1f} GB/s per "
                                "direction, {:.1f} GB/s achievable)",
                                in.gpu->id, in.gpu->host_link_generation, in.gpu->host_link_lanes,
                                in.gpu->host_link_bytes_per_s() / 1e9,
                                in.gpu->host_link_bytes_per_s() * achievable_link_share / 1e9));
            }
            return series;
        }
    }
    reason = saw_traffic ? "PCIe link capacity unknown: add pcie.link.gen.max,pcie.link.width.max to --query, or pass "
                           "--gpu ID"
                         : "no PCIe throughput: capture dmon with -s t, or DCGM PCITX/PCIRX (1009, 1010)";
    return std::nullopt;
}

std::optional<Series> nvlink_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                    std::string& reason) {
    const double capacity =
        in.gpu != nullptr ? in.gpu->interconnect.bidirectional_bytes_per_s * achievable_link_share : 0;
    bool saw_traffic = false;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{"nvlink_link_use_pct", source_of(t->kind, t->file), {}};
        for_job_samples(*t, job, mask, [&](const GpuSample& sample) {
            const std::optional<double> rx = sample.value(GpuMetric::nvlink_rx_bytes_per_s);
            const std::optional<double> tx = sample.value(GpuMetric::nvlink_tx_bytes_per_s);
            if (!rx && !tx) {
                return;
            }
            saw_traffic = true;
            if (capacity > 0) {
                series.values.push_back((rx.value_or(0) + tx.value_or(0)) / capacity * 100);
            }
        });
        if (!series.values.empty()) {
            return series;
        }
    }
    reason = !saw_traffic        ? "no NVLink throughput: capture DCGM NVLTX/NVLRX (1011, 1012)"
             : in.gpu == nullptr ? "NVLink size unknown: pass --gpu ID"
                                 : fmt::format("the catalog entry {} has no NVLink", in.gpu->id);
    return std::nullopt;
}

}  // namespace diagnose_detail

SeriesStats summarize(std::vector<double> values) {
    SeriesStats stats;
    stats.count = values.size();
    if (values.empty()) {
        return stats;
    }
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (const double v : values) {
        sum += v;
    }
    stats.mean = sum / static_cast<double>(values.size());
    const auto percentile = [&values](double q) {
        const double rank = q * static_cast<double>(values.size() - 1);
        const auto low = static_cast<std::size_t>(std::floor(rank));
        const std::size_t high = std::min(low + 1, values.size() - 1);
        return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
    };
    stats.p5 = percentile(0.05);
    stats.p95 = percentile(0.95);
    return stats;
}

}  // namespace gpusel
