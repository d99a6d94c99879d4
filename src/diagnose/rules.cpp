// Observed-bottleneck rules. The table in diagnosis_rules() is the one place where thresholds
// live; each entry carries the reasoning behind its numbers. docs/diagnose.md renders the same
// content for users.

#include <string_view>
#include <vector>

#include "diagnose/diagnose.hpp"

namespace gpusel {

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
        ObservedBottleneck::idle,
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
        "an idle GPU is not the limit",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpu-util-low-cpu-high",
        ObservedBottleneck::input_pipeline,
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
        "a faster GPU would wait on the same CPUs",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpu-util-low-dram-low",
        ObservedBottleneck::input_pipeline,
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
        "the GPU already waits most of the time; a faster one would wait longer",
        RuleScope::not_serving,
        "a serving job waits for requests, not for a data loader: see under-loaded"});
    rules.push_back(DiagnosisRule{
        "under-loaded",
        ObservedBottleneck::under_loaded,
        Severity::warning,
        "a serving replica with spare capacity",
        {{"sm_util_pct", false, 60}},
        {{"fb_used_pct", true, idle_fb_used_pct, 0.5,
          "memory is held: the engine is loaded and waits for requests (a paged engine reserves it at start-up)"}},
        {{"cpu_busy_pct", true, 85, 1,
          "saturated host CPUs: the engine's scheduler or tokenizer may be the wait (gpu-util-low-cpu-high)"},
         {"pcie_link_use_pct", true, 85, 0.5, "the PCIe link is near its achievable rate"}},
        "A serving engine (vLLM, SGLang, TensorRT-LLM, or any inference workload) computes when requests arrive: "
        "utilisation under 60 % means the replica idles 40 % of the time or more for want of requests, not for "
        "want of memory or data. Paged engines reserve a fixed share of the device at start-up (vLLM "
        "--gpu-memory-utilization, 0.9 by default; SGLang --mem-fraction-static; TensorRT-LLM "
        "free_gpu_memory_fraction), so a nearly full framebuffer is their pre-allocation, not pressure (vLLM "
        "docs, engine arguments). What the replica could carry: the request rate scaled by the utilisation "
        "headroom, a first-order and conservative figure for a batching engine.",
        {"send this replica more traffic, or run fewer replicas: the summary says what one replica could carry",
         "autoscale replicas on the engine's queue (vllm:num_requests_waiting) rather than keeping them warm",
         "share the GPU: a second model with a smaller gpu_memory_utilization each, or MIG for small models",
         "a smaller or cheaper GPU for this load (`gpusel plan` with the measured requests_per_s)"},
        false,
        "a faster GPU would idle more; a cheaper one may carry this load",
        RuleScope::serving_only,
        ""});
}

// Memory capacity and the host side: the PCIe link, JPEG decoding, storage reads.
void add_host_side_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-util-low-fb-full",
        ObservedBottleneck::memory_capacity,
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
        "one with more memory would; one that is only faster would not",
        RuleScope::not_serving,
        "a serving job: its framebuffer use is not read as memory pressure, and training remedies do not apply"});
    rules.push_back(DiagnosisRule{
        "pcie-saturated",
        ObservedBottleneck::host_transfer,
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
        "generation would",
        RuleScope::any,
        ""});
    rules.push_back(
        DiagnosisRule{"cpu-jpeg-decode",
                      ObservedBottleneck::input_pipeline,
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
                      "a faster GPU would wait on the same decoder",
                      RuleScope::any,
                      ""});
    rules.push_back(
        DiagnosisRule{"cpu-copy-mmap",
                      ObservedBottleneck::input_pipeline,
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
                      "a faster GPU would wait on the same storage",
                      RuleScope::any,
                      ""});
}

