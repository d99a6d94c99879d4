// Observed-bottleneck rules. The table in diagnosis_rules() is the one place where thresholds
// live; each entry carries the reasoning behind its numbers. docs/diagnose.md renders the same
// content for users.

#include "diagnose/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "base/error.hpp"
#include "base/units.hpp"

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

std::string_view to_string(Confidence confidence) {
    switch (confidence) {
        case Confidence::high:
            return "high";
        case Confidence::medium:
            return "medium";
        case Confidence::low:
            return "low";
        case Confidence::unlikely:
            return "unlikely";
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
// - achievable link rates: NVIDIA nvbandwidth (https://github.com/NVIDIA/nvbandwidth; the
//   NVIDIA technical blog "Measuring GPU interconnect performance with NVbandwidth" shows
//   host_to_device_memcpy_ce at 55.6 GB/s on a PCIe Gen5 x16 link, 88 % of its 63 GB/s);
//   PCIe's TLP headers and flow control take 10-20 % of the wire rate. nccl-tests
//   (https://github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md) bus bandwidth on NVLink reaches
//   a similar share of the link's rate. gpusel counts 80 % of the nominal rate as achievable.

// Signals several rules share as supporting or contrary evidence.
struct SharedSignals {
    RuleSignal cpu_saturated;
    RuleSignal cpu_idle_weak;
    RuleSignal cpu_idle;
    RuleSignal fb_full;
    RuleSignal link_busy;
    RuleSignal gpu_waits;
    RuleSignal gpu_busy;
    RuleSignal peers_via_host;
    RuleSignal numa_split;
    RuleSignal tensor_busy;
};

SharedSignals shared_signals() {
    SharedSignals signals;
    signals.cpu_saturated = {"cpu_busy_pct", true, 85, 1, "saturated host CPUs prepare the batches too slowly"};
    signals.cpu_idle_weak = {"cpu_busy_pct", false, 50, 0.5,
                             "the host CPUs are mostly idle (weak: one loader thread on a large host still "
                             "averages idle)"};
    signals.cpu_idle = {"cpu_busy_pct", false, 50, 0.5, "the host CPUs are mostly idle: not the input pipeline"};
    signals.fb_full = {"fb_used_pct", true, 90, 1, "a full framebuffer points at the batch size, not the input"};
    signals.link_busy = {"pcie_link_use_pct", true, 60, 1, "the PCIe link is busy: the GPU waits on host transfers"};
    signals.gpu_waits = {"sm_util_pct", false, 70, 0.5, "the GPU waits a third of the time or more"};
    signals.gpu_busy = {"sm_util_pct", true, 90, 1, "the GPU is busy anyway: the host work overlaps it"};
    signals.peers_via_host = {"gpu_pairs_through_host_pct", true, 0, 0.5,
                              "GPU pairs talk through the host: waits on collectives look the same"};
    signals.numa_split = {"numa_nodes_spanned", true, 1, 0.5, "the GPUs span NUMA nodes"};
    signals.tensor_busy = {"tensor_active_pct", true, 50, 1,
                           "the tensor pipes are busy: the tensor-bound verdict is the more specific one"};
    return signals;
}

// The GPU idles, or waits on the host CPUs preparing batches.
void add_idle_and_input_starved_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "no-job-running",
        "idle",
        Severity::info,
        "no job seems to be running",
        {{"sm_util_pct", false, idle_gpu_busy_pct}},
        {},
        {{"fb_used_pct", true, idle_fb_used_pct, 1,
          "memory is held: a process is loaded but runs no kernels (stalled, or between phases)"},
         {"pcie_link_use_pct", true, 50, 1,
          "the PCIe link is busy: data moves, so a job runs (it waits on the copies)"}},
        "Utilisation under 5 % means a kernel ran less than 3 s of each minute (nvidia-smi --help-query-gpu): there "
        "is no job to diagnose. With less than a quarter of the framebuffer in use no process holds a model either; "
        "with more, or with a busy PCIe link, something runs but waits, and the other rules are evaluated.",
        {"capture while the job runs its steady state (after data loading and compilation), for minutes",
         "check the job runs on these GPUs: CUDA_VISIBLE_DEVICES, the scheduler's allocation, `nvidia-smi` process "
         "list"},
        false,
        "an idle GPU is not the limit"});
    rules.push_back(DiagnosisRule{
        "gpu-util-low-cpu-high",
        "input-pipeline",
        Severity::error,
        "the CPU side of the input pipeline",
        {{"sm_util_pct", false, 70}, {"cpu_busy_pct", true, 85}},
        {{"dram_active_pct", false, 30, 0.5, "the GPU's memory idles too: nothing on the GPU limits it"},
         {"cpu_jpeg_decode_pct", true, 20, 0.5, "the profile shows JPEG decoding"}},
        {{"pcie_link_use_pct", true, 85, 0.5, "the PCIe link is near its achievable rate: transfers may be the wait"}},
        "GPU utilisation is the share of time a kernel runs (nvidia-smi --help-query-gpu); below 70 % the GPU waits a "
        "third "
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
        {signals.cpu_saturated,
         {"cpu_jpeg_decode_pct", true, 20, 0.5, "the profile shows JPEG decoding"},
         {"cpu_copy_mmap_pct", true, 15, 0.5, "the profile shows copies and page faults (storage reads)"}},
        {signals.cpu_idle_weak, signals.fb_full, signals.link_busy, signals.peers_via_host, signals.numa_split},
        "Below 60 % utilisation the GPU is idle 40 % of the time or more (nvidia-smi --help-query-gpu); with its "
        "memory "
        "interface under 30 % active (DCGM profiling metrics) it is not limited by memory either. An idle GPU with "
        "idle "
        "memory waits for something outside it: the next batch, or the host between steps. Both GPU series say only "
        "that the GPU waits, not on what: busy CPUs or a loader-heavy profile support data loading; a full "
        "framebuffer, a busy PCIe link or GPUs that talk through the host point elsewhere.",
        {"time the data loader alone (iterate it without the model) and compare with the step "
         "time; if it is slower, it is the limit",
         "more DataLoader workers and prefetching (num_workers, prefetch_factor)",
         "remove host synchronisation from the step (.item(), .cpu(), printing or logging "
         "every step)",
         "CUDA graphs or torch.compile when the step launches many small kernels"},
        false,
        "the GPU already waits most of the time; a faster one would wait longer"});
}

