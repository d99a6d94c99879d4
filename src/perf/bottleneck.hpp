#pragma once
// Predicted bottleneck: which resource binds a candidate, with its share of the time, the
// utilisation the GPU would show and the remedy that pays most. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpusel {

enum class Resource {
    compute,
    memory_bandwidth,
    memory_capacity,
    interconnect,     // GPU-to-GPU collectives (NVLink, PCIe peer, network)
    host_link,        // host-to-device copies over PCIe (offload, input batches)
    input_pipeline,   // CPU decode / storage cannot feed the GPUs
    launch_overhead,  // per-kernel launch and synchronisation gaps
};

// What a job waits for, one vocabulary for the bottleneck perf predicts (through from_resource)
// and the verdict `gpusel diagnose` observes (DiagnosisRule::bottleneck), so the two compare as
// values. The first seven are perf's resources; launch_overhead is predicted only (no diagnose
// rule names it: in utilisation counters launch gaps look like any other wait, a trace tells
// them apart); the last four are verdicts perf has no resource for.
enum class ObservedBottleneck {
    compute,
    memory_bandwidth,
    memory_capacity,
    communication,  // Resource::interconnect
    host_transfer,  // Resource::host_link
    input_pipeline,
    launch_overhead,    // predicted only
    topology,           // the job's GPUs talk through the host, or span NUMA nodes
    load_imbalance,     // one GPU busier than the others
    idle,               // no job seems to be running
    healthy,            // no rule found a plausible cause
    under_loaded,       // a serving replica idles for want of requests (diagnose only)
    insufficient_data,  // the capture cannot tell: no GPU utilisation (diagnose only)
};

// The one name table, the names every output prints (perf's `resource`, diagnose's `bottleneck`).
inline constexpr std::pair<ObservedBottleneck, std::string_view> observed_bottleneck_names[] = {
    {ObservedBottleneck::compute, "compute"},
    {ObservedBottleneck::memory_bandwidth, "memory-bandwidth"},
    {ObservedBottleneck::memory_capacity, "memory-capacity"},
    {ObservedBottleneck::communication, "communication"},
    {ObservedBottleneck::host_transfer, "host-transfer"},
    {ObservedBottleneck::input_pipeline, "input-pipeline"},
    {ObservedBottleneck::launch_overhead, "launch-overhead"},
    {ObservedBottleneck::topology, "topology"},
    {ObservedBottleneck::load_imbalance, "load-imbalance"},
    {ObservedBottleneck::idle, "idle"},
    {ObservedBottleneck::healthy, "healthy"},
    {ObservedBottleneck::under_loaded, "under-loaded"},
    {ObservedBottleneck::insufficient_data, "insufficient-data"},
};

std::string_view to_string(ObservedBottleneck bottleneck);  // its name in observed_bottleneck_names
// The bottleneck of that name; nullopt for any other text.
std::optional<ObservedBottleneck> parse_observed_bottleneck(std::string_view name);

// `resource` in diagnose's terms, the verdict `gpusel diagnose` gives when it binds:
// interconnect is communication, host_link host_transfer, the others their namesakes
// (launch_overhead, which no diagnose rule names, included).
ObservedBottleneck from_resource(Resource resource);

// The name of from_resource(resource): "compute", "memory-bandwidth", "memory-capacity",
// "communication", "host-transfer", "input-pipeline", "launch-overhead".
std::string_view to_string(Resource resource);

// Whose time a bottleneck's share is of.
enum class BottleneckPhase {
    none,        // no speed estimate (printed as an empty name)
    step,        // one training step
    full_batch,  // one full batch of a replica, prefill plus decode
    prefill,     // the prefill of the requests the TTFT target binds on
    decode,      // the decode steps the TPOT target binds on
    memory,      // memory capacity binds: the share is 1
};

// "", "step", "full batch", "prefill", "decode", "memory": the names the outputs print.
std::string_view to_string(BottleneckPhase phase);

struct Bottleneck {
    Resource resource = Resource::compute;
    BottleneckPhase phase = BottleneckPhase::none;
    double share = 0;            // share of that time spent on this resource, 0..1 (1 for memory capacity)
    double gpu_utilization = 0;  // what nvidia-smi's utilisation would show, 0..1
    std::string detail;          // the numbers that show it
    std::string remedy;          // the fix that pays most
};

// Seconds of one step (training: one optimizer step on one GPU; inference: one full batch on
// one replica, prefill plus decode) spent waiting on each resource. Each kernel's time is
// charged to the resource that bounds it.
struct ResourceTimes {
    double compute_s = 0;
    double memory_bandwidth_s = 0;
    double interconnect_s = 0;
    double host_link_s = 0;
    double input_pipeline_s = 0;
    double launch_overhead_s = 0;

    double total_s() const {
        return compute_s + memory_bandwidth_s + interconnect_s + host_link_s + input_pipeline_s + launch_overhead_s;
    }
};

// The resource with the largest share (ties: the order of Resource), its share, and the GPU
// utilisation: the share of time a kernel runs (input waits, host copies that are not
// overlapped and launch gaps leave the GPU idle). Detail and remedy are left empty for the
// caller, who knows the workload. All-zero times give compute with share 0.
Bottleneck binding_resource(const ResourceTimes& times);

}  // namespace gpusel
