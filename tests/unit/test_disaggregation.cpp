// Prefill/decode disaggregation (plan/disaggregation.hpp; docs/perf-model.md, "Disaggregated
// serving"): deployment.disaggregated parsing and errors, the KV transfer and prefill queue by
// hand, the sizing's minimality, the price and the verdict against the tie margin, and the
// physics bounds of the split's phases.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "cost/offer_selection.hpp"
#include "deploy/deploy.hpp"
#include "perf/perf.hpp"
#include "plan/plan.hpp"
#include "support/test_support.hpp"

using gpusel::DisaggregatedPlan;
using gpusel::PlanReport;
using gpusel::RolePlan;
using gpusel::Workload;

namespace {
using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::input_errors;
using gpusel::test::models;

Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", gpusel::LoadContext{&catalog(), &models()});
}
std::vector<std::string> errors(const std::string& text) {
    return input_errors([&] { load(text); });
}
RolePlan plan_one(const Workload& workload) {
    gpusel::Project project;
    project.name = workload.name;
    project.workloads.push_back(workload);
    const PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    REQUIRE(report.roles.size() == 1);
    return report.roles.front();
}

const std::string chat_head = R"(format: 1
name: chat
kind: inference
model: {preset: llama-3.1-8b}
inference: {input_tokens: 4096, output_tokens: 256, requests_per_s: 2, slo: {ttft: 2s, tpot: 50ms}}
)";

// examples/deepseek-r1-disagg.yaml: long prompts, tight TTFT and TPOT.
const std::string rag = R"(format: 1
name: deepseek-r1-rag
kind: inference
model: {preset: deepseek-r1}
precision: bf16
weights: fp8
kv_cache: fp8
inference:
  input_tokens: 8192
  output_tokens: 1024
  requests_per_s: 4
  expert_parallel: 8
  slo: {ttft: 3s, tpot: 45ms}
runtime: {engine: sglang}
deployment: {horizon: 24mo, disaggregated: auto}
constraints: {vendor: [nvidia], form_factor: [sxm]}
)";
}  // namespace

TEST_CASE("deployment.disaggregated: auto, or fixed prefill and decode workers", "[disaggregation]") {
    const Workload automatic = load(chat_head + "deployment: {disaggregated: auto}\n");
    REQUIRE(automatic.deployment.disaggregated);
    CHECK(automatic.deployment.disaggregated->automatic);
    CHECK(automatic.deployment.disaggregated->prefill.count == 0);

    const Workload fixed = load(chat_head + R"(deployment:
  disaggregated:
    prefill: {gpu: H100-SXM5, count: 2, tensor_parallel: 1}
    decode: {gpu: H100-SXM5, count: 3, tensor_parallel: 2, expert_parallel: 1}
)");
    REQUIRE(fixed.deployment.disaggregated);
    const gpusel::DisaggregationSpec& spec = *fixed.deployment.disaggregated;
    CHECK_FALSE(spec.automatic);
    CHECK(spec.prefill.gpu == "H100-SXM5");
    CHECK(spec.prefill.count == 2);
    CHECK(spec.prefill.tensor_parallel == 1);
    CHECK(spec.decode.count == 3);
    CHECK(spec.decode.tensor_parallel == 2);
    CHECK(spec.decode.expert_parallel == 1);

    CHECK_FALSE(load(chat_head).deployment.disaggregated);
}