// Memory capacity and the host side: the PCIe link, JPEG decoding, storage reads.
void add_host_side_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-util-low-fb-full",
        "memory-capacity",
        Severity::warning,
        "a model or batch size problem",
        {{"sm_util_pct", false, 60}, {"fb_used_pct", true, 90}},
        {signals.cpu_idle},
        {{"cpu_busy_pct", true, 85, 1, "saturated host CPUs: the input pipeline explains the waiting as well"},
         {"pcie_link_use_pct", true, 85, 0.5, "the PCIe link is near its achievable rate"}},
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
        {{"pcie_link_use_pct", true, 85}},
        {{"sm_util_pct", false, 60, 0.5, "the GPU waits while the link is busy"}},
        {{"sm_util_pct", true, 90, 0.5, "the GPU is busy anyway: the copies overlap compute"}},
        "The busier direction of PCIe traffic (dmon rxpci/txpci; DCGM PCITX/PCIRX, see DCGM profiling metrics) above "
        "85 % of the link's achievable per-direction rate on average, which is 80 % of the nominal rate (PCIe Gen3 "
        "0.985 GB/s per lane per direction, doubling each generation; nvbandwidth measures 88 % on Gen5 x16): "
        "transfers queue. The link's size comes from --query-gpu's pcie.link.gen.max and pcie.link.width.max, "
        "else from --gpu's catalog entry. DCGM's PCIe bytes include protocol headers, so they read a little high.",
        {"pin host memory (pin_memory=True) and copy with non_blocking=True so transfers overlap "
         "compute",
         "move fewer bytes: send uint8 images rather than float32 and normalise on the GPU",
         "keep data that is reused (embeddings, a small dataset) resident on the GPU",
         "check the link runs at full width and generation (`gpusel verify`)"},
        false,
        "a faster GPU moves no more bytes over the same link; a host with a faster PCIe "
        "generation would"});
    rules.push_back(
        DiagnosisRule{"cpu-jpeg-decode",
                      "input-pipeline",
                      Severity::error,
                      "JPEG decoding on the CPU",
                      {{"cpu_jpeg_decode_pct", true, 40}},
                      {signals.gpu_waits, signals.cpu_saturated},
                      {signals.gpu_busy},
                      "More than 40 % of the profiled CPU samples in libjpeg / libturbojpeg / PIL's _imaging: "
                      "image decoding dominates the host work, and the GPU's nvJPEG decoder can take it over "
                      "(NVIDIA DALI).",
                      {"decode JPEGs on the GPU: NVIDIA DALI, or torchvision.io.decode_jpeg(device='cuda')",
                       "store images pre-decoded at training resolution (LMDB, Parquet, WebDataset)",
                       "use a SIMD build of the decoder (libjpeg-turbo, Pillow-SIMD) if decoding must stay on "
                       "the CPU"},
                      false,
                      "a faster GPU would wait on the same decoder"});
    rules.push_back(
        DiagnosisRule{"cpu-copy-mmap",
                      "input-pipeline",
                      Severity::warning,
                      "storage reads (memory copies and page faults)",
                      {{"cpu_copy_mmap_pct", true, 30}},
                      {signals.gpu_waits},
                      {signals.gpu_busy},
                      "More than 30 % of the profiled CPU samples in memcpy/memmove, kernel copies to user "
                      "space and page-fault handling of mapped files: the host spends its time moving bytes "
                      "in from storage rather than preparing samples.",
                      {"put the dataset on local NVMe rather than network storage",
                       "preload the dataset into RAM (page cache or a RAM disk) when it fits",
                       "read large sequential shards (WebDataset, TFRecord) instead of many small files",
                       "avoid extra copies: memory-map once and wrap with torch.from_numpy"},
                      false,
                      "a faster GPU would wait on the same storage"});
}

