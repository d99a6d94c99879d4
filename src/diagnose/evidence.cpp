// The evidence table of a diagnosis: every series and single figure a rule may ask for (GPU
// series, the host CPUs, the CPU profile's JPEG and copy shares, where the GPUs sit in the
// topology, the spread of busy GPUs), or the reason it is missing; and a series tested against
// a threshold.

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "diagnose/internal.hpp"

namespace gpusel::diagnose_detail {

namespace {

// Shared-object and symbol patterns of the profile rules. JPEG: libjpeg / libjpeg-turbo and
// Pillow's C extension, plus libjpeg's own symbol names for DSOs perf could not name.
bool is_jpeg_decode(const PerfSymbol& symbol) {
    const std::string& dso = symbol.shared_object;
    const std::string& sym = symbol.symbol;
    return dso.find("libjpeg") != std::string::npos || dso.find("libturbojpeg") != std::string::npos ||
           dso.find("_imaging") != std::string::npos || sym.rfind("jpeg_", 0) == 0 || sym.rfind("decode_mcu", 0) == 0 ||
           sym.find("ImagingJpeg") != std::string::npos;
}

// Copies and mapped-file faults: glibc's memcpy/memmove variants (__memmove_ssse3_back, ...),
// the kernel's copies to user space (read() from the page cache) and page-fault handling.
bool is_copy_or_mmap(const PerfSymbol& symbol) {
    const std::string& sym = symbol.symbol;
    for (const char* pattern : {"memcpy", "memmove", "copy_user", "copy_to_user", "copyout", "mmap", "page_fault",
                                "handle_mm_fault", "filemap_"}) {
        if (sym.find(pattern) != std::string::npos) {
            return true;
        }
    }
    return false;
}

Evidence series_evidence(const Series& series, const RuleThreshold& threshold) {
    const SeriesStats stats = summarize(series.values);
    Evidence evidence;
    evidence.metric = series.metric;
    evidence.source = series.source;
    evidence.samples = stats.count;
    evidence.mean = stats.mean;
    evidence.p5 = stats.p5;
    evidence.p95 = stats.p95;
    evidence.threshold = threshold.value;
    evidence.above = threshold.above;
    const auto beyond = std::count_if(series.values.begin(), series.values.end(), [&](double v) {
        return threshold.above ? v > threshold.value : v < threshold.value;
    });
    evidence.share_beyond = static_cast<double>(beyond) / static_cast<double>(series.values.size());
    return evidence;
}

void add_topology_evidence(const DiagnoseInputs& in, const std::vector<int>& job, EvidenceTable& table,
                           std::vector<std::string>& notes) {
    if (!in.topology) {
        table.missing["gpu_pairs_through_host_pct"] = table.missing["numa_nodes_spanned"] =
            "no topology: pass --topo (nvidia-smi topo -m)";
        return;
    }
    // Each GPU's row, looked up once: Topology::gpu() and gpu_link() scan the devices, which
    // per GPU pair would be cubic in the GPUs.
    const Topology& topology = *in.topology;
    std::map<int, std::size_t> row_of_gpu;
    for (const std::size_t row : topology.gpu_rows()) {
        row_of_gpu.emplace(topology.devices[row].gpu_index, row);  // the first row, as Topology::gpu()
    }
    const auto link_between = [&](int a, int b) -> const TopoLink* {
        const std::size_t row = row_of_gpu.at(a);
        const std::size_t column = row_of_gpu.at(b);
        return row < topology.links.size() && column < topology.links[row].size() ? &topology.links[row][column]
                                                                                  : nullptr;
    };
    std::vector<int> placed;
    std::size_t unplaced = 0;
    constexpr std::size_t unplaced_named = 8;  // one note each; the rest are counted
    for (const int gpu : job) {
        if (row_of_gpu.count(gpu) != 0) {
            placed.push_back(gpu);
        } else if (unplaced++ < unplaced_named) {
            notes.push_back(fmt::format("GPU {} is in the GPU telemetry but not in {}", gpu, in.topology->file));
        }
    }
    if (unplaced > unplaced_named) {
        notes.push_back(fmt::format("... and {} more GPUs of the GPU telemetry are not in {}",
                                    unplaced - unplaced_named, in.topology->file));
    }
    const std::string source = source_of(TelemetryKind::nvidia_smi_topo, in.topology->file);
    if (placed.size() < 2) {
        table.missing["gpu_pairs_through_host_pct"] = table.missing["numa_nodes_spanned"] =
            "the job uses one GPU: no GPU-to-GPU traffic to place";
        return;
    }
    std::size_t pairs = 0;
    std::size_t through_host = 0;
    for (std::size_t i = 0; i < placed.size(); ++i) {
        for (std::size_t j = i + 1; j < placed.size(); ++j) {
            ++pairs;
            const TopoLink* link = link_between(placed[i], placed[j]);
            if (link != nullptr &&
                (link->kind == LinkKind::phb || link->kind == LinkKind::node || link->kind == LinkKind::sys)) {
                ++through_host;
                table.pair_details.push_back(fmt::format("GPU{}-GPU{}: {}", placed[i], placed[j], link->text));
            }
        }
    }
    table.single["gpu_pairs_through_host_pct"] =
        Evidence{"gpu_pairs_through_host_pct",
                 source,
                 pairs,
                 static_cast<double>(through_host) / static_cast<double>(pairs) * 100,
                 {},
                 {},
                 0,
                 true,
                 {}};
    std::map<int, int> gpus_per_node;  // over the whole machine
    for (const std::size_t row : in.topology->gpu_rows()) {
        if (const std::optional<int> node = in.topology->devices[row].numa_node) {
            ++gpus_per_node[*node];
        }
    }
    std::set<int> nodes;
    for (const int gpu : placed) {
        const std::optional<int> node = topology.devices[row_of_gpu.at(gpu)].numa_node;
        if (!node) {
            table.missing["numa_nodes_spanned"] = "NUMA affinity is N/A in the topology";
            return;
        }
        nodes.insert(*node);
    }
    table.single["numa_nodes_spanned"] =
        Evidence{"numa_nodes_spanned", source, placed.size(), static_cast<double>(nodes.size()), {}, {}, 0, true, {}};
    for (const auto& [node, count] : gpus_per_node) {
        if (count >= static_cast<int>(placed.size())) {
            table.numa_regroup_possible = true;
            table.numa_details.push_back(
                fmt::format("NUMA node {} has {} GPUs, enough for this {}-GPU job", node, count, placed.size()));
        }
    }
    for (const int gpu : placed) {
        table.numa_details.push_back(
            fmt::format("GPU{}: NUMA node {}", gpu, *topology.devices[row_of_gpu.at(gpu)].numa_node));
    }
}

// A GPU series by metric, with the stand-ins the rules accept, or a reason in `missing`.
void add_gpu_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                    const std::string& key, std::initializer_list<GpuMetric> metrics, const std::string& reason,
                    EvidenceTable& table) {
    for (const GpuMetric metric : metrics) {
        if (std::optional<Series> found = gpu_metric_series(in, job, mask, metric)) {
            table.series[key] = std::move(*found);
            return;
        }
    }
    table.missing[key] = gpu_inputs(in).empty() ? "no GPU telemetry: pass --dmon, --dcgm, --prom or --query" : reason;
}

}  // namespace