TEST_CASE("deployment.disaggregated: errors at their position, with a fix", "[disaggregation]") {
    CHECK(errors(chat_head + "deployment:\n  disaggregated:\n    prefill: {gpu: H100-SXM, count: 2}\n") ==
          std::vector<std::string>{
              "w.yaml:8:20: deployment.disaggregated.prefill.gpu: unknown GPU 'H100-SXM', did you mean 'H100-SXM5'?"});
    CHECK(errors(chat_head + "deployment:\n  disaggregated:\n    prefil: {count: 2}\n") ==
          std::vector<std::string>{
              "w.yaml:8:5: deployment.disaggregated.prefil: unknown field 'prefil', did you mean 'prefill'?"});
    CHECK(errors(chat_head + "deployment:\n  disaggregated:\n    decode: {count: 2, tensor_paralel: 2}\n") ==
          std::vector<std::string>{"w.yaml:8:24: deployment.disaggregated.decode.tensor_paralel: unknown field "
                                   "'tensor_paralel', did you mean 'tensor_parallel'?"});
    CHECK(errors(chat_head + "deployment: {disaggregated: atuo}\n") ==
          std::vector<std::string>{"w.yaml:6:29: deployment.disaggregated: 'atuo' is not a disaggregation; write "
                                   "auto, or {prefill: {gpu, count, tensor_parallel, expert_parallel}, decode: "
                                   "{...}}, did you mean 'auto'?"});
    CHECK(errors(chat_head + "deployment: {disaggregated: [prefill]}\n") ==
          std::vector<std::string>{"w.yaml:6:29: deployment.disaggregated: expected auto or a mapping of prefill and "
                                   "decode, got a list"});
    CHECK(errors(R"(format: 1
name: embed
kind: inference
model: {preset: bert-base}
deployment: {disaggregated: auto}
)") == std::vector<std::string>{"w.yaml:5:29: deployment.disaggregated: disaggregation splits prefill from decode "
                                "and needs token generation (role: inference, inference.output_tokens > 0); this "
                                "workload serves encoder: remove deployment.disaggregated"});
}

TEST_CASE("disaggregation: KV transfer and the prefill queue, by hand", "[disaggregation]") {
    // DeepSeek-R1's MLA cache at FP8: (512 latent + 64 RoPE) × 61 layers × 1 B = 35,136 B per token;
    // an 8,192-token prompt holds 287,834,112 B. Over one 50 GB/s NIC (InfiniBand NDR 400 Gb/s)
    // with 10 µs latency: 287,834,112 / 50e9 + 10e-6 = 5.75668 ms + 0.01 ms = 5.76668 ms.
    CHECK(gpusel::kv_transfer_seconds(287834112, 1, 50e9, 10e-6) == Approx(5.766682e-3).epsilon(1e-6));
    // The same over 8 lanes (KV heads split by tensor parallel): 287,834,112 / 8 / 50e9 = 719.585 µs,
    // + 10 µs = 729.585 µs.
    CHECK(gpusel::kv_transfer_seconds(287834112, 8, 50e9, 10e-6) == Approx(729.5853e-6).epsilon(1e-6));
    CHECK(gpusel::kv_transfer_seconds(0, 1, 50e9, 10e-6) == 0);

    // One prefill worker, 0.5 req/s of 1 s prompts: Erlang C for one server is ρ = 0.5; M/D/1
    // mean wait ρ·S / (1 − ρ) / 2 = 0.5 s; P99: W̄ / P_w · ln(P_w / 0.01) = 1 · ln 50 = 3.91202 s.
    const gpusel::PrefillQueue one = gpusel::prefill_queue(1, 0.5, 1.0, 0.99);
    CHECK(one.stable);
    CHECK(one.utilisation == Approx(0.5));
    CHECK(one.wait_s == Approx(std::log(50.0)).epsilon(1e-9));
    // Two workers at the same load: a = 0.5 Erlang, C(2, 0.5) = (a²/2 · 2/(2 − a)) / (1 + a + a²/2 · 2/(2 − a))
    // = (0.125 · 1.3333) / (1.5 + 0.16667) = 0.16667 / 1.66667 = 0.1; W̄ = 0.1 · 1 / 1.5 / 2 = 0.033333;
    // P99: 0.033333 / 0.1 · ln(0.1 / 0.01) = 0.33333 · 2.302585 = 0.767528 s.
    const gpusel::PrefillQueue two = gpusel::prefill_queue(2, 0.5, 1.0, 0.99);
    CHECK(two.utilisation == Approx(0.25));
    CHECK(two.wait_s == Approx(0.767528).epsilon(1e-5));
    // Below 1 − quantile no one waits at the percentile; at or above one Erlang per worker the queue grows.
    CHECK(gpusel::prefill_queue(8, 0.5, 1.0, 0.99).wait_s == 0);
    CHECK_FALSE(gpusel::prefill_queue(1, 1.0, 1.0, 0.99).stable);
}