// Where the GPUs sit and how they talk: host paths, NUMA, NVLink, a straggler.
void add_topology_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-peers-through-host",
        "topology",
        Severity::warning,
        "GPU-to-GPU traffic through the host",
        {{"gpu_pairs_through_host_pct", true, 0}},
        {signals.gpu_waits},
        {},
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
        {{"gpu_pairs_through_host_pct", true, 0, 0.5, "pairs of the job's GPUs talk over PHB, NODE or SYS"},
         signals.gpu_waits},
        {},
        "The job's GPUs sit on more than one NUMA node (nvidia-smi topo -m, NUMA Affinity) while one "
        "node alone has enough GPUs for the job: host memory traffic and GPU peer traffic cross the "
        "CPU interconnect without need.",
        {"pick the job's GPUs from one NUMA node (CUDA_VISIBLE_DEVICES)",
         "bind each rank's threads and memory to its GPU's node: numactl --cpunodebind=N --membind=N"},
        false,
        "placement, not the GPU, is the issue"});
    rules.push_back(DiagnosisRule{
        "nvlink-busy",
        "communication",
        Severity::warning,
        "GPU-to-GPU communication over NVLink",
        {{"sm_util_pct", false, 80}, {"nvlink_link_use_pct", true, 70}},
        {{"dram_active_pct", false, 30, 0.5, "the GPU's memory idles: it waits rather than computes"}},
        {},
        "The GPUs compute less than 80 % of the time while NVLink carries more than 70 % of its achievable rate "
        "(DCGM 1011/1012 NVLink bytes, both directions, over 80 % of the catalog's bidirectional bandwidth, see "
        "nccl-tests bus bandwidth): the job waits on collectives. Needs --gpu for the link's size.",
        {"overlap communication with compute (DDP bucket_cap_mb, FSDP prefetch, async tensor parallelism)",
         "communicate less: gradient accumulation, a larger data-parallel micro-batch, less tensor parallelism",
         "compress gradients (bf16 all-reduce) or shard differently (ZeRO stage, pipeline stages)"},
        false,
        "a faster GPU waits longer on the same links; more NVLink bandwidth would help"});
    rules.push_back(DiagnosisRule{
        "gpu-straggler",
        "load-imbalance",
        Severity::warning,
        "GPUs of one job that disagree",
        {{"gpu_busy_spread_pct", true, 20}},
        {},
        {},
        "In a synchronous multi-GPU job every GPU waits for the slowest at each collective, so their utilisation "
        "should match within a few points. A spread over 20 points between the busiest and the idlest GPU means "
        "one rank does more work or runs slower (thermal or power throttling, a narrower link, an uneven shard).",
        {"look at the outlier GPU's clocks, power and temperature (dmon -s pc) and its PCIe link (`gpusel verify`)",
         "balance the work: equal shards, equal sequence lengths per rank (bucketing), no rank-0-only work",
         "leave the GPU out if it is degraded"},
        false,
        "the others wait for one GPU; replacing all of them does not remove the imbalance"});
}

// The GPU itself is the limit (memory bandwidth, tensor pipes, compute), or nothing is.
void add_gpu_bound_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-bound-memory",
        "memory-bandwidth",
        Severity::info,
        "the GPU itself, limited by memory bandwidth",
        {{"sm_util_pct", true, 90}, {"dram_active_pct", true, 60}},
        {},
        {{"tensor_active_pct", true, 50, 0.5, "the tensor pipes are busy as well"}},
        "A kernel runs more than 90 % of the time (nvidia-smi --help-query-gpu) and the memory interface is active "
        "more than "
        "60 % of cycles (DCGM profiling metrics): the GPU is the bottleneck and moves bytes more than it computes "
        "(decode-heavy inference, small batches, elementwise work). 60 %: sustained DRAM activity "
        "tops out below 100 % in practice, so 60 % already means most of what is reachable.",
        {"a GPU with more memory bandwidth (HBM3/HBM3e parts) helps most",
         "cut memory traffic: fused kernels, FlashAttention, larger batches per weight read",
         "store weights and KV cache in fewer bits (fp8/int8) to move fewer bytes"},
        true,
        "one with more memory bandwidth"});
    rules.push_back(DiagnosisRule{
        "gpu-bound-tensor",
        "compute",
        Severity::info,
        "the GPU itself, limited by tensor-core compute",
        {{"sm_util_pct", true, 90}, {"tensor_active_pct", true, 50}},
        {{"dram_active_pct", false, 60, 0.5, "the memory interface is not the limit"}},
        {{"dram_active_pct", true, 60, 0.5, "the memory interface is busy as well"}},
        "A kernel runs more than 90 % of the time and the tensor (HMMA) pipes are active more than half of the "
        "cycles (DCGM 1004, DCGM profiling metrics): the GPU spends its time in matrix math, the best case for a "
        "GPU job. dcgmproftester's tensor-core load shows 0.93 (DCGM User Guide).",
        {"a GPU with more dense tensor FLOP/s at the precision used",
         "a lower precision the model tolerates (fp8 with Transformer Engine)",
         "larger matrices per kernel (batch, fused projections) if tensor activity is below about 0.8"},
        true,
        "one with more tensor-core FLOP/s at the precision used"});
    rules.push_back(DiagnosisRule{
        "gpu-bound-compute",
        "compute",
        Severity::info,
        "the GPU itself, limited by compute",
        {{"sm_util_pct", true, 90}, {"dram_active_pct", false, 60}},
        {{"sm_active_pct", true, 80, 0.5, "the SMs are active most cycles (DCGM 1002)"}},
        {signals.tensor_busy},
        "A kernel runs more than 90 % of the time (nvidia-smi --help-query-gpu) while the memory interface is active "
        "less "
        "than 60 % of cycles (DCGM profiling metrics): the GPU is the bottleneck and computes more than it moves "
        "bytes. Utilisation says a kernel was running, not how fast; DCGM's SM and tensor activity "
        "(fields 1002, 1004) show how much of the GPU was used.",
        {"a GPU with more dense FLOP/s at the precision used (bf16/fp8 tensor cores)",
         "use tensor-core precisions (bf16; fp8 with Transformer Engine) if still in fp32/tf32",
         "torch.compile or fused kernels to raise achieved FLOP/s"},
        true,
        "one with more compute at the precision used"});
    rules.push_back(
        DiagnosisRule{"healthy",
                      "healthy",
                      Severity::info,
                      "nothing found",
                      {},
                      {},
                      {},
                      "Emitted when no rule that could be evaluated found a plausible cause.",
                      {"nothing to fix from this telemetry; capture longer or add inputs (--perf, --cpu, --topo) "
                       "to check more"},
                      false,
                      "nothing here points at the GPU"});
}