// Where the GPUs sit and how they talk: host paths, NUMA, NVLink, a straggler.
void add_topology_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-peers-through-host",
        ObservedBottleneck::topology,
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
        "a faster GPU waits longer on the same links; an NVLink (SXM) system would help",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpus-split-numa",
        ObservedBottleneck::topology,
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
        "placement, not the GPU, is the issue",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "nvlink-busy",
        ObservedBottleneck::communication,
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
        "a faster GPU waits longer on the same links; more NVLink bandwidth would help",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpu-straggler",
        ObservedBottleneck::load_imbalance,
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
        "the others wait for one GPU; replacing all of them does not remove the imbalance",
        RuleScope::any,
        ""});
}

// The GPU itself is the limit (memory bandwidth, tensor pipes, compute), or nothing is.
void add_gpu_bound_rules(std::vector<DiagnosisRule>& rules, const SharedSignals& signals) {
    rules.push_back(DiagnosisRule{
        "gpu-bound-memory",
        ObservedBottleneck::memory_bandwidth,
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
        "one with more memory bandwidth",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpu-bound-tensor",
        ObservedBottleneck::compute,
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
        "one with more tensor-core FLOP/s at the precision used",
        RuleScope::any,
        ""});
    rules.push_back(DiagnosisRule{
        "gpu-bound-compute",
        ObservedBottleneck::compute,
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
        "one with more compute at the precision used",
        RuleScope::any,
        ""});
    rules.push_back(
        DiagnosisRule{"healthy",
                      ObservedBottleneck::healthy,
                      Severity::info,
                      "nothing found",
                      {},
                      {},
                      {},
                      "Emitted when no rule that could be evaluated found a plausible cause.",
                      {"nothing to fix from this telemetry; capture longer or add inputs (--perf, --cpu, --topo) "
                       "to check more"},
                      false,
                      "nothing here points at the GPU",
                      RuleScope::any,
                      ""});
    rules.push_back(DiagnosisRule{
        "insufficient-data",
        ObservedBottleneck::insufficient_data,
        Severity::info,
        "the capture has no GPU utilisation",
        {},
        {},
        {},
        "Emitted instead of healthy when the capture holds no GPU utilisation (nvidia-smi utilization.gpu, dmon "
        "sm, DCGM 203 or 1001) and no rule found a plausible cause: whether the GPUs work or wait cannot be told "
        "from an inventory (names, memory totals, power limits) or host data alone.",
        {"capture utilisation while the job runs: `nvidia-smi dmon -s umt -o DT -d 1`, or `nvidia-smi "
         "--query-gpu=timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total --format=csv -l 1`",
         "or DCGM: `dcgmi dmon -e 203,204,1001,1002,1004,1005,250,252`"},
        false,
        "no evidence either way",
        RuleScope::any,
        ""});
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

}  // namespace

const std::vector<DiagnosisRule>& diagnosis_rules() {
    static const std::vector<DiagnosisRule> rules = build_rules();
    return rules;
}

const std::vector<std::string>& remedies_for(const DiagnosisRule& rule, bool serving) {
    // A server's host CPUs run the engine itself (HTTP front end, tokenizer, scheduler,
    // detokenizer): with the GPU waiting on them, the fixes are there, not in a data loader.
    static const std::vector<std::string> cpu_high_serving = {
        "give the engine more host cores and keep other work off them: its API server, tokenizer, scheduler and "
        "detokenizer run on the CPUs",
        "profile the host (`perf record -g -p PID`) to see whether tokenization, scheduling or the HTTP layer "
        "takes the time",
        "keep CUDA graphs on (vLLM: no --enforce-eager) so that each decode step costs the host one launch",
        "scale out the HTTP front end (more API-server processes) where the engine supports it"};
    if (serving && rule.id == "gpu-util-low-cpu-high") {
        return cpu_high_serving;
    }
    return rule.remedies;
}

const DiagnosisRule* find_rule(std::string_view id) {
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        if (rule.id == id) {
            return &rule;
        }
    }
    return nullptr;
}

}  // namespace gpusel