TEST_CASE("disaggregation: the split is minimal, priced as co-located, and chosen only past the tie margin",
          "[disaggregation]") {
    const Workload workload = load(rag);
    const RolePlan plan = plan_one(workload);
    REQUIRE(plan.winner);
    REQUIRE(plan.disaggregated);
    const DisaggregatedPlan& split = *plan.disaggregated;
    REQUIRE(split.meets_slo);
    // Sized at the speed band's slow end: the offered load / speed_margin.
    CHECK(split.requests_per_s == workload.inference.requests_per_s);
    REQUIRE(split.speed_margin > 0);
    CHECK(split.speed_margin <= 1);
    const double rate = workload.inference.requests_per_s / split.speed_margin;
    const double group_rate = rate / split.replicas;
    const double out = workload.inference.output_tokens;
    const double quantile = workload.inference.slo.percentile / 100;
    CHECK(split.ttft_s <= workload.inference.slo.ttft_seconds);
    CHECK(split.tpot_s <= workload.inference.slo.tpot_seconds);
    // TTFT is the prefill queue's wait + one prefill + the transfer + SGLang's per-request
    // latency (data/efficiency.yaml, rule sglang: request_latency 90.3 ms).
    CHECK(split.request_latency_s == Approx(0.0903).epsilon(1e-9));
    const gpusel::PrefillQueue queue =
        gpusel::prefill_queue(split.prefill.workers, group_rate, split.prefill.step_s, quantile);
    CHECK(split.ttft_s ==
          Approx(queue.wait_s + split.prefill.step_s + split.kv_transfer_s + split.request_latency_s).epsilon(1e-9));
    // x − 1 prefill workers miss the TTFT SLO (or cannot keep up).
    if (split.prefill.workers > 1) {
        const gpusel::PrefillQueue fewer =
            gpusel::prefill_queue(split.prefill.workers - 1, group_rate, split.prefill.step_s, quantile);
        CHECK((!fewer.stable || fewer.wait_s + split.prefill.step_s + split.kv_transfer_s + split.request_latency_s >
                                    workload.inference.slo.ttft_seconds));
    }
    // y decode workers carry the load at their largest batch within the TPOT SLO; y − 1 do not
    // (Little's law: one worker carries batch / (output tokens × step) requests/s).
    const double worker_rps = split.decode.batch / (out * split.decode.step_s);
    CHECK(split.decode.step_s <= workload.inference.slo.tpot_seconds);
    CHECK(split.decode.workers * worker_rps > group_rate);
    CHECK((split.decode.workers - 1) * worker_rps <= group_rate);
    // GPUs: (workers × groups + spares) × tensor parallel.
    CHECK(split.prefill.gpus ==
          (split.prefill.workers * split.replicas + split.prefill.spare_workers) * split.prefill.tensor_parallel);
    CHECK(split.decode.gpus ==
          (split.decode.workers * split.replicas + split.decode.spare_workers) * split.decode.tensor_parallel);
    // n+1 (the default for serving): one spare worker of each phase, or one of the wider phase
    // shared by both when they run on one GPU type.
    if (split.prefill.gpu == split.decode.gpu) {
        CHECK(split.prefill.spare_workers + split.decode.spare_workers == 1);
    } else {
        CHECK(split.prefill.spare_workers == 1);
        CHECK(split.decode.spare_workers == 1);
    }
    // $ per 1M output tokens: the TCO over the co-located pick's tokens over the horizon.
    CHECK(split.usd_per_million_tokens == Approx(split.tco_usd / plan.winner->usage.work_units).epsilon(1e-12));
    CHECK(split.colocated_usd_per_million_tokens == Approx(plan.winner->cost.usd_per_unit).epsilon(1e-12));
    // The same offer at the split's GPU count, priced again here.
    if (split.prefill.gpu == split.decode.gpu) {
        const gpusel::GpuSpec* gpu = catalog().find(split.prefill.gpu);
        REQUIRE(gpu != nullptr);
        const gpusel::Candidate* same = nullptr;
        for (const gpusel::Candidate& candidate : plan.ranked) {
            if (candidate.gpu == split.prefill.gpu) {
                same = &candidate;
                break;
            }
        }
        if (same != nullptr) {
            for (const gpusel::OfferQuote& quote : gpusel::quotes_for(catalog(), workload, *gpu, same->acquisition)) {
                if (quote.offer->id == same->cost.offer.id) {
                    gpusel::UsageProfile usage = plan.winner->usage;
                    usage.gpus = split.prefill.gpus + split.decode.gpus;
                    usage.min_gpus = std::min(usage.min_gpus, usage.gpus);
                    CHECK(gpusel::estimate_cost(workload, *gpu, quote, usage).tco_usd == Approx(split.tco_usd));
                }
            }
        }
    }
    // Chosen exactly when cheaper than co-located by more than the tie margin.
    const double margin =
        std::max(gpusel::tie_tolerance_fraction * plan.winner->cost.tco_usd, gpusel::tie_tolerance_usd);
    CHECK(split.chosen == (plan.winner->cost.tco_usd - split.tco_usd > margin));
    CHECK_FALSE(split.why.empty());
}