std::vector<DiagnosisRule> build_rules() {
    const SharedSignals signals = shared_signals();
    std::vector<DiagnosisRule> rules;
    add_idle_and_input_starved_rules(rules, signals);
    add_host_side_rules(rules, signals);
    add_topology_rules(rules, signals);
    add_gpu_bound_rules(rules, signals);
    return rules;
}

struct Series {
    std::string metric;  // the metric actually used (may stand in for the rule's)
    std::string source;
    std::vector<double> values;
};

std::string source_of(TelemetryKind kind, const std::string& file) {
    return fmt::format("{} {}", to_string(kind), file);
}

bool in_job(const std::vector<int>& job, int gpu) {
    return std::find(job.begin(), job.end(), gpu) != job.end();
}

// GPU inputs, most precise first: DCGM (dcgmi, then the exporter through Prometheus), then
// dmon, then --query-gpu.
std::vector<const GpuTelemetry*> gpu_inputs(const DiagnoseInputs& in) {
    std::vector<const GpuTelemetry*> inputs;
    for (const std::optional<GpuTelemetry>* t : {&in.dcgm, &in.prometheus, &in.dmon, &in.query}) {
        if (*t) {
            inputs.push_back(&**t);
        }
    }
    return inputs;
}

// Which samples of each GPU input belong to the steady state (warm-up and tail left out).
using SteadyMask = std::map<const GpuTelemetry*, std::vector<bool>>;

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

// GPU utilisation: the share of time a kernel ran, else DCGM's graphics-engine activity.
std::optional<GpuMetric> busy_metric(const GpuTelemetry& t) {
    if (t.has(GpuMetric::sm_util_pct)) {
        return GpuMetric::sm_util_pct;
    }
    if (t.has(GpuMetric::gr_engine_active_pct)) {
        return GpuMetric::gr_engine_active_pct;
    }
    return std::nullopt;
}

// Framebuffer in use as a percentage of its size. The size comes from the same sample
// (total, or used + free), else from another input's total for the same GPU, else --gpu.
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

// NVLink traffic (both directions) over the achievable share of the catalog's bidirectional
// bandwidth per GPU. DCGM 1011/1012 are the only source; the size needs --gpu.
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

std::string fmt_pct(double value) {
    return fmt::format("{:.0f} %", value);
}

// Seconds of a printed time: a Unix time (Prometheus), or the HH:MM:SS[.fff] at the end of
// dmon's -o T / DT and --query-gpu's timestamp. nullopt for anything else.
std::optional<double> seconds_of(const std::string& time) {
    if (time.empty()) {
        return std::nullopt;
    }
    if (time.find_first_not_of("0123456789.") == std::string::npos) {
        return std::strtod(time.c_str(), nullptr);
    }
    const std::size_t space = time.rfind(' ');
    const std::string clock = space == std::string::npos ? time : time.substr(space + 1);
    int h = 0;
    int m = 0;
    double s = 0;
    char c1 = 0;
    char c2 = 0;
    if (std::sscanf(clock.c_str(), "%d%c%d%c%lf", &h, &c1, &m, &c2, &s) != 5 || c1 != ':' || c2 != ':' || h < 0 ||
        h > 23 || m < 0 || m > 59 || s < 0 || s >= 61) {
        return std::nullopt;
    }
    return h * 3600.0 + m * 60.0 + s;
}

struct SteadyState {
    SteadyMask mask;
    CaptureQuality capture;
};

// One GPU's busy samples in one input, in capture order: their rows and values.
struct BusySeries {
    std::vector<std::size_t> rows;
    std::vector<double> values;
};

