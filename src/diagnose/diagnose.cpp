// Observed-bottleneck rules. The table in diagnosis_rules() is the one place where thresholds
// live; each entry carries the reasoning behind its numbers. docs/diagnose.md renders the same
// content for users.

#include "gpusel/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpusel/error.hpp"
#include "gpusel/units.hpp"

#include <fmt/format.h>

namespace gpusel {

std::string_view to_string(Severity severity) {
    switch (severity) {
    case Severity::error:
        return "error";
    case Severity::warning:
        return "warning";
    case Severity::info:
        return "info";
    }
    return "?";
}

namespace {

// Sources named in the rationale below (docs/diagnose.md links them):
// - nvidia-smi --help-query-gpu: utilization.gpu "Percent of time over the past sample period
//   during which one or more kernels was executing on the GPU"; utilization.memory "Percent of
//   time over the past sample period during which global (device) memory was being read or
//   written".
// - DCGM profiling metrics: NVIDIA DCGM User Guide, Feature Overview, Profiling Metrics
//   (https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html): DRAM
//   Active is "the ratio of cycles the device memory interface is active sending or receiving
//   data"; PCIe TX/RX bytes are rates in bytes per second.
// - PyTorch performance tuning guide (https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html):
//   asynchronous data loading with num_workers > 0 and pin_memory=True.
// - PyTorch CUDA semantics, memory management
//   (https://pytorch.org/docs/stable/notes/cuda.html#memory-management): memory held by the
//   caching allocator still shows as used in nvidia-smi.
// - NVIDIA DALI (https://docs.nvidia.com/deeplearning/dali/user-guide/docs/): JPEG decoding
//   and augmentation on the GPU (nvJPEG).
// - the topo -m legend: PHB/NODE/SYS paths traverse a PCIe host bridge or the CPU
//   interconnect; NV# is a bonded set of NVLinks; PIX/PXB stay below PCIe switches.
std::vector<DiagnosisRule> build_rules() {
    std::vector<DiagnosisRule> rules;
    rules.push_back(DiagnosisRule{
        "gpu-util-low-cpu-high",
        "input-pipeline",
        Severity::error,
        "the CPU side of the input pipeline",
        {{"sm_util_pct", false, 70}, {"cpu_busy_pct", true, 85}},
        "GPU utilisation is the share of time a kernel runs (nvidia-smi --help-query-gpu); below 70 % the GPU waits a third "
        "of the time or more. With the host CPUs above 85 % busy at the same time, the waiting is "
        "on CPU work (decode, augmentation, collation). 85 % rather than 100 %: mpstat/top average "
        "over every core, including cores the data loader does not use.",
        {"decode and augment on the GPU (NVIDIA DALI or torchvision.io.decode_jpeg(device='cuda'), "
         "both nvJPEG)",
         "store samples pre-decoded and pre-resized (LMDB, Parquet or WebDataset shards) so the "
         "CPU decodes nothing",
         "more DataLoader workers, up to the physical cores, with persistent_workers=True and "
         "prefetch_factor >= 2",
         "pin_memory=True so host-to-device copies overlap compute"},
        false,
        "a faster GPU would wait on the same CPUs"});
    rules.push_back(DiagnosisRule{
        "gpu-util-low-dram-low",
        "input-pipeline",
        Severity::warning,
        "data loading",
        {{"sm_util_pct", false, 60}, {"dram_active_pct", false, 30}},
        "Below 60 % utilisation the GPU is idle 40 % of the time or more (nvidia-smi --help-query-gpu); with its memory "
        "interface under 30 % active (DCGM profiling metrics) it is not limited by memory either. An idle GPU with idle "
        "memory waits for something outside it: the next batch, or the host between steps.",
        {"time the data loader alone (iterate it without the model) and compare with the step "
         "time; if it is slower, it is the limit",
         "more DataLoader workers and prefetching (num_workers, prefetch_factor)",
         "remove host synchronisation from the step (.item(), .cpu(), printing or logging "
         "every step)",
         "CUDA graphs or torch.compile when the step launches many small kernels"},
        false,
        "the GPU already waits most of the time; a faster one would wait longer"});
    rules.push_back(DiagnosisRule{
        "gpu-util-low-fb-full",
        "memory-capacity",
        Severity::warning,
        "a model or batch size problem",
        {{"sm_util_pct", false, 60}, {"fb_used_pct", true, 90}},
        "Utilisation under 60 % while more than 90 % of the framebuffer is in use: the batch that "
        "fits is too small to keep the GPU busy, or memory pressure forces small steps. A hint, "
        "not a proof: memory the PyTorch caching allocator holds shows as used in nvidia-smi "
        "(PyTorch CUDA semantics, memory management); confirm with torch.cuda.max_memory_allocated().",
        {"activation checkpointing to free memory for a larger micro-batch",
         "bf16 mixed precision and an 8-bit optimizer to shrink weights and optimizer state",
         "shard optimizer state, gradients and weights across GPUs (ZeRO-1/2/3, FSDP)",
         "a GPU with more memory (`gpusel plan` sizes it)"},
        true,
        "one with more memory would; one that is only faster would not"});
    rules.push_back(DiagnosisRule{
        "pcie-saturated",
        "host-transfer",
        Severity::error,
        "host-to-device transfers",
        {{"pcie_link_use_pct", true, 80}},
        "The busier direction of PCIe traffic (dmon rxpci/txpci; DCGM PCITX/PCIRX, see DCGM profiling metrics) above 80 % "
        "of the link's nominal per-direction bandwidth on average: protocol overhead leaves little "
        "more, so transfers queue. The link's capacity comes from --query-gpu's "
        "pcie.link.gen.max and pcie.link.width.max, else from --gpu's catalog entry (PCIe Gen3 "
        "0.985 GB/s per lane per direction, doubling each generation).",
        {"pin host memory (pin_memory=True) and copy with non_blocking=True so transfers overlap "
         "compute",
         "move fewer bytes: send uint8 images rather than float32 and normalise on the GPU",
         "keep data that is reused (embeddings, a small dataset) resident on the GPU",
         "check the link runs at full width and generation (`gpusel verify`)"},
        false,
        "a faster GPU moves no more bytes over the same link; a host with a faster PCIe "
        "generation would"});
    rules.push_back(DiagnosisRule{
        "cpu-jpeg-decode",
        "input-pipeline",
        Severity::error,
        "JPEG decoding on the CPU",
        {{"cpu_jpeg_decode_pct", true, 40}},
        "More than 40 % of the profiled CPU samples in libjpeg / libturbojpeg / PIL's _imaging: "
        "image decoding dominates the host work, and the GPU's nvJPEG decoder can take it over "
        "(NVIDIA DALI).",
        {"decode JPEGs on the GPU: NVIDIA DALI, or torchvision.io.decode_jpeg(device='cuda')",
         "store images pre-decoded at training resolution (LMDB, Parquet, WebDataset)",
         "use a SIMD build of the decoder (libjpeg-turbo, Pillow-SIMD) if decoding must stay on "
         "the CPU"},
        false,
        "a faster GPU would wait on the same decoder"});
    rules.push_back(DiagnosisRule{
        "cpu-copy-mmap",
        "input-pipeline",
        Severity::warning,
        "storage reads (memory copies and page faults)",
        {{"cpu_copy_mmap_pct", true, 30}},
        "More than 30 % of the profiled CPU samples in memcpy/memmove, kernel copies to user "
        "space and page-fault handling of mapped files: the host spends its time moving bytes "
        "in from storage rather than preparing samples.",
        {"put the dataset on local NVMe rather than network storage",
         "preload the dataset into RAM (page cache or a RAM disk) when it fits",
         "read large sequential shards (WebDataset, TFRecord) instead of many small files",
         "avoid extra copies: memory-map once and wrap with torch.from_numpy"},
        false,
        "a faster GPU would wait on the same storage"});
    rules.push_back(DiagnosisRule{
        "gpu-peers-through-host",
        "topology",
        Severity::warning,
        "GPU-to-GPU traffic through the host",
        {{"gpu_pairs_through_host_pct", true, 0}},
        "nvidia-smi topo -m shows PHB, NODE or SYS (SOC on old drivers) between GPUs of the job: "
        "their traffic crosses a PCIe host bridge or the link between CPU sockets (the topo -m legend) instead "
        "of NVLink (NV#) or a PCIe switch (PIX/PXB), so collectives (all-reduce) are slower.",
        {"run multi-GPU jobs on GPUs joined by NVLink (NV#) or at least a PCIe switch (PIX/PXB)",
         "regroup: give each job GPUs under one switch or one NUMA node (CUDA_VISIBLE_DEVICES)",
         "overlap communication with compute: larger gradient buckets (DDP bucket_cap_mb), "
         "gradient accumulation to all-reduce less often"},
        false,
        "a faster GPU waits longer on the same links; an NVLink (SXM) system would help"});
    rules.push_back(DiagnosisRule{
        "gpus-split-numa",
        "topology",
        Severity::warning,
        "GPUs split across NUMA nodes",
        {{"numa_nodes_spanned", true, 1}},
        "The job's GPUs sit on more than one NUMA node (nvidia-smi topo -m, NUMA Affinity) while one "
        "node alone has enough GPUs for the job: host memory traffic and GPU peer traffic cross the "
        "CPU interconnect without need.",
        {"pick the job's GPUs from one NUMA node (CUDA_VISIBLE_DEVICES)",
         "bind each rank's threads and memory to its GPU's node: numactl --cpunodebind=N --membind=N"},
        false,
        "placement, not the GPU, is the issue"});
    rules.push_back(DiagnosisRule{
        "gpu-bound-memory",
        "memory-bandwidth",
        Severity::info,
        "the GPU itself, limited by memory bandwidth",
        {{"sm_util_pct", true, 90}, {"dram_active_pct", true, 60}},
        "A kernel runs more than 90 % of the time (nvidia-smi --help-query-gpu) and the memory interface is active more than "
        "60 % of cycles (DCGM profiling metrics): the GPU is the bottleneck and moves bytes more than it computes "
        "(decode-heavy inference, small batches, elementwise work). 60 %: sustained DRAM activity "
        "tops out below 100 % in practice, so 60 % already means most of what is reachable.",
        {"a GPU with more memory bandwidth (HBM3/HBM3e parts) helps most",
         "cut memory traffic: fused kernels, FlashAttention, larger batches per weight read",
         "store weights and KV cache in fewer bits (fp8/int8) to move fewer bytes"},
        true,
        "one with more memory bandwidth"});
    rules.push_back(DiagnosisRule{
        "gpu-bound-compute",
        "compute",
        Severity::info,
        "the GPU itself, limited by compute",
        {{"sm_util_pct", true, 90}, {"dram_active_pct", false, 60}},
        "A kernel runs more than 90 % of the time (nvidia-smi --help-query-gpu) while the memory interface is active less "
        "than 60 % of cycles (DCGM profiling metrics): the GPU is the bottleneck and computes more than it moves "
        "bytes. Utilisation says a kernel was running, not how fast; DCGM's SM and tensor activity "
        "(fields 1002, 1004) show how much of the GPU was used.",
        {"a GPU with more dense FLOP/s at the precision used (bf16/fp8 tensor cores)",
         "use tensor-core precisions (bf16; fp8 with Transformer Engine) if still in fp32/tf32",
         "torch.compile or fused kernels to raise achieved FLOP/s"},
        true,
        "one with more compute at the precision used"});
    rules.push_back(DiagnosisRule{
        "healthy",
        "healthy",
        Severity::info,
        "nothing found",
        {},
        "Emitted when every rule that could be evaluated stayed silent.",
        {"nothing to fix from this telemetry; capture longer or add inputs (--perf, --cpu, --topo) "
         "to check more"},
        false,
        "nothing here points at the GPU"});
    return rules;
}

struct Series {
    std::string metric;  // the metric actually used (may stand in for the rule's)
    std::string source;
    std::vector<double> values;
};

std::string source_of(TelemetryKind kind, const std::string& file) { return fmt::format("{} {}", to_string(kind), file); }

bool in_job(const std::vector<int>& job, int gpu) { return std::find(job.begin(), job.end(), gpu) != job.end(); }

// GPU inputs, most precise first: DCGM, then dmon, then --query-gpu.
std::vector<const GpuTelemetry*> gpu_inputs(const DiagnoseInputs& in) {
    std::vector<const GpuTelemetry*> inputs;
    for (const std::optional<GpuTelemetry>* t : {&in.dcgm, &in.dmon, &in.query}) {
        if (*t) {
            inputs.push_back(&**t);
        }
    }
    return inputs;
}

std::optional<Series> gpu_metric_series(const DiagnoseInputs& in, const std::vector<int>& job, GpuMetric metric) {
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{std::string(metric_name(metric)), source_of(t->kind, t->file), {}};
        for (const GpuSample& sample : t->samples) {
            if (sample.entity == GpuEntity::gpu && in_job(job, sample.gpu)) {
                if (const std::optional<double> v = sample.value(metric)) {
                    series.values.push_back(*v);
                }
            }
        }
        if (!series.values.empty()) {
            return series;
        }
    }
    return std::nullopt;
}

// Framebuffer in use as a percentage of its size. The size comes from the same sample
// (total, or used + free), else from another input's total for the same GPU, else --gpu.
std::optional<Series> fb_used_series(const DiagnoseInputs& in, const std::vector<int>& job, std::string& reason,
                                     std::vector<std::string>& notes) {
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
        for (const GpuSample& sample : t->samples) {
            const std::optional<double> used = sample.value(GpuMetric::fb_used_bytes);
            if (sample.entity != GpuEntity::gpu || !in_job(job, sample.gpu) || !used) {
                continue;
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
        }
        if (!series.values.empty()) {
            if (used_catalog) {
                notes.push_back(fmt::format("framebuffer size from the catalog entry {} ({:.0f} GiB); the usable size "
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

// nominal per-direction PCIe bandwidth, the catalog's convention (GpuSpec::host_link_bytes_per_s)
double link_bytes_per_s(int generation, int lanes) {
    GpuSpec link;
    link.host_link_generation = generation;
    link.host_link_lanes = lanes;
    return link.host_link_bytes_per_s();
}

std::optional<Series> pcie_series(const DiagnoseInputs& in, const std::vector<int>& job, std::string& reason,
                                  std::vector<std::string>& notes) {
    // Link capacity per GPU from --query-gpu (max generation and width; the current ones drop
    // at idle), else --gpu.
    std::map<int, double> capacity_of_gpu;
    if (in.query) {
        for (const GpuSample& sample : in.query->samples) {
            const std::optional<double> generation =
                sample.value(GpuMetric::pcie_link_gen_max) ? sample.value(GpuMetric::pcie_link_gen_max)
                                                           : sample.value(GpuMetric::pcie_link_gen_current);
            const std::optional<double> width =
                sample.value(GpuMetric::pcie_link_width_max) ? sample.value(GpuMetric::pcie_link_width_max)
                                                             : sample.value(GpuMetric::pcie_link_width_current);
            if (generation && width && *generation >= 1 && *generation <= 7 && *width >= 1 && *width <= 32) {
                capacity_of_gpu.emplace(sample.gpu, link_bytes_per_s(static_cast<int>(*generation), static_cast<int>(*width)));
            }
        }
    }
    bool saw_traffic = false;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        Series series{"pcie_link_use_pct", source_of(t->kind, t->file), {}};
        for (const GpuSample& sample : t->samples) {
            const std::optional<double> rx = sample.value(GpuMetric::pcie_rx_bytes_per_s);
            const std::optional<double> tx = sample.value(GpuMetric::pcie_tx_bytes_per_s);
            if (sample.entity != GpuEntity::gpu || !in_job(job, sample.gpu) || (!rx && !tx)) {
                continue;
            }
            saw_traffic = true;
            double capacity = 0;
            if (capacity_of_gpu.count(sample.gpu) != 0) {
                capacity = capacity_of_gpu[sample.gpu];
            } else if (in.gpu != nullptr) {
                capacity = in.gpu->host_link_bytes_per_s();
            }
            if (capacity > 0) {
                series.values.push_back(std::max(rx.value_or(0), tx.value_or(0)) / capacity * 100);
            }
        }
        if (!series.values.empty()) {
            if (capacity_of_gpu.empty() && in.gpu != nullptr) {
                notes.push_back(fmt::format("PCIe link capacity from the catalog entry {} (PCIe Gen{} x{}, {:.1f} GB/s per "
                                            "direction)",
                                            in.gpu->id, in.gpu->host_link_generation, in.gpu->host_link_lanes,
                                            in.gpu->host_link_bytes_per_s() / 1e9));
            }
            return series;
        }
    }
    reason = saw_traffic ? "PCIe link capacity unknown: add pcie.link.gen.max,pcie.link.width.max to --query, or pass "
                           "--gpu ID"
                         : "no PCIe throughput: capture dmon with -s t, or DCGM PCITX/PCIRX (1009, 1010)";
    return std::nullopt;
}

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

double rounded(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    const double r = std::round(value * scale) / scale;
    return r == 0 ? 0.0 : r;
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

bool fires(const Evidence& evidence) {
    return evidence.above ? evidence.mean > evidence.threshold : evidence.mean < evidence.threshold;
}

std::string fmt_pct(double value) { return fmt::format("{:.0f} %", value); }

}  // namespace

const std::vector<DiagnosisRule>& diagnosis_rules() {
    static const std::vector<DiagnosisRule> rules = build_rules();
    return rules;
}

const DiagnosisRule* find_rule(std::string_view id) {
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        if (rule.id == id) {
            return &rule;
        }
    }
    return nullptr;
}

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

Diagnosis diagnose(const DiagnoseInputs& in) {
    Diagnosis diagnosis;

    // Inputs and the job's GPUs: those in the GPU telemetry, else every GPU of the topology.
    std::set<int> job;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        for (const int gpu : t->gpus()) {
            job.insert(gpu);
        }
    }
    const auto add_notes = [&diagnosis](const std::string& file, const std::vector<std::string>& notes) {
        for (const std::string& note : notes) {
            diagnosis.notes.push_back(fmt::format("{}: {}", file, note));
        }
    };
    for (const std::optional<GpuTelemetry>* t : {&in.dmon, &in.dcgm, &in.query}) {
        if (*t) {
            diagnosis.inputs.push_back(InputSummary{(*t)->kind, (*t)->file, (*t)->samples.size(), (*t)->gpus()});
            add_notes((*t)->file, (*t)->notes);
        }
    }
    if (in.cpu) {
        diagnosis.inputs.push_back(InputSummary{in.cpu->kind, in.cpu->file, in.cpu->samples.size(), {}});
        add_notes(in.cpu->file, in.cpu->notes);
    }
    if (in.perf) {
        diagnosis.inputs.push_back(InputSummary{TelemetryKind::perf_report, in.perf->file, in.perf->symbols.size(), {}});
        add_notes(in.perf->file, in.perf->notes);
    }
    if (in.topology) {
        std::vector<int> gpus;
        for (const std::size_t row : in.topology->gpu_rows()) {
            gpus.push_back(in.topology->devices[row].gpu_index);
        }
        diagnosis.inputs.push_back(InputSummary{TelemetryKind::nvidia_smi_topo, in.topology->file, gpus.size(), gpus});
        add_notes(in.topology->file, in.topology->notes);
        if (job.empty()) {
            job.insert(gpus.begin(), gpus.end());
        }
    }
    diagnosis.job_gpus.assign(job.begin(), job.end());
    const std::vector<int>& job_gpus = diagnosis.job_gpus;

    // Every evidence series a rule may ask for, or the reason it is missing.
    std::map<std::string, Series> series;
    std::map<std::string, std::string> missing;
    const bool has_gpu_input = !gpu_inputs(in).empty();
    const std::string no_gpu_input = "no GPU telemetry: pass --dmon, --dcgm or --query";
    if (std::optional<Series> busy = gpu_metric_series(in, job_gpus, GpuMetric::sm_util_pct)) {
        series["sm_util_pct"] = std::move(*busy);
    } else if (std::optional<Series> engine = gpu_metric_series(in, job_gpus, GpuMetric::gr_engine_active_pct)) {
        series["sm_util_pct"] = std::move(*engine);  // DCGM's graphics-engine activity stands in
    } else {
        missing["sm_util_pct"] = has_gpu_input ? "no GPU utilisation: capture dmon with -s u, --query-gpu "
                                                 "utilization.gpu, or DCGM GPUTL (203) / GRACT (1001)"
                                               : no_gpu_input;
    }
    if (const auto busy = series.find("sm_util_pct"); busy != series.end()) {
        diagnosis.gpu_busy_pct = summarize(busy->second.values).mean;
        diagnosis.gpu_busy_source = busy->second.source;
    }
    if (std::optional<Series> dram = gpu_metric_series(in, job_gpus, GpuMetric::dram_active_pct)) {
        series["dram_active_pct"] = std::move(*dram);
    } else if (std::optional<Series> mem = gpu_metric_series(in, job_gpus, GpuMetric::mem_util_pct)) {
        series["dram_active_pct"] = std::move(*mem);  // nvidia-smi's memory utilisation stands in
    } else {
        missing["dram_active_pct"] = has_gpu_input ? "no memory activity: capture dmon with -s u, --query-gpu "
                                                     "utilization.memory, or DCGM DRAMA (1005)"
                                                   : no_gpu_input;
    }
    {
        std::string reason;
        if (std::optional<Series> fb = fb_used_series(in, job_gpus, reason, diagnosis.notes)) {
            series["fb_used_pct"] = std::move(*fb);
        } else {
            missing["fb_used_pct"] = has_gpu_input ? reason : no_gpu_input;
        }
    }
    {
        std::string reason;
        if (std::optional<Series> pcie = pcie_series(in, job_gpus, reason, diagnosis.notes)) {
            series["pcie_link_use_pct"] = std::move(*pcie);
        } else {
            missing["pcie_link_use_pct"] = has_gpu_input ? reason : no_gpu_input;
        }
    }
    if (in.cpu) {
        Series cpu{"cpu_busy_pct", source_of(in.cpu->kind, in.cpu->file), {}};
        for (const CpuSample* sample : in.cpu->overall()) {
            cpu.values.push_back(sample->busy_pct);
        }
        if (cpu.values.empty()) {
            missing["cpu_busy_pct"] = "the CPU report has no rows for all CPUs together ('all' / %Cpu(s))";
        } else {
            series["cpu_busy_pct"] = std::move(cpu);
        }
    } else {
        missing["cpu_busy_pct"] = "no host CPU report: pass --cpu (mpstat, sar -u or top -b)";
    }

    // Profile shares are single figures: the evidence carries no percentiles.
    std::map<std::string, Evidence> single;
    if (in.perf) {
        double jpeg = 0;
        double copy = 0;
        for (const PerfSymbol& symbol : in.perf->symbols) {
            jpeg += is_jpeg_decode(symbol) ? symbol.self_pct : 0;
            copy += is_copy_or_mmap(symbol) ? symbol.self_pct : 0;
        }
        const std::string source = source_of(TelemetryKind::perf_report, in.perf->file);
        const std::size_t samples = in.perf->total_samples ? static_cast<std::size_t>(*in.perf->total_samples) : 0;
        single["cpu_jpeg_decode_pct"] = Evidence{"cpu_jpeg_decode_pct", source, samples, jpeg, {}, {}, 0, true, {}};
        single["cpu_copy_mmap_pct"] = Evidence{"cpu_copy_mmap_pct", source, samples, copy, {}, {}, 0, true, {}};
    } else {
        missing["cpu_jpeg_decode_pct"] = missing["cpu_copy_mmap_pct"] = "no CPU profile: pass --perf (perf report --stdio)";
    }

    // Topology: GPU pairs of the job that talk through the host, and NUMA placement.
    std::vector<std::string> pair_details;
    std::vector<std::string> numa_details;
    bool numa_regroup_possible = false;
    if (in.topology) {
        std::vector<int> placed;
        for (const int gpu : job_gpus) {
            if (in.topology->gpu(gpu) != nullptr) {
                placed.push_back(gpu);
            } else {
                diagnosis.notes.push_back(fmt::format("GPU {} is in the GPU telemetry but not in {}", gpu, in.topology->file));
            }
        }
        const std::string source = source_of(TelemetryKind::nvidia_smi_topo, in.topology->file);
        if (placed.size() < 2) {
            missing["gpu_pairs_through_host_pct"] = missing["numa_nodes_spanned"] =
                "the job uses one GPU: no GPU-to-GPU traffic to place";
        } else {
            std::size_t pairs = 0;
            std::size_t through_host = 0;
            for (std::size_t i = 0; i < placed.size(); ++i) {
                for (std::size_t j = i + 1; j < placed.size(); ++j) {
                    ++pairs;
                    const TopoLink* link = in.topology->gpu_link(placed[i], placed[j]);
                    if (link != nullptr &&
                        (link->kind == LinkKind::phb || link->kind == LinkKind::node || link->kind == LinkKind::sys)) {
                        ++through_host;
                        pair_details.push_back(fmt::format("GPU{}-GPU{}: {}", placed[i], placed[j], link->text));
                    }
                }
            }
            single["gpu_pairs_through_host_pct"] =
                Evidence{"gpu_pairs_through_host_pct", source, pairs,
                         static_cast<double>(through_host) / static_cast<double>(pairs) * 100, {}, {}, 0, true, {}};
            std::map<int, int> gpus_per_node;  // over the whole machine
            bool numa_known = true;
            for (const std::size_t row : in.topology->gpu_rows()) {
                if (const std::optional<int> node = in.topology->devices[row].numa_node) {
                    ++gpus_per_node[*node];
                }
            }
            std::set<int> nodes;
            for (const int gpu : placed) {
                const std::optional<int> node = in.topology->gpu(gpu)->numa_node;
                if (!node) {
                    numa_known = false;
                    break;
                }
                nodes.insert(*node);
            }
            if (!numa_known) {
                missing["numa_nodes_spanned"] = "NUMA affinity is N/A in the topology";
            } else {
                single["numa_nodes_spanned"] = Evidence{"numa_nodes_spanned", source, placed.size(),
                                                        static_cast<double>(nodes.size()), {}, {}, 0, true, {}};
                for (const auto& [node, count] : gpus_per_node) {
                    if (count >= static_cast<int>(placed.size())) {
                        numa_regroup_possible = true;
                        numa_details.push_back(fmt::format("NUMA node {} has {} GPUs, enough for this {}-GPU job", node,
                                                           count, placed.size()));
                    }
                }
                for (const int gpu : placed) {
                    numa_details.push_back(fmt::format("GPU{}: NUMA node {}", gpu, *in.topology->gpu(gpu)->numa_node));
                }
            }
        }
    } else {
        missing["gpu_pairs_through_host_pct"] = missing["numa_nodes_spanned"] = "no topology: pass --topo (nvidia-smi topo -m)";
    }

    // Evaluate the table.
    std::size_t evaluated = 0;
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        if (rule.thresholds.empty()) {
            continue;  // healthy, decided below
        }
        Verdict verdict;
        verdict.rule = &rule;
        std::string skip_reason;
        bool all_fire = true;
        for (const RuleThreshold& threshold : rule.thresholds) {
            if (const auto found = series.find(threshold.metric); found != series.end()) {
                verdict.evidence.push_back(series_evidence(found->second, threshold));
            } else if (const auto figure = single.find(threshold.metric); figure != single.end()) {
                Evidence evidence = figure->second;
                evidence.threshold = threshold.value;
                evidence.above = threshold.above;
                verdict.evidence.push_back(evidence);
            } else {
                skip_reason = missing.count(threshold.metric) != 0 ? missing[threshold.metric] : "no data for " + threshold.metric;
                break;
            }
            all_fire = all_fire && fires(verdict.evidence.back());
        }
        if (!skip_reason.empty()) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, skip_reason});
            continue;
        }
        ++evaluated;
        if (rule.id == "gpus-split-numa" && !numa_regroup_possible) {
            all_fire = false;  // spanning nodes is unavoidable when no node holds the whole job
        }
        if (!all_fire) {
            continue;
        }
        const double first = verdict.evidence[0].mean;
        const double second = verdict.evidence.size() > 1 ? verdict.evidence[1].mean : 0;
        const std::string stand_in = verdict.evidence.size() > 1 ? verdict.evidence[1].metric : "";
        const bool one = job_gpus.size() == 1;
        const std::string gpus_are = one ? "The GPU is" : "The GPUs are";
        const std::string their = one ? "its" : "their";
        const std::string them = one ? "it" : "them";
        const std::string they_wait = one ? "it waits" : "they wait";
        const std::string memory_word = stand_in == "mem_util_pct" ? "memory (nvidia-smi memory utilisation)" : "memory interface";
        if (rule.id == "gpu-util-low-cpu-high") {
            verdict.summary = fmt::format("{} busy {} of the time while the host CPUs are {} busy: the CPU side of the "
                                          "input pipeline cannot keep up.",
                                          gpus_are, fmt_pct(first), fmt_pct(second));
            verdict.expected_gain = 1 - first / 100;
        } else if (rule.id == "gpu-util-low-dram-low") {
            verdict.summary = fmt::format("{} busy {} of the time and {} {} {}: {} for input, not for compute or "
                                          "memory.",
                                          gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second), they_wait);
            verdict.expected_gain = 1 - first / 100;
        } else if (rule.id == "gpu-util-low-fb-full") {
            verdict.summary = fmt::format("{} busy {} of the time with {} of {} memory in use: the batch that fits is "
                                          "too small to keep {} busy.",
                                          gpus_are, fmt_pct(first), fmt_pct(second), their, them);
            verdict.expected_gain = 1 - first / 100;
        } else if (rule.id == "pcie-saturated") {
            verdict.summary = fmt::format("The PCIe link carries {} of its capacity on average: host-device transfers "
                                          "limit the job.",
                                          fmt_pct(first));
            verdict.expected_gain = verdict.evidence[0].share_beyond.value_or(0);
        } else if (rule.id == "cpu-jpeg-decode") {
            verdict.summary = fmt::format("{} of the profiled CPU samples decode JPEGs (libjpeg/PIL): decoding on the "
                                          "CPU limits the input pipeline.",
                                          fmt::format("{:.1f} %", first));
            verdict.expected_gain = first / 100;
        } else if (rule.id == "cpu-copy-mmap") {
            verdict.summary = fmt::format("{} of the profiled CPU samples copy memory or handle page faults "
                                          "(memcpy/mmap): reading the data limits the input pipeline.",
                                          fmt::format("{:.1f} %", first));
            verdict.expected_gain = first / 100;
        } else if (rule.id == "gpu-peers-through-host") {
            verdict.summary = fmt::format("{} of {} GPU pairs of the job talk through the host (PHB, NODE or SYS) rather "
                                          "than NVLink or a PCIe switch.",
                                          pair_details.size(), verdict.evidence[0].samples);
            const std::size_t shown = std::min<std::size_t>(pair_details.size(), 8);
            verdict.details.assign(pair_details.begin(), pair_details.begin() + static_cast<std::ptrdiff_t>(shown));
            if (pair_details.size() > shown) {
                verdict.details.push_back(fmt::format("... and {} more pairs", pair_details.size() - shown));
            }
        } else if (rule.id == "gpus-split-numa") {
            verdict.summary = fmt::format("The job's {} GPUs sit on {} NUMA nodes although one node alone has enough "
                                          "GPUs for it.",
                                          verdict.evidence[0].samples, static_cast<int>(first));
            verdict.details = numa_details;
        } else if (rule.id == "gpu-bound-memory") {
            verdict.summary = fmt::format("{} busy {} of the time and {} {} {}: the job is bound by memory bandwidth.",
                                          gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second));
        } else if (rule.id == "gpu-bound-compute") {
            verdict.summary = fmt::format("{} busy {} of the time with {} {} at {}: the job is bound by compute.",
                                          gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second));
        }
        for (Evidence& evidence : verdict.evidence) {
            // The evidence is shown, not recomputed: round it once here so that text and JSON agree.
            evidence.mean = rounded(evidence.mean, 2);
            if (evidence.p5) {
                evidence.p5 = rounded(*evidence.p5, 2);
            }
            if (evidence.p95) {
                evidence.p95 = rounded(*evidence.p95, 2);
            }
            if (evidence.share_beyond) {
                evidence.share_beyond = rounded(*evidence.share_beyond, 4);
            }
        }
        verdict.expected_gain = rounded(std::clamp(verdict.expected_gain, 0.0, 1.0), 4);
        diagnosis.verdicts.push_back(std::move(verdict));
    }

    if (diagnosis.verdicts.empty() && evaluated > 0) {
        Verdict healthy;
        healthy.rule = find_rule("healthy");
        healthy.summary = fmt::format("None of the {} rules that could be evaluated found a bottleneck.", evaluated);
        if (const auto busy = series.find("sm_util_pct"); busy != series.end()) {
            healthy.details.push_back(fmt::format("GPU busy ({}) averages {}, from {}", busy->second.metric,
                                                  fmt_pct(summarize(busy->second.values).mean), busy->second.source));
        }
        diagnosis.verdicts.push_back(std::move(healthy));
    }

    std::stable_sort(diagnosis.verdicts.begin(), diagnosis.verdicts.end(), [](const Verdict& a, const Verdict& b) {
        if (a.rule->severity != b.rule->severity) {
            return static_cast<int>(a.rule->severity) < static_cast<int>(b.rule->severity);
        }
        return a.expected_gain > b.expected_gain;
    });
    return diagnosis;
}