TEST_CASE("disaggregation: the split's phases stay under the part's peaks", "[disaggregation][physics]") {
    // The phases' times are estimate_perf's (covered by the serving grid of test_physics.cpp); here
    // the bounds that are the split's own: one prompt's prefill is no faster than its FLOPs at the
    // part's fastest dense rate or its weights at full bandwidth, a decode step no faster than
    // reading its weights, and the KV transfer no faster than the GPU's fastest link.
    const Workload workload = load(rag);
    const RolePlan plan = plan_one(workload);
    REQUIRE(plan.disaggregated);
    const DisaggregatedPlan& split = *plan.disaggregated;
    REQUIRE(split.meets_slo);
    const auto peak_flops = [](const gpusel::GpuSpec& gpu) {
        return *std::max_element(gpu.dense_flops_per_s.begin(), gpu.dense_flops_per_s.end());
    };
    const gpusel::GpuSpec& prefill_gpu = *catalog().find(split.prefill.gpu);
    const gpusel::GpuSpec& decode_gpu = *catalog().find(split.decode.gpu);
    const double matmul = gpusel::matmul_params(workload.model);
    const double weights = gpusel::weight_bytes(workload);
    const int tp_prefill = split.prefill.tensor_parallel;
    const int tp_decode = split.decode.tensor_parallel;
    CHECK(split.prefill.step_s >= 2 * workload.inference.input_tokens * matmul / tp_prefill / peak_flops(prefill_gpu));
    CHECK(split.prefill.step_s >= weights / tp_prefill / prefill_gpu.memory_bandwidth_bytes_per_s);
    CHECK(split.decode.step_s >= weights / tp_decode / decode_gpu.memory_bandwidth_bytes_per_s);
    CHECK(split.decode.step_s >= 2 * split.decode.batch * matmul / tp_decode / peak_flops(decode_gpu));
    const double fastest_link =
        std::max(prefill_gpu.interconnect.bidirectional_bytes_per_s / 2, prefill_gpu.host_link_bytes_per_s());
    CHECK(split.kv_bytes / split.kv_transfer_s <= fastest_link * tp_prefill);
}

TEST_CASE("disaggregation: roles without it plan as before", "[disaggregation]") {
    Workload workload = load(rag);
    workload.deployment.disaggregated.reset();
    CHECK_FALSE(plan_one(workload).disaggregated);
}