BusySeries busy_series(const GpuTelemetry& t, int gpu, GpuMetric busy) {
    BusySeries series;
    for (std::size_t i = 0; i < t.samples.size(); ++i) {
        const GpuSample& sample = t.samples[i];
        if (sample.entity == GpuEntity::gpu && sample.gpu == gpu && sample.value(busy)) {
            series.rows.push_back(i);
            series.values.push_back(*sample.value(busy));
        }
    }
    return series;
}

// Leaves one GPU's warm-up and tail out of `keep`, with a phase note for each; from the first
// input that has any, the GPU's steady mean and the capture's duration.
void trim_warm_up_and_tail(const GpuTelemetry& t, int gpu, GpuMetric busy, bool first_input, std::vector<bool>& keep,
                           CaptureQuality& capture) {
    const BusySeries series = busy_series(t, gpu, busy);
    const std::vector<std::size_t>& rows = series.rows;
    const std::vector<double>& values = series.values;
    if (values.empty()) {
        return;
    }
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::size_t first = 0;
    std::size_t last = values.size();
    if (median >= 10) {
        while (first < values.size() && values[first] < median / 2) {
            ++first;
        }
        while (last > first && values[last - 1] < median / 2) {
            --last;
        }
    }
    const auto phase = [&](const char* name, std::size_t from, std::size_t to) {
        if (to > from) {
            capture.phases.push_back(fmt::format(
                "GPU {}: {} of {} sample{} (lines {}-{}) below half the median utilisation ({:.0f} %), left "
                "out",
                gpu, name, to - from, to - from == 1 ? "" : "s", t.samples[rows[from]].line,
                t.samples[rows[to - 1]].line, median));
        }
        for (std::size_t i = from; i < to; ++i) {
            keep[rows[i]] = false;
        }
    };
    phase("warm-up", 0, first);
    phase("tail", last, values.size());
    if (!first_input) {
        return;
    }
    const std::vector<double> kept(values.begin() + static_cast<std::ptrdiff_t>(first),
                                   values.begin() + static_cast<std::ptrdiff_t>(last));
    capture.per_gpu.push_back(GpuBusy{gpu, summarize(kept).mean, kept.size()});
    const std::optional<double> from = seconds_of(t.samples[rows[first]].time);
    const std::optional<double> to = seconds_of(t.samples[rows[last - 1]].time);
    if (from && to && last - first > 1) {
        double span = *to - *from;
        span += span < 0 ? 86400 : 0;  // past midnight
        capture.duration_s = std::max(capture.duration_s.value_or(0), span);
    }
}

// Warm-up and tail: the leading and trailing samples of a GPU below half the median
// utilisation of that GPU. A job that starts or stops inside the capture shows them (the
// dcgmproftester capture of the DCGM User Guide starts with three zero samples); leaving them
// in would pull the mean under thresholds the steady state is above. Nothing is trimmed when
// the median is under 10 %: an idle GPU has no steady state to isolate.
SteadyState find_steady_state(const DiagnoseInputs& in, const std::vector<int>& job) {
    SteadyState result;
    CaptureQuality& capture = result.capture;
    bool first_input = true;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        const std::optional<GpuMetric> busy = busy_metric(*t);
        std::vector<bool>& keep = result.mask[t];
        keep.assign(t->samples.size(), true);
        if (!busy) {
            continue;
        }
        for (const int gpu : job) {
            trim_warm_up_and_tail(*t, gpu, *busy, first_input, keep, capture);
        }
        first_input = first_input && capture.per_gpu.empty();
    }
    if (!capture.per_gpu.empty()) {
        capture.samples_per_gpu = capture.per_gpu.front().samples;
        for (const GpuBusy& gpu : capture.per_gpu) {
            capture.samples_per_gpu = std::min(capture.samples_per_gpu, gpu.samples);
        }
        capture.too_short = capture.samples_per_gpu < min_capture_samples ||
                            (capture.duration_s && *capture.duration_s < min_capture_seconds);
        if (capture.too_short) {
            capture.warnings.push_back(
                fmt::format("the capture is too short to judge: {} steady sample{} per GPU{}; verdicts need at least "
                            "{} samples and "
                            "{:.0f} s (a few minutes is better), so every confidence is capped at low",
                            capture.samples_per_gpu, capture.samples_per_gpu == 1 ? "" : "s",
                            capture.duration_s ? fmt::format(" over {:.0f} s", *capture.duration_s) : "",
                            min_capture_samples, min_capture_seconds));
        }
    }
    return result;
}

Confidence confidence_of(double score) {
    if (score <= 0) {
        return Confidence::unlikely;
    }
    if (score < 1) {
        return Confidence::low;
    }
    return score < 1.5 ? Confidence::medium : Confidence::high;
}

