#pragma once
// Shared by the perf sources; not part of the public contract. The training model's pieces the
// layout search also uses are in perf/training_ops.hpp.

#include <string>
#include <vector>

#include "perf/perf.hpp"
#include "perf/training_ops.hpp"

namespace gpusel::perf_detail {

// What one estimate needs besides the workload: the GPU, its resolved factors, the layout, and
// the compute precision and recompute level it runs at (the query's, else the workload's:
// the estimators read these, never workload.precision or workload.training.checkpointing).
struct Setting {
    const Workload& workload;
    const GpuSpec& gpu;
    const EfficiencyFactors& factors;
    const PlatformFactors& platform;
    Layout layout;
    ServingStack stack;
    std::vector<std::string>& notes;
    Precision precision;
    Checkpointing checkpointing;
};

// The dense peak (FLOP/s) matrix math of `precision` runs at on `gpu`, falling back to the
// next wider supported precision (bf16 -> fp16 -> fp32) with a note.
double matmul_peak_flops_per_s(const GpuSpec& gpu, Precision precision, std::vector<std::string>& notes);

// The dense peak (FLOP/s) an inference's GEMMs run at on setting.gpu: FP8 for FP8 weights or
// compute, FP4 for NVFP4 weights and FP8 for MXFP4 weights where the GPU has an FP4 tensor path
// and the stack runs engine kernels (a note says which path), else the compute precision's.
// `eight_bit` is set when the peak is an 8-bit or FP4 one (the 8-bit fraction of it applies).
double inference_peak(const Setting& setting, bool& eight_bit);

// Each fills `times` with the seconds of one step (training: one optimizer step on one GPU;
// inference: one full batch on one replica) by the resource that bounds each part.
TrainingPerf estimate_training(const Setting& setting, int micro_batch_override, ResourceTimes& times);
struct InferenceTimes {
    ResourceTimes prefill;  // prefill of a full batch
    ResourceTimes decode;   // all decode steps of a full batch (non-transformers: the forward pass)
};
// PerfQuery::search_capacity, capacity_needed_rps and capacity_factor.
struct CapacitySearch {
    bool search = true;
    double needed_rps = 0;  // > 0: only whether max × factor reaches it
    double factor = 1;
};
InferencePerf estimate_inference(const Setting& setting, int batch_override, const CapacitySearch& capacity,
                                 InferenceTimes& times);

// Whether the training state (memory_breakdown's total) fits the layout under the headroom, at
// `precision` and `checkpointing`.
bool training_state_fits(const Workload& workload, const GpuSpec& gpu, const Layout& layout, Precision precision,
                         Checkpointing checkpointing);
// What one GPU of a training layout holds against what it may use (perf.hpp, TrainingMemoryUse).
TrainingMemoryUse training_memory_use(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                                      Precision precision, Checkpointing checkpointing);

// Quantile of the standard normal distribution for probability p in (0.5, 1).
double normal_quantile(double p);

}  // namespace gpusel::perf_detail