namespace {
bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
// A hand-built launch with a chosen split: 2 prefill workers of TP4 and 3 decode workers of TP8,
// one group, on H200 (flags checked against docs.sglang.io "PD Disaggregation" and Dynamo's
// examples/backends/sglang/launch/disagg.sh; docs/deploy.md, "Flags and sources").
gpusel::LaunchSpec split_spec() {
    gpusel::LaunchSpec spec;
    spec.plan_file = "rag.yaml";
    spec.project = "rag";
    spec.workload = "rag";
    spec.gpusel_version = "0.1.0";
    spec.role = gpusel::Role::inference;
    spec.model = "deepseek-ai/DeepSeek-R1";
    spec.model_label = "deepseek-r1";
    spec.decoder_llm = true;
    spec.gpu = "H200";
    spec.vendor = "nvidia";
    spec.gpus = 16;
    spec.replicas = 2;
    spec.gpus_per_replica = 8;
    spec.gpus_per_node = 8;
    spec.layout.tensor_parallel = 8;
    spec.precision = gpusel::Precision::bf16;
    spec.weights = gpusel::WeightFormat::fp8_block;
    spec.kv_cache = gpusel::KvCacheFormat::fp8;
    spec.engine = gpusel::Engine::sglang;
    spec.paged_engine = true;
    spec.max_model_len = 9216;
    spec.max_num_seqs = 64;
    DisaggregatedPlan split;
    split.prefill = {"H200", "H200", 2, 4, 4, 12, 0.6, 1, 1, 1.2};
    split.decode = {"H200", "H200", 3, 8, 8, 32, 0.7, 1, 48, 0.035};
    split.replicas = 1;
    split.meets_slo = true;
    split.chosen = true;
    split.kv_link = "infiniband 45 GB/s per GPU";
    spec.disaggregated = split;
    return spec;
}
}  // namespace

TEST_CASE("deploy: a chosen split is launched as SGLang PD workers and router, and as Dynamo workers",
          "[disaggregation][deploy]") {
    const std::vector<gpusel::Artefact> files = gpusel::render_launch(gpusel::DeployTarget::sglang, split_spec());
    REQUIRE(files.size() == 2);
    CHECK(files[0].name == "rag-inference.sglang.sh");
    CHECK(files[1].name == "rag-inference.dynamo.sh");
    const std::string& sglang = files[0].content;
    CHECK(contains(sglang,
                   "  prefill)\n    exec python3 -m sglang.launch_server \\\n"
                   "      --model-path deepseek-ai/DeepSeek-R1 \\\n      --tp-size 4 \\\n      --ep-size 4 \\\n"));
    CHECK(contains(sglang,
                   "      --disaggregation-mode prefill \\\n      --disaggregation-transfer-backend mooncake \\\n"
                   "      --host 0.0.0.0 \\\n      --port 30000\n    ;;\n"));
    CHECK(contains(sglang,
                   "  decode)\n    exec python3 -m sglang.launch_server \\\n"
                   "      --model-path deepseek-ai/DeepSeek-R1 \\\n      --tp-size 8 \\\n      --ep-size 8 \\\n"));
    CHECK(contains(sglang,
                   "      --max-running-requests 48 \\\n      --kv-cache-dtype fp8_e4m3 \\\n"
                   "      --disaggregation-mode decode \\\n"));
    // The router lists 2 prefill and 3 decode workers (one group).
    CHECK(contains(sglang,
                   "  router)\n    exec python3 -m sglang_router.launch_router \\\n"
                   "      --pd-disaggregation \\\n"
                   "      --prefill http://prefill-0:30000 \\\n      --prefill http://prefill-1:30000 \\\n"
                   "      --decode http://decode-0:30000 \\\n      --decode http://decode-1:30000 \\\n"
                   "      --decode http://decode-2:30000 \\\n      --host 0.0.0.0 \\\n      --port 8000\n"));
    const std::string& dynamo = files[1].content;
    CHECK(contains(dynamo, "  frontend)\n    DYN_HTTP_PORT=8000 exec python3 -m dynamo.frontend\n    ;;\n"));
    CHECK(contains(dynamo,
                   "  prefill)\n    exec python3 -m dynamo.sglang \\\n"
                   "      --model-path deepseek-ai/DeepSeek-R1 \\\n      --tp 4 \\\n"));
    CHECK(contains(dynamo,
                   "      --disaggregation-mode decode \\\n      --disaggregation-bootstrap-port 12345 \\\n"
                   "      --disaggregation-transfer-backend nixl \\\n      --host 0.0.0.0\n"));
    // Without a split the sglang target writes one co-located replica, as before.
    gpusel::LaunchSpec plain = split_spec();
    plain.disaggregated.reset();
    const std::vector<gpusel::Artefact> single = gpusel::render_launch(gpusel::DeployTarget::sglang, plain);
    REQUIRE(single.size() == 1);
    CHECK_FALSE(contains(single[0].content, "--disaggregation-mode"));
}