// Which capture separates two plausible causes, by bottleneck pair (either order).
std::string tell_apart_hint(const std::string& a, const std::string& b) {
    static const std::map<std::pair<std::string, std::string>, std::string> hints = {
        {{"input-pipeline", "memory-capacity"},
         "torch.cuda.max_memory_allocated() against nvidia-smi's memory.used (is the memory used, or only cached?) "
         "and `mpstat -P ALL 1` (is one loader core saturated while the average idles?)"},
        {{"input-pipeline", "host-transfer"},
         "`dcgmi dmon -e 1009,1010` with `--query-gpu=pcie.link.gen.max,pcie.link.width.max` (is the link near its "
         "achievable rate?) and `perf record` of the DataLoader workers"},
        {{"input-pipeline", "topology"},
         "`dcgmi dmon -e 1011,1012` (NVLink bytes) with NCCL_DEBUG=INFO, or the same job on one GPU: if one GPU "
         "is as busy as now, the wait is input, not communication"},
        {{"input-pipeline", "communication"},
         "the same job on one GPU: if it is as busy as now, the wait is input, not communication"},
        {{"input-pipeline", "load-imbalance"},
         "`nvidia-smi dmon -s pucm` of every GPU: a slow GPU shows lower clocks or higher temperature"},
        {{"compute", "memory-bandwidth"}, "`dcgmi dmon -e 1002,1004,1005` (SM, tensor and DRAM activity)"},
        {{"host-transfer", "memory-capacity"},
         "torch.cuda.max_memory_allocated(): offloading (CPU optimizer state, paging) moves bytes over PCIe"},
        {{"memory-capacity", "topology"},
         "`dcgmi dmon -e 1011,1012` (NVLink bytes) and torch.cuda.max_memory_allocated()"},
        {{"host-transfer", "topology"}, "`dcgmi dmon -e 1009,1010,1011,1012`: PCIe and NVLink bytes side by side"},
    };
    auto found = hints.find({a, b});
    if (found == hints.end()) {
        found = hints.find({b, a});
    }
    return found == hints.end() ? std::string() : found->second;
}

// Every evidence series and single figure a rule may ask for, or the reason it is missing.
struct EvidenceTable {
    std::map<std::string, Series> series;
    std::map<std::string, Evidence> single;  // profile shares, topology counts: no percentiles
    std::map<std::string, std::string> missing;
    std::vector<std::string> pair_details;
    std::vector<std::string> numa_details;
    std::vector<std::string> busy_details;  // per GPU, for the straggler verdict
    bool numa_regroup_possible = false;

    // The evidence for `metric` tested against a threshold; nullopt when it is missing.
    std::optional<Evidence> test(const std::string& metric, bool above, double value) const;
};

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

