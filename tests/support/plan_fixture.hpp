#pragma once
// A hand-built PlanReport for the renderer tests (tests/unit/test_render.cpp) and the XLSX
// check (tests/render/xlsx_fixture.cpp): two roles, a rental and a purchase, rejected entries,
// a GPU name with a comma and a quote, and reasons that start like spreadsheet formulas.
// Every number is chosen so that its printed form can be worked out by hand.

#include "plan/plan.hpp"

namespace gpusel::test {

inline Workload fixture_training_workload() {
    Workload workload;
    workload.name = "support-bot-finetune";
    workload.kind = WorkloadKind::fine_tuning;
    workload.role = Role::training;
    workload.model.name = "Llama-3.1-8B";
    workload.model.layers = 32;
    workload.model.hidden = 4096;
    workload.model.heads = 32;
    workload.precision = Precision::bf16;
    workload.deployment.horizon_months = 24;
    return workload;
}

inline Workload fixture_inference_workload() {
    Workload workload;
    workload.name = "chat-api";
    workload.kind = WorkloadKind::inference;
    workload.role = Role::inference;
    workload.model.name = "Llama-2-13B";
    workload.model.layers = 40;
    workload.model.hidden = 5120;
    workload.model.heads = 40;
    workload.precision = Precision::bf16;
    workload.inference.slo.tpot_seconds = 0.050;
    workload.inference.slo.percentile = 99;
    workload.deployment.horizon_months = 24;
    return workload;
}

inline Candidate fixture_training_candidate(std::string gpu, int count, double tokens_per_s, double time_s,
                                            double tco_usd) {
    Candidate candidate;
    candidate.gpu = std::move(gpu);
    candidate.gpu_name = "NVIDIA " + candidate.gpu;
    candidate.count = count;
    candidate.layout.data_parallel = count;
    candidate.layout.sharding = Sharding::zero1;
    candidate.acquisition = Acquisition::cloud_on_demand;
    candidate.micro_batch = 4;
    candidate.memory.per_gpu.weights_bytes = 16.06e9;
    candidate.memory.per_gpu.total_bytes = 41.2e9;
    candidate.memory.capacity_bytes = 80e9;
    candidate.memory.fits = true;
    candidate.memory.headroom_bytes = 38.8e9;
    TrainingPerf training;
    training.step_time_s = 1.5;
    training.tokens_per_s = tokens_per_s;
    training.samples_per_s = tokens_per_s / 4096;
    training.mfu = 0.45;
    training.time_to_train_s = time_s;
    candidate.perf.training = training;
    candidate.perf.bottleneck.resource = Resource::compute;
    candidate.perf.bottleneck.share = 0.71;
    candidate.perf.bottleneck.detail = "compute 1.07 s of a 1.5 s step";
    candidate.cost.acquisition = Acquisition::cloud_on_demand;
    candidate.cost.available = true;
    candidate.cost.unit_price_usd = 2.79;
    candidate.cost.tco_usd = tco_usd;
    candidate.cost.monthly_opex_usd = tco_usd / 24;
    candidate.cost.cloud_equivalent_usd = tco_usd;
    candidate.cost.usd_per_unit = tco_usd / 2000;
    candidate.cost.unit = "1M tokens";
    candidate.score = tco_usd;
    return candidate;
}

inline Candidate fixture_inference_candidate(std::string gpu, int count, double p99_tpot_s, double tco_usd) {
    Candidate candidate;
    candidate.gpu = std::move(gpu);
    candidate.gpu_name = "NVIDIA " + candidate.gpu;
    candidate.count = count;
    candidate.replicas = count;
    candidate.acquisition = Acquisition::buy_new;
    candidate.batch = 16;
    candidate.memory.per_gpu.total_bytes = 33.5e9;
    candidate.memory.capacity_bytes = 48e9;
    candidate.memory.fits = true;
    candidate.memory.headroom_bytes = 14.5e9;
    candidate.memory.max_batch = 24;
    candidate.memory.max_context_tokens = 8192;
    InferencePerf inference;
    inference.ttft_s = 0.120;
    inference.tpot_s = 0.030;
    inference.output_tokens_per_s = 6400;
    inference.requests_per_s = 25;
    inference.p99_ttft_s = 0.400;
    inference.p99_tpot_s = p99_tpot_s;
    inference.p99_e2e_s = 10.9;
    inference.batch = 16;
    inference.replicas = count;
    candidate.perf.inference = inference;
    candidate.perf.bottleneck.resource = Resource::memory_bandwidth;
    candidate.perf.bottleneck.share = 0.62;
    candidate.cost.acquisition = Acquisition::buy_new;
    candidate.cost.available = true;
    candidate.cost.unit_price_usd = 7500;
    candidate.cost.capex_usd = 96000.5;
    candidate.cost.monthly_opex_usd = 1234.567;
    candidate.cost.tco_usd = tco_usd;
    candidate.cost.cloud_equivalent_usd = 250000;
    candidate.cost.break_even_month = 14.5;
    candidate.cost.usd_per_unit = 0.42;
    candidate.cost.unit = "1M tokens";
    candidate.score = tco_usd;
    return candidate;
}

inline PlanReport fixture_plan_report() {
    PlanReport report;
    report.project = "smart-support";
    report.objective = "lowest TCO meeting every constraint";
    report.horizon_months = 24;

    RolePlan training;
    training.role = Role::training;
    training.workload = fixture_training_workload();
    training.question = "Llama-3.1-8B · LoRA r16 · bf16 · seq 4096 · 2B tokens · deadline 14 d";
    training.workload_class = WorkloadClass::medium_training;
    training.ranked.push_back(fixture_training_candidate("A100-80GB-SXM4", 4, 11800, 169344, 3950));
    training.ranked.push_back(fixture_training_candidate("H100-SXM5", 2, 12900, 155000, 4310));
    training.ranked[0].reason = "1.96 d within the 14 d deadline at the lowest TCO";
    training.winner = training.ranked[0];
    training.alternative = training.ranked[1];
    training.alternative_why_not = "H100-SXM5 ×2 cloud on-demand: 8 % faster, $360 more";
    training.rejected = {{"T4", RejectionKind::memory, "memory per GPU", 26.4e9, 14.4e9, 8,
                          "no bf16 (fp16 fallback); needs 26.4 GB per GPU at 8 GPUs, has 16 GB", 0},
                         {"V100-SXM2-32GB", RejectionKind::precision, "precision", 0, 0, 0, "no bf16 support", 0},
                         {"JETSON-AGX-ORIN-64GB", RejectionKind::deadline, "training.deadline", 41 * 86400.0,
                          14 * 86400.0, 1, "41 d > 14 d deadline at 1 GPUs", 0},
                         {"RTX-3060", RejectionKind::memory, "memory per GPU", 13.1e9, 10.8e9, 8,
                          "needs 13.1 GB per GPU at 8 GPUs, has 12 GB", 0}};
    training.pareto = {0, 1};
    training.advice = {"strategy by horizon: mix renting and owning (6-24 months)"};
    training.evaluated = 412;
    training.feasible = 57;
    report.roles.push_back(training);

    RolePlan inference;
    inference.role = Role::inference;
    inference.workload = fixture_inference_workload();
    inference.question = "Llama-2-13B · awq · 512 in / 256 out · 20 req/s · P99 TPOT ≤ 50 ms";
    inference.workload_class = WorkloadClass::high_concurrency_inference;
    inference.ranked.push_back(fixture_inference_candidate("L40S", 12, 0.041, 125629.99));
    Candidate fallback = fixture_inference_candidate("V100-SXM2-32GB", 16, 0.048, 140000);
    fallback.precision = Precision::fp16;
    fallback.precision_fallback = true;
    fallback.memory.capacity_bytes = 32e9;
    fallback.memory.per_gpu.total_bytes = 29.75e9;
    inference.ranked.push_back(fallback);
    inference.ranked[0].reason = "P99 TPOT 41 ms at 20 req/s, the lowest TCO";
    inference.winner = inference.ranked[0];
    inference.alternative = inference.ranked[1];
    inference.alternative_why_not = "V100-SXM2-32GB ×16 buy new: $14,370 more, runs fp16";
    inference.pareto = {0};
    inference.evaluated = 96;
    inference.feasible = 11;
    report.roles.push_back(inference);

    ProcurementLine rental;
    rental.role = Role::training;
    rental.gpu = "A100-80GB-SXM4";
    rental.gpu_name = "NVIDIA A100 80GB SXM4, \"datacenter\"";
    rental.quantity = 4;
    rental.acquisition = Acquisition::cloud_on_demand;
    rental.unit_price_usd = 2.79;
    rental.total_usd = 0;
    rental.monthly_opex_usd = 164.58333;
    rental.tco_usd = 3950;
    rental.horizon_months = 24;
    rental.reason = "2 days a quarter: renting wins";
    rental.alternative = "H100-SXM5 ×2 (cloud on-demand)";
    rental.alternative_reason =
        "H100-SXM5 ×2 cloud on-demand: pays back only if the horizon exceeds 31 months, at $4,310";
    rental.gpus = 4;
    rental.offer.id = "lambda/gpu_1x_a100_80gb";
    rental.offer.kind = gpusel::OfferKind::rental;
    rental.offer.provider = "lambda";
    rental.offer.provider_name = "Lambda";
    rental.offer.tier = gpusel::ProviderTier::neocloud;
    rental.offer.instance_type = "gpu_1x_a100_80gb";
    rental.offer.region = "any";
    rental.offer.units = 4;
    rental.offer.price_usd = 2.79;
    rental.offer.price_kind = gpusel::PriceKind::list;
    rental.offer.as_of = "2026-09";
    rental.offer.order = "4 × gpu_1x_a100_80gb (4 × A100-80GB-SXM4), Lambda, on-demand $2.79/h";
    report.procurement.push_back(rental);

    ProcurementLine purchase;
    purchase.role = Role::inference;
    purchase.gpu = "L40S";
    purchase.gpu_name = "NVIDIA L40S";
    purchase.quantity = 12;
    purchase.acquisition = Acquisition::buy_new;
    purchase.unit_price_usd = 7500;
    purchase.total_usd = 96000.5;
    purchase.monthly_opex_usd = 1234.567;
    purchase.tco_usd = 125630.108;  // $96,000.50 + 24 × $1,234.567 (resale not counted)
    purchase.horizon_months = 24;
    purchase.reason = "-5 % TCO against L40: P99 TPOT 41 ms at 20 req/s";
    purchase.alternative = "A10 ×16 (buy new)";
    purchase.alternative_reason = "=1+1 is not a formula; P99 TPOT 63 ms > 50 ms SLO";
    // 12 cards at $7,500 and two 8-slot hosts at an estimated $3,000.25: $96,000.50.
    purchase.gpus = 12;
    purchase.host_usd = 6000.5;
    purchase.resale_usd = 40500;                      // 12 × $7,500 × 0.45, reported only
    purchase.depreciation_usd_per_month = 4000.0208;  // $96,000.50 over 24 months
    purchase.depreciation_months = 24;
    purchase.offer.id = "l40s-card";
    purchase.offer.kind = gpusel::OfferKind::purchase;
    purchase.offer.provider = "retail";
    purchase.offer.provider_name = "Retail";
    purchase.offer.form = gpusel::UnitForm::card;
    purchase.offer.name = "NVIDIA L40S 48GB PCIe card";
    purchase.offer.units = 12;
    purchase.offer.price_usd = 7500;
    purchase.offer.price_kind = gpusel::PriceKind::street;
    purchase.offer.as_of = "2026-09";
    purchase.offer.host_id = "pcie-8slot-server";
    purchase.offer.host_name = "8-slot PCIe server";
    purchase.offer.hosts = 2;
    purchase.offer.host_price_usd = 3000.25;
    purchase.offer.host_price_kind = gpusel::PriceKind::estimate;
    purchase.offer.host_price_as_of = "2026-06";
    purchase.offer.order = "12 × NVIDIA L40S 48GB PCIe card (Retail, street 2026-09)";
    purchase.precision = gpusel::Precision::fp8;  // the pick's compute precision, a column of its own
    report.procurement.push_back(purchase);

    report.total_capex_usd = 96000.5;
    report.total_monthly_opex_usd = 164.58333 + 1234.567;
    report.total_tco_usd = 3950 + 125630.108;
    report.assumptions = {{"support-bot-finetune: deployment.pue", "1.4", "default"},
                          {"chat-api: deployment.energy_price", "0.12 USD/kWh", "default"},
                          {"chat-api: inference.batch", "16", "largest batch meeting the SLO"}};
    return report;
}

}  // namespace gpusel::test
