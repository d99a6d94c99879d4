#pragma once
// The parts of `gpusel diagnose` shared by the files of src/diagnose/ and by nothing else:
//  - series.cpp:       the per-GPU telemetry series a rule reads (utilisation, framebuffer, PCIe,
//                      NVLink), steady-state samples only;
//  - steady_state.cpp: which samples are warm-up and tail, and the capture's quality;
//  - evidence.cpp:     every series and single figure a rule may ask for, or why it is missing;
//  - rules.cpp:        the rule table (thresholds and their sources);
//  - serving.cpp:      whether the job is a serving engine, and the load it serves;
//  - diagnose.cpp:     weighing each rule against the evidence into ranked verdicts.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/diagnose.hpp"

namespace gpusel::diagnose_detail {

struct Series {
    std::string metric;  // the metric actually used (may stand in for the rule's)
    std::string source;
    std::vector<double> values;
};

// Which samples of each GPU input belong to the steady state (warm-up and tail left out).
using SteadyMask = std::map<const GpuTelemetry*, std::vector<bool>>;

struct SteadyState {
    SteadyMask mask;
    CaptureQuality capture;
};

// ---------------------------------------------------------------------------------------
// Series (series.cpp)

// "KIND FILE": the source an evidence series names.
std::string source_of(TelemetryKind kind, const std::string& file);

// GPU inputs, most precise first: DCGM (dcgmi, then the exporter through Prometheus), then
// dmon, then --query-gpu.
std::vector<const GpuTelemetry*> gpu_inputs(const DiagnoseInputs& in);

// The first GPU input with samples of `metric` for the job's GPUs; nullopt when none has any.
std::optional<Series> gpu_metric_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                        GpuMetric metric);

// GPU utilisation: the share of time a kernel ran, else DCGM's graphics-engine activity.
std::optional<GpuMetric> busy_metric(const GpuTelemetry& t);

// Framebuffer in use as a percentage of its size. The size comes from the same sample
// (total, or used + free), else from another input's total for the same GPU, else --gpu.
// nullopt with `reason` set when no input gives it.
std::optional<Series> fb_used_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                     std::string& reason, std::vector<std::string>& notes);

// PCIe traffic (the busier direction) as a percentage of the achievable share of the link's
// nominal rate; nullopt with `reason` set when the traffic or the link size is missing.
std::optional<Series> pcie_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                  std::string& reason, std::vector<std::string>& notes);

// NVLink traffic (both directions) over the achievable share of the catalog's bidirectional
// bandwidth per GPU. DCGM 1011/1012 are the only source; the size needs --gpu.
std::optional<Series> nvlink_series(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyMask& mask,
                                    std::string& reason);

// ---------------------------------------------------------------------------------------
// The steady state (steady_state.cpp)

// Warm-up and tail: the leading and trailing samples of a GPU below half the median
// utilisation of that GPU. A job that starts or stops inside the capture shows them (the
// dcgmproftester capture of the DCGM User Guide starts with three zero samples); leaving them
// in would pull the mean under thresholds the steady state is above. Nothing is trimmed when
// the median is under 10 %: an idle GPU has no steady state to isolate.
SteadyState find_steady_state(const DiagnoseInputs& in, const std::vector<int>& job);

// ---------------------------------------------------------------------------------------
// Evidence (evidence.cpp)

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

// "42 %": a percentage as the verdicts print it.
std::string fmt_pct(double value);

// Every series and figure of the job's steady state the rules ask for; notes on the inputs go
// to `notes`.
EvidenceTable gather_evidence(const DiagnoseInputs& in, const std::vector<int>& job, const SteadyState& steady_state,
                              std::vector<std::string>& notes);

// ---------------------------------------------------------------------------------------
// Serving (serving.cpp)

// The job as a serving engine: from the workload (its kind and runtime.engine), else from the
// process table, top's commands or the engine's metrics; the request rate from the engine's
// counters over the capture, else the workload's requests_per_s.
ServingContext detect_serving(const DiagnoseInputs& in);

// The request rate the replica could carry: the performance model's capacity at the SLO on
// `gpu_count` job GPUs where the inputs allow (workload, GPU, efficiency), else the observed rate
// scaled by the utilisation headroom.
void estimate_carry(ServingContext& context, const DiagnoseInputs& in, int gpu_count, std::optional<double> busy_pct);

// gpusel's estimate of `workload` on `count` x `gpu` at the layout that fits; nullopt when no
// layout fits or the catalog GPU has no rate the model can use (an InputError, reported where
// the catalog is used, not a reason to stop diagnosing).
std::optional<PerfEstimate> model_estimate(const Workload& workload, const GpuSpec& gpu, int count,
                                           const EfficiencyTable& efficiency);

}  // namespace gpusel::diagnose_detail