namespace {

struct Throughput {
    double per_s = 0;
    double busy_share = 0;
    std::string unit;
};

// The model's unobstructed throughput of `workload` on `count` x `gpu`; nullopt when the model
// cannot place the workload there (count not divisible into a layout, nothing fits).
std::optional<Throughput> unobstructed_throughput(const Workload& workload, const GpuSpec& gpu, int count,
                                                  const EfficiencyTable& efficiency) {
    try {
        PerfQuery query;
        query.layout = default_layout(workload, gpu, count, ServingStack::automatic);
        const PerfEstimate estimate = estimate_perf(workload, gpu, query, efficiency);
        Throughput result;
        result.busy_share = estimate.bottleneck.gpu_utilization;
        if (estimate.training) {
            const bool tokens = estimate.training->tokens_per_s > 0;
            result.per_s = tokens ? estimate.training->tokens_per_s : estimate.training->samples_per_s;
            result.unit = tokens ? "tokens/s" : "samples/s";
        } else if (estimate.inference && estimate.inference->fits) {
            result.per_s = estimate.inference->output_tokens_per_s;
            result.unit = "output tokens/s";
        }
        if (!(result.per_s > 0) || !std::isfinite(result.per_s)) {
            return std::nullopt;
        }
        return result;
    } catch (const UsageError&) {
        return std::nullopt;
    } catch (const InputError&) {
        return std::nullopt;
    }
}

}  // namespace

