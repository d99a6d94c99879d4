#pragma once
// Hand-built PlanReport values for the report's tests (unit and browser): every number is
// written out here, not computed by the planner, so a renderer test does not move when the
// estimators change. Costs come from the real cost model (estimate_cost) on hand-made GPU
// specifications, so that capex, opex and break-even are mutually consistent. Prices and
// speeds are illustrative, not catalog data.

#include <map>
#include <string>
#include <vector>

#include "cost/cost.hpp"
#include "plan/plan.hpp"
#include "support/offer_support.hpp"

namespace gpusel::test {

// The illustrative prices of each sample GPU, by id.
inline std::map<std::string, TestPrices>& sample_prices() {
    static std::map<std::string, TestPrices> prices;
    return prices;
}

inline GpuSpec sample_gpu(const std::string& id, double memory_gb, double watts, double new_usd, double on_demand_per_h,
                          double reserved_per_h) {
    GpuSpec gpu;
    gpu.id = id;
    gpu.name = "NVIDIA " + id;
    gpu.memory_bytes = memory_gb * 1e9;
    gpu.power_watts = watts;
    sample_prices()[id] = TestPrices{new_usd,        new_usd * 0.6, 2500,        on_demand_per_h, on_demand_per_h * 0.4,
                                     reserved_per_h, std::nullopt,  std::nullopt};
    return gpu;
}

inline MemoryEstimate sample_memory(double weights_gb, double gradients_gb, double optimizer_gb, double activations_gb,
                                    double kv_gb, double overhead_gb, double capacity_gb) {
    MemoryEstimate memory;
    MemoryBreakdown& part = memory.per_gpu;
    part.weights_bytes = weights_gb * 1e9;
    part.gradients_bytes = gradients_gb * 1e9;
    part.optimizer_bytes = optimizer_gb * 1e9;
    part.activations_bytes = activations_gb * 1e9;
    part.kv_cache_bytes = kv_gb * 1e9;
    part.overhead_bytes = overhead_gb * 1e9;
    part.allocated_bytes =
        part.weights_bytes + part.gradients_bytes + part.optimizer_bytes + part.activations_bytes + part.kv_cache_bytes;
    part.total_bytes = part.allocated_bytes + part.overhead_bytes;
    part.total_low_bytes = part.total_bytes * 0.9;
    part.total_high_bytes = part.total_bytes * 1.1;
    memory.capacity_bytes = capacity_gb * 1e9;
    memory.fits = part.total_bytes <= memory.capacity_bytes * 0.9;
    memory.headroom_bytes = memory.capacity_bytes - part.total_bytes;
    return memory;
}

inline Workload sample_training_workload() {
    Workload workload;
    workload.name = "support-bot-finetune";
    workload.kind = WorkloadKind::fine_tuning;
    workload.role = Role::training;
    workload.model.name = "llama-3.1-8b";
    workload.model.params = 8.03e9;
    workload.model_label = "Llama-3.1-8B";
    workload.precision = Precision::bf16;
    workload.training.lora.rank = 16;
    workload.training.seq_len = 4096;
    workload.training.dataset_tokens = 2e9;
    workload.training.runs = 4;
    workload.training.deadline_seconds = 14 * 86400.0;
    workload.deployment.horizon_months = 24;
    return workload;
}

inline Workload sample_inference_workload(double horizon_months) {
    Workload workload;
    workload.name = "chat-api";
    workload.kind = WorkloadKind::inference;
    workload.role = Role::inference;
    workload.model.name = "llama-2-13b";
    workload.model.params = 13.0e9;
    workload.model_label = "Llama-2-13B";
    workload.precision = Precision::fp16;
    workload.weights = WeightFormat::awq;
    workload.inference.input_tokens = 512;
    workload.inference.output_tokens = 256;
    workload.inference.requests_per_s = 20;
    workload.inference.slo.tpot_seconds = 0.050;
    workload.deployment.horizon_months = horizon_months;
    return workload;
}

inline Candidate sample_training_candidate(const Workload& workload, const GpuSpec& gpu, int count, Layout layout,
                                           Acquisition acquisition, double tokens_per_s, MemoryEstimate memory,
                                           Resource bottleneck, double share, std::string detail, std::string remedy) {
    Candidate candidate;
    candidate.gpu = gpu.id;
    candidate.gpu_name = gpu.name;
    candidate.count = count;
    candidate.layout = layout;
    candidate.precision = Precision::bf16;
    candidate.acquisition = acquisition;
    candidate.micro_batch = 4;
    candidate.memory = std::move(memory);
    TrainingPerf perf;
    perf.tokens_per_s = tokens_per_s;
    perf.samples_per_s = tokens_per_s / 4096;
    const double time_to_train_s = workload.training.dataset_tokens / tokens_per_s;
    perf.time_to_train_s = time_to_train_s;
    perf.step_time_s = 4096.0 * 4 * count / tokens_per_s;
    perf.mfu = 0.4;
    perf.meets_deadline = time_to_train_s <= workload.training.deadline_seconds;
    candidate.perf.training = perf;
    candidate.perf.bottleneck.resource = bottleneck;
    candidate.perf.bottleneck.phase = BottleneckPhase::step;
    candidate.perf.bottleneck.share = share;
    candidate.perf.bottleneck.gpu_utilization = share * 0.95;
    candidate.perf.bottleneck.detail = std::move(detail);
    candidate.perf.bottleneck.remedy = std::move(remedy);
    UsageProfile usage;
    usage.gpus = count;
    usage.job_seconds = time_to_train_s * workload.training.runs;
    usage.work_units = workload.training.dataset_tokens * workload.training.runs / 1e6;
    usage.unit = "1M tokens";
    usage.launches = workload.training.runs;
    candidate.cost = test_cost(workload, gpu, sample_prices()[gpu.id], acquisition, usage);
    candidate.score = candidate.cost.tco_usd;
    candidate.reason = "lowest TCO that meets the 14 d deadline";
    return candidate;
}

inline Candidate sample_inference_candidate(const Workload& workload, const GpuSpec& gpu, int replicas,
                                            int tensor_parallel, Acquisition acquisition, int batch, double p99_tpot_s,
                                            double output_tokens_per_s, MemoryEstimate memory, Resource bottleneck,
                                            double share, std::string detail, std::string remedy) {
    Candidate candidate;
    candidate.gpu = gpu.id;
    candidate.gpu_name = gpu.name;
    candidate.count = replicas * tensor_parallel;
    candidate.replicas = replicas;
    candidate.layout.tensor_parallel = tensor_parallel;
    candidate.precision = Precision::fp16;
    candidate.acquisition = acquisition;
    candidate.batch = batch;
    candidate.memory = std::move(memory);
    InferencePerf perf;
    perf.batch = batch;
    perf.replicas = replicas;
    perf.tpot_s = p99_tpot_s * 0.8;
    perf.p99_tpot_s = p99_tpot_s;
    perf.ttft_s = 0.09;
    perf.p99_ttft_s = 0.21;
    perf.output_tokens_per_s = output_tokens_per_s;
    perf.requests_per_s = output_tokens_per_s / workload.inference.output_tokens;
    perf.p99_e2e_s = 0.21 + p99_tpot_s * workload.inference.output_tokens;
    perf.meets_slo = p99_tpot_s <= workload.inference.slo.tpot_seconds;
    perf.max_requests_per_s_meeting_slo = perf.requests_per_s;
    candidate.perf.inference = perf;
    candidate.perf.bottleneck.resource = bottleneck;
    candidate.perf.bottleneck.phase = BottleneckPhase::decode;
    candidate.perf.bottleneck.share = share;
    candidate.perf.bottleneck.gpu_utilization = share * 0.9;
    candidate.perf.bottleneck.detail = std::move(detail);
    candidate.perf.bottleneck.remedy = std::move(remedy);
    UsageProfile usage;
    usage.gpus = candidate.count;
    usage.service = true;
    usage.average_utilization = workload.deployment.utilization;
    usage.work_units = workload.inference.requests_per_s * workload.deployment.horizon_months * 30.4375 * 86400 / 1e3;
    usage.unit = "1k requests";
    candidate.cost = test_cost(workload, gpu, sample_prices()[gpu.id], acquisition, usage);
    candidate.score = candidate.cost.tco_usd;
    candidate.reason = "lowest TCO meeting P99 TPOT ≤ 50 ms at 20 req/s";
    return candidate;
}

inline RolePlan sample_training_role() {
    RolePlan plan;
    plan.role = Role::training;
    plan.workload = sample_training_workload();
    plan.question = "Llama-3.1-8B · LoRA r16 · bf16 · seq 4096 · 2B tokens · deadline 14 d";
    plan.workload_class = WorkloadClass::medium_training;
    const Workload& w = plan.workload;
    const GpuSpec a100 = sample_gpu("A100-80GB-SXM4", 80, 400, 15000, 1.79, 1.29);
    const GpuSpec h100 = sample_gpu("H100-SXM5", 80, 700, 30000, 2.99, 2.15);
    const GpuSpec l40s = sample_gpu("L40S", 48, 350, 8000, 1.04, 0.79);
    const GpuSpec rtx = sample_gpu("RTX-4090", 24, 450, 1800, 0.44, 0.35);
    Layout dp4;
    dp4.data_parallel = 4;
    Layout dp2;
    dp2.data_parallel = 2;
    Layout dp8;
    dp8.data_parallel = 8;
    dp8.sharding = Sharding::zero1;
    plan.ranked = {
        sample_training_candidate(w, a100, 4, dp4, Acquisition::cloud_spot, 11800,
                                  sample_memory(16.1, 0.04, 0.17, 19.5, 0, 5.4, 80), Resource::compute, 0.71,
                                  "forward+backward 3.1 s of 4.4 s per step at 45 % of dense BF16 peak",
                                  "larger micro-batch: the GPU has 38 GB spare"),
        sample_training_candidate(w, h100, 2, dp2, Acquisition::cloud_on_demand, 12900,
                                  sample_memory(16.1, 0.04, 0.17, 24.6, 0, 6.1, 80), Resource::compute, 0.68,
                                  "compute 68 % of step time", "FP8 training would roughly double the peak"),
        sample_training_candidate(w, l40s, 8, dp8, Acquisition::buy_used, 9100,
                                  sample_memory(16.1, 0.04, 0.02, 12.0, 0, 5.4, 48), Resource::interconnect, 0.44,
                                  "PCIe all-reduce 1.9 s of 4.3 s per step", "gradient accumulation ×4 halves it"),
        sample_training_candidate(w, rtx, 8, dp8, Acquisition::buy_new, 6100,
                                  sample_memory(16.1, 0.04, 0.02, 3.9, 0, 1.9, 24), Resource::memory_capacity, 0.52,
                                  "micro-batch 1 fits in 24 GB", "activation checkpointing: micro-batch 4"),
    };
    plan.winner = plan.ranked[0];
    plan.alternative = plan.ranked[1];
    plan.alternative_why_not = "H100-SXM5 ×2 cloud on-demand: 9 % faster, $360 more";
    plan.pareto = {0, 1};
    plan.rejected = {
        {"T4", RejectionKind::memory, "memory per GPU", 26.4e9, 16e9, 0, "no BF16, and 16 GB < 26.4 GB needed", 0},
        {"V100-SXM2-32GB", RejectionKind::deadline, "training.deadline", 41 * 86400.0, 14 * 86400.0, 8,
         "no BF16 (fp16 fallback); 41 d > 14 d deadline at 8 GPUs", 0},
        {"JETSON-AGX-ORIN-64GB", RejectionKind::excluded, "", 0, 0, 0, "segment edge not allowed", 0},
        {"MI300X", RejectionKind::excluded, "", 0, 0, 0, "in constraints.deny", 0},
        {"Quote <ACME> & \"Sons\"", RejectionKind::no_offer, "", 0, 0, 2, "no price to rent or buy it", 0},
    };
    plan.advice = {"larger micro-batch: the GPU has 38 GB spare",
                   "strategy by horizon: 6-24 months: own the base load, rent peaks"};
    plan.evaluated = 412;
    plan.feasible = 57;
    return plan;
}

inline RolePlan sample_inference_role(double horizon_months = 24) {
    RolePlan plan;
    plan.role = Role::inference;
    plan.workload = sample_inference_workload(horizon_months);
    plan.question = "Llama-2-13B · awq · 512 in / 256 out · 20 req/s · P99 TPOT ≤ 50 ms";
    plan.workload_class = WorkloadClass::high_concurrency_inference;
    const Workload& w = plan.workload;
    const GpuSpec l40s = sample_gpu("L40S", 48, 350, 8000, 1.04, 0.79);
    const GpuSpec a100 = sample_gpu("A100-80GB-SXM4", 80, 400, 15000, 1.79, 1.29);
    const GpuSpec h100 = sample_gpu("H100-SXM5", 80, 700, 30000, 2.99, 2.15);
    const GpuSpec a10 = sample_gpu("A10", 24, 150, 3200, 0.75, 0.55);
    const GpuSpec l4 = sample_gpu("L4", 24, 72, 2500, 0.71, 0.50);
    plan.ranked = {
        sample_inference_candidate(w, l40s, 3, 1, Acquisition::buy_new, 48, 0.041, 6400,
                                   sample_memory(7.3, 0, 0, 1.2, 27.9, 2.5, 48), Resource::memory_bandwidth, 0.82,
                                   "decode reads 7.3 GB of weights and 18 GB of KV cache per step",
                                   "FP8 KV cache halves the bytes per step"),
        sample_inference_candidate(w, l4, 6, 1, Acquisition::buy_new, 24, 0.049, 5300,
                                   sample_memory(7.3, 0, 0, 0.8, 11.6, 2.2, 24), Resource::memory_bandwidth, 0.88,
                                   "300 GB/s: decode is bandwidth-bound", "fewer, faster GPUs"),
        sample_inference_candidate(w, a100, 2, 1, Acquisition::buy_new, 64, 0.028, 7900,
                                   sample_memory(7.3, 0, 0, 1.6, 52.0, 3.0, 80), Resource::memory_bandwidth, 0.77,
                                   "decode at 75 % of 2039 GB/s", "none needed"),
        sample_inference_candidate(w, a10, 4, 1, Acquisition::buy_new, 24, 0.047, 5500,
                                   sample_memory(7.3, 0, 0, 0.8, 11.0, 2.2, 24), Resource::memory_bandwidth, 0.86,
                                   "decode at 75 % of 600 GB/s", "FP8 KV cache"),
        sample_inference_candidate(w, h100, 1, 2, Acquisition::cloud_reserved, 96, 0.019, 12100,
                                   sample_memory(3.7, 0, 0, 1.9, 60.1, 3.4, 80), Resource::compute, 0.55,
                                   "prefill at 60 % of FP16 peak", "none needed"),
    };
    plan.winner = plan.ranked[0];
    plan.alternative = plan.ranked[1];
    plan.alternative_why_not = "L4 ×6 buy new: $2,100 more over 24 months, P99 TPOT 49 ms (1 ms headroom)";
    plan.pareto = {0, 2, 4};
    plan.rejected = {
        {"T4", RejectionKind::slo, "inference.slo.tpot", 0.063, 0.050, 8, "P99 TPOT 63 ms > 50 ms SLO at TP1", 0},
        {"RTX-4090", RejectionKind::excluded, "", 0, 0, 0, "form factor card not allowed", 0},
        {"V100-SXM2-32GB", RejectionKind::slo, "inference.slo.tpot", 0.058, 0.050, 4,
         "P99 TPOT 58 ms > 50 ms SLO at TP1", 0},
    };
    plan.advice = {"FP8 KV cache halves the bytes per step",
                   "strategy by horizon: 6-24 months: own the base load, rent peaks"};
    plan.evaluated = 188;
    plan.feasible = 31;
    return plan;
}

// variant 1: a project of two roles (training and inference) over 24 months; variant 2: one
// inference role over 36 months (buying breaks even) whose candidates span two orders of
// magnitude (log axes).
inline PlanReport sample_plan_report(int variant = 1) {
    PlanReport report;
    if (variant == 2) {
        report.project = "edge-and-cloud <sample> & co";
        RolePlan plan = sample_inference_role(36);
        plan.workload.name = "chat-api-wide";
        // Spread the candidates over two decades of throughput and one of latency.
        plan.ranked[1].perf.inference->output_tokens_per_s = 90;
        plan.ranked[1].perf.inference->p99_tpot_s = 0.004;
        plan.ranked[3].perf.inference->output_tokens_per_s = 160000;
        plan.ranked[3].perf.inference->p99_tpot_s = 0.6;
        plan.winner = plan.ranked[0];
        report.roles.push_back(plan);
    } else {
        report.project = "smart-support (sample)";
        report.roles = {sample_training_role(), sample_inference_role()};
    }
    report.objective = "lowest TCO meeting every constraint";
    for (const RolePlan& plan : report.roles) {
        ProcurementLine line = procurement_line(plan);
        report.total_capex_usd += line.total_usd;
        report.total_monthly_opex_usd += line.monthly_opex_usd;
        report.total_tco_usd += line.tco_usd;
        report.horizon_months = std::max(report.horizon_months, line.horizon_months);
        report.procurement.push_back(std::move(line));
    }
    report.assumptions = {{"deployment.energy_price", "0.12 USD/kWh", "default"},
                          {"deployment.pue", "1.4", "default"},
                          {"deployment.utilization", "0.7", "default"},
                          {"inference.slo.percentile", "99", "default"}};
    return report;
}

}  // namespace gpusel::test