TEST_CASE("deploy --verify: a PD launch is read back and held to the plan's split",
          "[disaggregation][deploy][verify]") {
    const gpusel::LaunchSpec spec = split_spec();
    const std::vector<gpusel::Artefact> files = gpusel::render_launch(gpusel::DeployTarget::sglang, spec);
    REQUIRE(files.size() == 2);
    // The SGLang script as written: both workers and the router, every setting as planned.
    const gpusel::LaunchSettings sglang = gpusel::read_launch_settings(files[0].content, files[0].name);
    CHECK(sglang.kind == "sglang PD launch");
    REQUIRE(sglang.prefill_worker);
    REQUIRE(sglang.decode_worker);
    CHECK(sglang.prefill_worker->tensor_parallel == 4);
    CHECK(sglang.prefill_worker->expert_parallel == 4);
    CHECK(sglang.decode_worker->tensor_parallel == 8);
    CHECK(sglang.decode_worker->expert_parallel == 8);
    CHECK(sglang.decode_worker->max_num_seqs == 48);
    CHECK(sglang.prefill_workers == 2);
    CHECK(sglang.decode_workers == 3);
    CHECK(gpusel::compare_launch(spec, sglang).empty());
    // Dynamo's workers (--tp) register themselves: no router, no worker count to check.
    const gpusel::LaunchSettings dynamo = gpusel::read_launch_settings(files[1].content, files[1].name);
    CHECK(dynamo.kind == "dynamo PD launch");
    CHECK_FALSE(dynamo.prefill_workers);
    CHECK(gpusel::compare_launch(spec, dynamo).empty());

    // Edited: the decode workers at TP4 without EP, one decode worker dropped from the router.
    const std::string edited_text = R"(#!/usr/bin/env bash
case "$1" in
  prefill) exec python3 -m sglang.launch_server --model-path m --tp-size 4 --ep-size 4 --disaggregation-mode prefill ;;
  decode) exec python3 -m sglang.launch_server --model-path m --tp-size 4 --max-running-requests 48 \
      --disaggregation-mode=decode ;;
  router) exec python3 -m sglang_router.launch_router --pd-disaggregation --prefill http://p0:30000 \
      --prefill http://p1:30000 --decode http://d0:30000 --decode http://d1:30000 ;;
esac
)";
    const gpusel::LaunchSettings edited = gpusel::read_launch_settings(edited_text, "pd.sh");
    REQUIRE(edited.decode_worker);
    CHECK(edited.decode_worker->line == 4);
    // Serving GPUs: 2 prefill × TP4 + 2 decode × TP4 = 16 launched; the plan 2 × 4 + 3 × 8 = 32,
    // and (1 × 4 + 1 × 8) = 12 spare.
    const std::vector<std::string> expected = {
        "decode worker: tensor-parallel size 4; the plan sized decode workers of 8 GPUs",
        "decode worker: expert-parallel size 1 (SGLang's default); the plan's decode estimate ran 8",
        "the router lists 2 decode workers; the plan has 3 per group × 1 group",
        "16 GPUs serve behind the router; the plan has 32 (and 12 spare)"};
    CHECK(gpusel::compare_launch(spec, edited) == expected);

    // The same launch against a plan that serves the role co-located: one finding.
    gpusel::LaunchSpec colocated = spec;
    colocated.disaggregated.reset();
    CHECK(gpusel::compare_launch(colocated, sglang) ==
          std::vector<std::string>{"a prefill/decode launch (--disaggregation-mode); the plan serves this role "
                                   "co-located on 16x H200 (tp8 pp1 dp1): deployment.disaggregated chose no split"});
}