void add_topology_evidence(const DiagnoseInputs& in, const std::vector<int>& job, EvidenceTable& table,
                           std::vector<std::string>& notes) {
    if (!in.topology) {
        table.missing["gpu_pairs_through_host_pct"] = table.missing["numa_nodes_spanned"] =
            "no topology: pass --topo (nvidia-smi topo -m)";
        return;
    }
    std::vector<int> placed;
    for (const int gpu : job) {
        if (in.topology->gpu(gpu) != nullptr) {
            placed.push_back(gpu);
        } else {
            notes.push_back(fmt::format("GPU {} is in the GPU telemetry but not in {}", gpu, in.topology->file));
        }
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
            const TopoLink* link = in.topology->gpu_link(placed[i], placed[j]);
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
        const std::optional<int> node = in.topology->gpu(gpu)->numa_node;
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
        table.numa_details.push_back(fmt::format("GPU{}: NUMA node {}", gpu, *in.topology->gpu(gpu)->numa_node));
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

void round_evidence(Evidence& evidence) {
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

// The rule's conditions, supporting and contradicting signals, and score. nullopt with
// `skip_reason` set when a condition's evidence is missing; a verdict whose conditions do not
// all hold is returned with `fired` false.
std::optional<Verdict> weigh_rule(const DiagnosisRule& rule, const EvidenceTable& table, bool& fired,
                                  std::string& skip_reason) {
    Verdict verdict;
    verdict.rule = &rule;
    fired = true;
    for (const RuleThreshold& threshold : rule.thresholds) {
        std::optional<Evidence> evidence = table.test(threshold.metric, threshold.above, threshold.value);
        if (!evidence) {
            const auto reason = table.missing.find(threshold.metric);
            skip_reason = reason != table.missing.end() ? reason->second : "no data for " + threshold.metric;
            return std::nullopt;
        }
        fired = fired && fires(*evidence);
        verdict.evidence.push_back(std::move(*evidence));
    }
    verdict.score = 1;
    for (const auto* signals : {&rule.supports, &rule.against}) {
        const bool supports = signals == &rule.supports;
        for (const RuleSignal& signal : *signals) {
            if (std::optional<Evidence> evidence = table.test(signal.metric, signal.above, signal.value)) {
                SignalEvidence measured{*evidence, signal.weight, signal.meaning, fires(*evidence)};
                round_evidence(measured.evidence);
                if (measured.holds) {
                    verdict.score += supports ? signal.weight : -signal.weight;
                }
                (supports ? verdict.supporting : verdict.contradicting).push_back(std::move(measured));
            }
        }
    }
    verdict.confidence = confidence_of(verdict.score);
    return verdict;
}

// One sentence with the numbers that matter, the details, and the expected gain.
void describe(Verdict& verdict, const EvidenceTable& table, const std::vector<int>& job) {
    const std::string& id = verdict.rule->id;
    const double first = verdict.evidence[0].mean;
    const double second = verdict.evidence.size() > 1 ? verdict.evidence[1].mean : 0;
    const std::string stand_in = verdict.evidence.size() > 1 ? verdict.evidence[1].metric : "";
    const bool one = job.size() == 1;
    const std::string gpus_are = one ? "The GPU is" : "The GPUs are";
    const std::string their = one ? "its" : "their";
    const std::string them = one ? "it" : "them";
    const std::string they_wait = one ? "it waits" : "they wait";
    const std::string memory_word =
        stand_in == "mem_util_pct" ? "memory (nvidia-smi memory utilisation)" : "memory interface";
    if (id == "no-job-running") {
        verdict.summary = fmt::format("{} busy {} of the time: no job seems to be running during the capture.",
                                      gpus_are, fmt_pct(first));
    } else if (id == "gpu-util-low-cpu-high") {
        verdict.summary = fmt::format(
            "{} busy {} of the time while the host CPUs are {} busy: the CPU side of the "
            "input pipeline cannot keep up.",
            gpus_are, fmt_pct(first), fmt_pct(second));
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-util-low-dram-low") {
        verdict.summary = fmt::format(
            "{} busy {} of the time and {} {} {}: {} for input, not for compute or "
            "memory.",
            gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second), they_wait);
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-util-low-fb-full") {
        verdict.summary = fmt::format(
            "{} busy {} of the time with {} of {} memory in use: the batch that fits is "
            "too small to keep {} busy.",
            gpus_are, fmt_pct(first), fmt_pct(second), their, them);
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "pcie-saturated") {
        verdict.summary = fmt::format(
            "The PCIe link carries {} of its achievable rate on average: host-device "
            "transfers limit the job.",
            fmt_pct(first));
        verdict.expected_gain = verdict.evidence[0].share_beyond.value_or(0);
    } else if (id == "cpu-jpeg-decode") {
        verdict.summary = fmt::format(
            "{:.1f} % of the profiled CPU samples decode JPEGs (libjpeg/PIL): decoding on the "
            "CPU limits the input pipeline.",
            first);
        verdict.expected_gain = first / 100;
    } else if (id == "cpu-copy-mmap") {
        verdict.summary = fmt::format(
            "{:.1f} % of the profiled CPU samples copy memory or handle page faults "
            "(memcpy/mmap): reading the data limits the input pipeline.",
            first);
        verdict.expected_gain = first / 100;
    } else if (id == "gpu-peers-through-host") {
        verdict.summary = fmt::format(
            "{} of {} GPU pairs of the job talk through the host (PHB, NODE or SYS) rather "
            "than NVLink or a PCIe switch.",
            table.pair_details.size(), verdict.evidence[0].samples);
        const std::size_t shown = std::min<std::size_t>(table.pair_details.size(), 8);
        verdict.details.assign(table.pair_details.begin(),
                               table.pair_details.begin() + static_cast<std::ptrdiff_t>(shown));
        if (table.pair_details.size() > shown) {
            verdict.details.push_back(fmt::format("... and {} more pairs", table.pair_details.size() - shown));
        }
    } else if (id == "gpus-split-numa") {
        verdict.summary = fmt::format(
            "The job's {} GPUs sit on {} NUMA nodes although one node alone has enough "
            "GPUs for it.",
            verdict.evidence[0].samples, static_cast<int>(first));
        verdict.details = table.numa_details;
    } else if (id == "nvlink-busy") {
        verdict.summary = fmt::format(
            "{} busy {} of the time while NVLink carries {} of its achievable rate: {} on "
            "GPU-to-GPU communication.",
            gpus_are, fmt_pct(first), fmt_pct(second), they_wait);
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-straggler") {
        verdict.summary = fmt::format(
            "The job's GPUs disagree: their utilisation spans {} points; in a synchronous "
            "job the others wait for the slowest.",
            fmt::format("{:.0f}", first));
        verdict.details = table.busy_details;
    } else if (id == "gpu-bound-memory") {
        verdict.summary = fmt::format("{} busy {} of the time and {} {} {}: the job is bound by memory bandwidth.",
                                      gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second));
    } else if (id == "gpu-bound-tensor") {
        verdict.summary = fmt::format(
            "{} busy {} of the time with the tensor pipes active {}: the job is bound by "
            "tensor-core compute.",
            gpus_are, fmt_pct(first), fmt_pct(second));
    } else if (id == "gpu-bound-compute") {
        verdict.summary = fmt::format("{} busy {} of the time with {} {} at {}: the job is bound by compute.", gpus_are,
                                      fmt_pct(first), their, memory_word, fmt_pct(second));
    }
    for (Evidence& evidence : verdict.evidence) {
        round_evidence(evidence);
    }
    verdict.expected_gain = rounded(std::clamp(verdict.expected_gain, 0.0, 1.0), 4);
}

bool ranks_before(const Verdict& a, const Verdict& b) {
    if (a.confidence != b.confidence) {
        return static_cast<int>(a.confidence) < static_cast<int>(b.confidence);
    }
    if (a.rule->severity != b.rule->severity) {
        return static_cast<int>(a.rule->severity) < static_cast<int>(b.rule->severity);
    }
    if (a.expected_gain != b.expected_gain) {
        return a.expected_gain > b.expected_gain;
    }
    return a.score > b.score;
}

// When the top two plausible causes differ, the capture that would tell them apart.
std::vector<std::string> tell_apart(const std::vector<Verdict>& verdicts) {
    std::vector<std::string> hints;
    if (verdicts.size() < 2) {
        return hints;
    }
    const DiagnosisRule& a = *verdicts[0].rule;
    for (std::size_t i = 1; i < verdicts.size() && hints.empty(); ++i) {
        const DiagnosisRule& b = *verdicts[i].rule;
        if (b.bottleneck == a.bottleneck || verdicts[i].confidence == Confidence::low) {
            continue;
        }
        const std::string hint = tell_apart_hint(a.bottleneck, b.bottleneck);
        hints.push_back(
            fmt::format("{} ({}) or {} ({}): {}", a.bottleneck, a.id, b.bottleneck, b.id,
                        hint.empty() ? "a longer capture with the inputs listed under \"not evaluated\"" : hint));
    }
    return hints;
}

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
    for (const std::optional<GpuTelemetry>* t : {&in.dmon, &in.dcgm, &in.prometheus, &in.query}) {
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
        diagnosis.inputs.push_back(
            InputSummary{TelemetryKind::perf_report, in.perf->file, in.perf->symbols.size(), {}});
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

    const SteadyState steady_state = find_steady_state(in, job_gpus);
    diagnosis.capture = steady_state.capture;
    const EvidenceTable table = gather_evidence(in, job_gpus, steady_state, diagnosis.notes);
    if (const auto busy = table.series.find("sm_util_pct"); busy != table.series.end()) {
        diagnosis.gpu_busy_pct = summarize(busy->second.values).mean;
        diagnosis.gpu_busy_source = busy->second.source;
    }

    // An idle capture has nothing to diagnose: its verdict alone, the other rules are not run.
    std::size_t evaluated = 0;
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        if (rule.thresholds.empty()) {
            continue;  // healthy, decided below
        }
        if (diagnosis.capture.idle) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, "no job seems to be running during the capture"});
            continue;
        }
        bool fired = false;
        std::string skip_reason;
        std::optional<Verdict> verdict = weigh_rule(rule, table, fired, skip_reason);
        if (!verdict) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, skip_reason});
            continue;
        }
        ++evaluated;
        if (rule.id == "gpus-split-numa" && !table.numa_regroup_possible) {
            fired = false;  // spanning nodes is unavoidable when no node holds the whole job
        }
        if (!fired) {
            continue;
        }
        describe(*verdict, table, job_gpus);
        if (diagnosis.capture.too_short && verdict->confidence != Confidence::unlikely) {
            verdict->confidence = Confidence::low;
        }
        if (verdict->confidence == Confidence::unlikely) {
            diagnosis.ruled_out.push_back(std::move(*verdict));
        } else {
            diagnosis.capture.idle = diagnosis.capture.idle || rule.id == "no-job-running";
            diagnosis.verdicts.push_back(std::move(*verdict));
        }
    }
    if (diagnosis.capture.idle) {
        evaluated = 1;
    }

    if (diagnosis.verdicts.empty() && evaluated > 0) {
        Verdict healthy;
        healthy.rule = find_rule("healthy");
        healthy.score = 1;
        healthy.confidence = diagnosis.capture.too_short ? Confidence::low : Confidence::medium;
        healthy.summary =
            fmt::format("None of the {} rules that could be evaluated found a plausible cause.", evaluated);
        if (const auto busy = table.series.find("sm_util_pct"); busy != table.series.end()) {
            healthy.details.push_back(fmt::format("GPU busy ({}) averages {}, from {}", busy->second.metric,
                                                  fmt_pct(summarize(busy->second.values).mean), busy->second.source));
        }
        diagnosis.verdicts.push_back(std::move(healthy));
    }
    std::stable_sort(diagnosis.verdicts.begin(), diagnosis.verdicts.end(), ranks_before);
    std::stable_sort(diagnosis.ruled_out.begin(), diagnosis.ruled_out.end(), ranks_before);
    diagnosis.tell_apart = tell_apart(diagnosis.verdicts);
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
    const FittingLayout fitting = fitting_layout(workload, gpu, count, ServingStack::automatic);
    if (!fitting.found()) {
        return std::nullopt;
    }
    try {
        PerfQuery query;
        query.layout = fitting.layout;
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
    } catch (const InputError&) {
        // A catalog GPU with no matrix rate the model can use (perf.cpp, matmul_peak_flops_per_s):
        // a flaw of the catalog, reported where the catalog is used, not a reason to stop diagnosing.
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
        const std::optional<Throughput> there =
            unobstructed_throughput(unobstructed, other, worth.gpu_count, efficiency);
        if (there && there->unit == here->unit && there->per_s > worth.fastest_per_s) {
            worth.fastest_per_s = there->per_s;
            worth.fastest_gpu = other.id;
        }
    }
    worth.note = fmt::format(
        "gpusel's performance model for {} x {} with nothing outside the GPUs limiting; 'now' "
        "scales it by the observed GPU utilisation over the {:.0f} % the model predicts",
        worth.gpu_count, gpu->id, here->busy_share * 100);
    return worth;
}

}  // namespace gpusel