std::optional<Evidence> EvidenceTable::test(const std::string& metric, bool above, double value) const {
    const RuleThreshold threshold{metric, above, value};
    if (const auto found = series.find(metric); found != series.end()) {
        return series_evidence(found->second, threshold);
    }
    if (const auto figure = single.find(metric); figure != single.end()) {
        Evidence evidence = figure->second;
        evidence.threshold = value;
        evidence.above = above;
        return evidence;
    }
    return std::nullopt;
}

std::string fmt_pct(double value) {
    return fmt::format("{:.0f} %", value);
}

EvidenceTable gather_evidence(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyState& steady_state,
                              std::vector<std::string>& notes) {
    EvidenceTable table;
    const SteadyMask& mask = steady_state.mask;
    const bool has_gpu_input = !gpu_inputs(in).empty();
    const std::string no_gpu_input = "no GPU telemetry: pass --dmon, --dcgm, --prom or --query";
    // DCGM's graphics-engine activity stands in for utilisation; nvidia-smi's memory
    // utilisation for DRAM activity.
    add_gpu_series(in, job, mask, "sm_util_pct", {GpuMetric::sm_util_pct, GpuMetric::gr_engine_active_pct},
                   "no GPU utilisation: capture dmon with -s u, --query-gpu utilization.gpu, or DCGM GPUTL (203) / "
                   "GRACT (1001)",
                   table);
    add_gpu_series(in, job, mask, "dram_active_pct", {GpuMetric::dram_active_pct, GpuMetric::mem_util_pct},
                   "no memory activity: capture dmon with -s u, --query-gpu utilization.memory, or DCGM DRAMA (1005)",
                   table);
    add_gpu_series(in, job, mask, "tensor_active_pct", {GpuMetric::tensor_active_pct},
                   "no tensor activity: capture DCGM TENSO (1004)", table);
    add_gpu_series(in, job, mask, "sm_active_pct", {GpuMetric::sm_active_pct},
                   "no SM activity: capture DCGM SMACT (1002)", table);
    std::string reason;
    if (std::optional<Series> fb = fb_used_series(in, job, mask, reason, notes)) {
        table.series["fb_used_pct"] = std::move(*fb);
    } else {
        table.missing["fb_used_pct"] = has_gpu_input ? reason : no_gpu_input;
    }
    if (std::optional<Series> pcie = pcie_series(in, job, mask, reason, notes)) {
        table.series["pcie_link_use_pct"] = std::move(*pcie);
    } else {
        table.missing["pcie_link_use_pct"] = has_gpu_input ? reason : no_gpu_input;
    }
    if (std::optional<Series> nvlink = nvlink_series(in, job, mask, reason)) {
        table.series["nvlink_link_use_pct"] = std::move(*nvlink);
    } else {
        table.missing["nvlink_link_use_pct"] = has_gpu_input ? reason : no_gpu_input;
    }
    const std::vector<GpuBusy>& per_gpu = steady_state.capture.per_gpu;
    if (per_gpu.size() >= 2) {
        double low = per_gpu.front().busy_pct;
        double high = low;
        for (const GpuBusy& gpu : per_gpu) {
            low = std::min(low, gpu.busy_pct);
            high = std::max(high, gpu.busy_pct);
            table.busy_details.push_back(
                fmt::format("GPU {}: busy {} ({} samples)", gpu.gpu, fmt_pct(gpu.busy_pct), gpu.samples));
        }
        const auto busy = table.series.find("sm_util_pct");
        table.single["gpu_busy_spread_pct"] = Evidence{"gpu_busy_spread_pct",
                                                       busy == table.series.end() ? "" : busy->second.source,
                                                       per_gpu.size(),
                                                       high - low,
                                                       {},
                                                       {},
                                                       0,
                                                       true,
                                                       {}};
    } else {
        table.missing["gpu_busy_spread_pct"] = per_gpu.empty() ? "no GPU utilisation per GPU" : "the job uses one GPU";
    }
    if (in.cpu) {
        Series cpu{"cpu_busy_pct", source_of(in.cpu->kind, in.cpu->file), {}};
        for (const CpuSample* sample : in.cpu->overall()) {
            cpu.values.push_back(sample->busy_pct);
        }
        if (cpu.values.empty()) {
            table.missing["cpu_busy_pct"] = "the CPU report has no rows for all CPUs together ('all' / %Cpu(s))";
        } else {
            table.series["cpu_busy_pct"] = std::move(cpu);
        }
    } else {
        table.missing["cpu_busy_pct"] = "no host CPU report: pass --cpu (mpstat, sar -u or top -b)";
    }
    if (in.perf) {
        double jpeg = 0;
        double copy = 0;
        for (const PerfSymbol& symbol : in.perf->symbols) {
            jpeg += is_jpeg_decode(symbol) ? symbol.self_pct : 0;
            copy += is_copy_or_mmap(symbol) ? symbol.self_pct : 0;
        }
        const std::string source = source_of(TelemetryKind::perf_report, in.perf->file);
        const std::size_t samples = in.perf->total_samples ? static_cast<std::size_t>(*in.perf->total_samples) : 0;
        table.single["cpu_jpeg_decode_pct"] =
            Evidence{"cpu_jpeg_decode_pct", source, samples, jpeg, {}, {}, 0, true, {}};
        table.single["cpu_copy_mmap_pct"] = Evidence{"cpu_copy_mmap_pct", source, samples, copy, {}, {}, 0, true, {}};
    } else {
        table.missing["cpu_jpeg_decode_pct"] = table.missing["cpu_copy_mmap_pct"] =
            "no CPU profile: pass --perf (perf report --stdio)";
    }
    add_topology_evidence(in, job, table, notes);
    return table;
}

}  // namespace gpusel::diagnose_detail