FixWorth estimate_fix_worth(const Diagnosis& diagnosis, const Workload& workload, const GpuSpec* gpu,
                            const Catalog& catalog, const EfficiencyTable& efficiency) {
    FixWorth worth;
    worth.workload = workload.name;
    worth.gpu_count = static_cast<int>(std::max<std::size_t>(diagnosis.job_gpus.size(), 1));
    if (gpu == nullptr) {
        worth.note = "pass --gpu ID (the catalog id of the job's GPU) to predict what the fixes are worth";
        return worth;
    }
    worth.gpu = gpu->id;
    // The waits diagnose finds are outside the GPUs: the model runs without the workload's own
    // input-pipeline description, to give the speed the GPUs reach when nothing starves them.
    Workload unobstructed = workload;
    unobstructed.data.given = false;
    const std::optional<Throughput> here = unobstructed_throughput(unobstructed, *gpu, worth.gpu_count, efficiency);
    if (!here) {
        worth.note = fmt::format("the performance model cannot place workload '{}' on {} x {}", workload.name,
                                 worth.gpu_count, gpu->id);
        return worth;
    }
    worth.available = true;
    worth.unit = here->unit;
    worth.after_fix_per_s = here->per_s;
    worth.model_busy_share = here->busy_share;
    if (diagnosis.gpu_busy_pct) {
        worth.observed_busy_share = *diagnosis.gpu_busy_pct / 100;
        // First order: the GPUs deliver in proportion to the share of time they compute.
        const double ratio = here->busy_share > 0 ? std::min(1.0, *worth.observed_busy_share / here->busy_share) : 1.0;
        worth.now_per_s = here->per_s * ratio;
    }
    for (const GpuSpec& other : catalog.gpus()) {
        if (other.memory_bytes < gpu->memory_bytes) {
            continue;
        }
        const std::optional<Throughput> there = unobstructed_throughput(unobstructed, other, worth.gpu_count, efficiency);
        if (there && there->unit == here->unit && there->per_s > worth.fastest_per_s) {
            worth.fastest_per_s = there->per_s;
            worth.fastest_gpu = other.id;
        }
    }
    worth.note = fmt::format("gpusel's performance model for {} x {} with nothing outside the GPUs limiting; 'now' "
                             "scales it by the observed GPU utilisation over the {:.0f} % the model predicts",
                             worth.gpu_count, gpu->id, here->busy_share * 100);
    return worth;
}

}  // namespace gpusel