TEST_CASE("deploy: co-located serving launches run the expert parallel the estimate ran",
          "[disaggregation][deploy][expert_parallel]") {
    gpusel::LaunchSpec spec = split_spec();
    spec.disaggregated.reset();
    spec.expert_parallel = 8;     // TP8 replicas, EP8 (inference.expert_parallel: 8)
    spec.memory_fraction = 0.85;  // every engine's command then states it
    const auto launch = [&](gpusel::DeployTarget target) {
        const std::vector<gpusel::Artefact> files = gpusel::render_launch(target, spec);
        REQUIRE(files.size() == 1);
        return files[0].content;
    };
    const std::string sglang = launch(gpusel::DeployTarget::sglang);
    CHECK(contains(sglang, "  --tp-size 8 \\\n  --ep-size 8 \\\n"));
    const std::string vllm = launch(gpusel::DeployTarget::vllm);
    CHECK(contains(vllm, "  --tensor-parallel-size 8 \\\n  --enable-expert-parallel \\\n"));
    const std::string trtllm = launch(gpusel::DeployTarget::tensorrt_llm);
    CHECK(contains(trtllm, "  --pp_size 1 \\\n  --ep_size 8 \\\n"));
    // Each reads back as agreeing; without the flag the engine's default EP 1 runs.
    for (const std::string& text : {sglang, vllm, trtllm}) {
        CHECK(gpusel::compare_launch(spec, gpusel::read_launch_settings(text, "serve.sh")).empty());
    }
    std::string without = vllm;
    const std::string flag_line = "  --enable-expert-parallel \\\n";
    without.replace(without.find(flag_line), flag_line.size(), "");
    CHECK(gpusel::compare_launch(spec, gpusel::read_launch_settings(without, "serve.sh")) ==
          std::vector<std::string>{"expert-parallel size 1 (the engine's default); the speed estimate ran 8: the MoE "
                                   "layers' all-to-all and expert balance were estimated for it"});
    // vLLM's flag spans all TP GPUs: EP 4 within TP 8 is not expressible, and said so.
    spec.expert_parallel = 4;
    const std::string narrower = launch(gpusel::DeployTarget::vllm);
    CHECK_FALSE(contains(narrower, flag_line));
    CHECK(contains(narrower, "# assumption: expert parallel = off: the estimate ran EP 4 within TP 8"));
    // A dense model (EP 1): no flag, and no finding without one.
    spec.expert_parallel = 1;
    const std::string dense = launch(gpusel::DeployTarget::sglang);
    CHECK_FALSE(contains(dense, "--ep-size"));
    CHECK(gpusel::compare_launch(spec, gpusel::read_launch_settings(dense, "serve.sh")).empty());
}

TEST_CASE("disaggregation: plan, perf and deploy run the same expert parallel", "[disaggregation][expert_parallel]") {
    // examples/deepseek-r1-disagg.yaml at 4 req/s: inference.expert_parallel 8.
    const Workload workload = load(rag);
    gpusel::Project project;
    project.name = workload.name;
    project.workloads.push_back(workload);
    const PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    const RolePlan& plan = report.roles.front();
    REQUIRE(plan.winner);
    REQUIRE(plan.winner->perf.inference);
    REQUIRE(plan.disaggregated);
    // EP 8 = min(inference.expert_parallel 8, TP 8, 256 experts) everywhere.
    CHECK(plan.winner->layout.tensor_parallel == 8);
    CHECK(plan.winner->perf.inference->expert_parallel == 8);
    CHECK(plan.disaggregated->prefill.expert_parallel == 8);
    CHECK(plan.disaggregated->decode.expert_parallel == 8);
    // `gpusel perf --gpu G --count N --tensor-parallel 8` estimates the pick at the same EP.
    const gpusel::GpuSpec* gpu = catalog().find(plan.winner->gpu);
    REQUIRE(gpu != nullptr);
    gpusel::PerfQuery query;
    query.layout = plan.winner->layout;
    query.precision = plan.winner->precision;
    query.stack = plan.winner->perf.stack;
    const gpusel::PerfEstimate perf = gpusel::estimate_perf(workload, *gpu, query, efficiency());
    REQUIRE(perf.inference);
    CHECK(perf.inference->expert_parallel == 8);
    // `gpusel deploy` launches it (co-located replicas: --ep-size 8 on SGLang).
    const gpusel::LaunchSpec spec = gpusel::make_launch_spec(report, plan, catalog(), "rag.yaml");
    CHECK(spec.expert_parallel == 8);
    // A dense model runs EP 1.
    const RolePlan dense = plan_one(load(chat_head));
    REQUIRE(dense.winner);
    CHECK(dense.winner->perf.inference->expert_parallel == 1);
}
