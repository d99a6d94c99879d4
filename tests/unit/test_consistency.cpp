// Cross-command consistency (issue 33): for every pick of every example and of a generated grid
// of serving and training workloads, what `plan` says is what `perf`, `check` and `deploy` say
// of the same configuration:
// - perf, given the pick's exact configuration (serving GPUs, layout, precision, batch or
//   micro-batch and recompute), reproduces the plan's figures exactly;
// - a serving pick's replicas are the fewest perf finds meeting the SLO (one fewer misses it);
// - check's evaluation of a line ordering the pick (evaluate_fixed: its count and acquisition)
//   meets the target at the same figures and cost;
// - deploy's launch of the pick, read back (deploy --verify), contradicts nothing, and a DeepSpeed
//   configuration multiplies out (train_batch_size = micro-batch × accumulation × GPUs).

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "deploy/deploy.hpp"
#include "plan/plan.hpp"
#include "plan/redundancy.hpp"
#include "support/test_support.hpp"

using namespace gpusel;

namespace {

using test::catalog;
using test::efficiency;
using test::models;

struct Checked {
    int picks = 0;
    int serving_below = 0;  // serving picks whose one-fewer-replica count was checked to miss
    int launches = 0;
};

PerfQuery pick_query(const Candidate& pick) {
    PerfQuery query;
    query.layout = pick.layout;
    query.precision = pick.precision;
    if (pick.perf.training) {
        query.micro_batch = pick.micro_batch;
        query.checkpointing = pick.checkpointing;
    } else {
        query.batch = pick.batch;
    }
    return query;
}

void check_perf_reproduces(const Workload& workload, const GpuSpec& gpu, const Candidate& pick, Checked& checked) {
    const PerfEstimate again = estimate_perf(workload, gpu, pick_query(pick), efficiency());
    CHECK(again.precision == pick.precision);
    if (pick.perf.training) {
        REQUIRE(again.training);
        CHECK(again.training->step_time_s == pick.perf.training->step_time_s);
        CHECK(again.training->global_batch == pick.perf.training->global_batch);
        CHECK(again.training->meets_deadline == pick.perf.training->meets_deadline);
        CHECK(again.training->meets_deadline);
        return;
    }
    REQUIRE(again.inference);
    const InferencePerf& planned = *pick.perf.inference;
    CHECK(again.inference->batch == planned.batch);
    CHECK(again.inference->output_tokens_per_s == planned.output_tokens_per_s);
    CHECK(again.inference->p99_tpot_s == planned.p99_tpot_s);
    CHECK(again.inference->p99_ttft_s == planned.p99_ttft_s);
    CHECK(again.inference->meets_slo);
    CHECK(pick.layout.data_parallel == pick.serving_replicas());
    // `gpusel perf --count <the pick's count>`: the GPUs ordered, deployment.redundancy's spares
    // held out of serving by the planner's rule (serving_of_order, what the command calls), state
    // the pick's tail and throughput.
    const int ordered_replica_gpus = pick.layout.tensor_parallel * pick.layout.pipeline_parallel;
    CHECK(pick.count == pick.replicas * ordered_replica_gpus);
    Layout ordered = pick.layout;
    ordered.data_parallel = pick.count / ordered_replica_gpus;
    const ServingOfOrder as_ordered = serving_of_order(workload, ordered);
    CHECK(as_ordered.spare_replicas == pick.spare_replicas);
    CHECK(as_ordered.serving.data_parallel == pick.serving_replicas());
    PerfQuery count_query = pick_query(pick);
    count_query.layout = as_ordered.serving;
    const PerfEstimate at_count = estimate_perf(workload, gpu, count_query, efficiency());
    REQUIRE(at_count.inference);
    CHECK(at_count.inference->p99_tpot_s == planned.p99_tpot_s);
    CHECK(at_count.inference->p99_ttft_s == planned.p99_ttft_s);
    CHECK(at_count.inference->output_tokens_per_s == planned.output_tokens_per_s);
    // The fewest replicas meeting the SLO, plus those filling whole units bought anyway (no
    // replica's worth of GPUs is left idle).
    const int replica_gpus = pick.layout.tensor_parallel * pick.layout.pipeline_parallel;
    CHECK(pick.cost.offer.idle_gpus < replica_gpus);
    const int fewest = pick.serving_replicas() - pick.unit_fill_replicas - pick.margin_replicas;
    PerfQuery at_fewest = pick_query(pick);
    at_fewest.layout.data_parallel = fewest;
    CHECK(estimate_perf(workload, gpu, at_fewest, efficiency()).inference->meets_slo);
    if (fewest > 1) {
        PerfQuery fewer = at_fewest;
        --fewer.layout.data_parallel;
        CHECK_FALSE(estimate_perf(workload, gpu, fewer, efficiency()).inference->meets_slo);
        ++checked.serving_below;
    }
}

void check_fixed_line(const Workload& workload, const GpuSpec& gpu, const Candidate& pick) {
    const FixedEvaluation line =
        evaluate_fixed(workload, catalog(), gpu, pick.count, pick.acquisition, std::nullopt, nullptr, efficiency());
    INFO("check's line: " << line.why_not);
    REQUIRE(line.candidate);
    const Candidate& ordered = *line.candidate;
    INFO("check's layout: " << describe(ordered.layout) << " " << to_string(ordered.precision));
    CHECK(ordered.count == pick.count);
    CHECK(ordered.cost.tco_usd == Approx(pick.cost.tco_usd).epsilon(1e-9));
    if (pick.perf.inference) {
        // Check judges the hardware ordered, in its own best layout: it must pass.
        REQUIRE(ordered.perf.inference);
        CHECK(ordered.perf.inference->meets_slo);
    } else {
        REQUIRE(ordered.perf.training);
        CHECK(ordered.perf.training->meets_deadline);
    }
}

void check_launch(const PlanReport& report, const RolePlan& role, Checked& checked) {
    const LaunchSpec spec = make_launch_spec(report, role, catalog(), "w.yaml");
    if (spec.training) {
        const DeployTarget target =
            spec.lora_rank > 0 || (spec.layout.tensor_parallel == 1 && spec.layout.pipeline_parallel == 1)
                ? DeployTarget::deepspeed
                : DeployTarget::megatron;
        if (!model_mismatch(target, spec).empty()) {
            return;
        }
        const std::vector<Artefact> files = render_launch(target, spec);
        for (const Artefact& file : files) {
            if (file.name.size() > 15 && file.name.substr(file.name.size() - 15) == ".ds_config.json") {
                const auto config = nlohmann::json::parse(file.content);
                CHECK(config.at("train_batch_size").get<int>() ==
                      config.at("train_micro_batch_size_per_gpu").get<int>() *
                          config.at("gradient_accumulation_steps").get<int>() * spec.gpus);
            }
        }
        const std::vector<std::string> findings =
            compare_launch(spec, read_launch_settings(files.front().content, "launch.sh"));
        CHECK(findings == std::vector<std::string>{});
        ++checked.launches;
        return;
    }
    if (!spec.decoder_llm || !model_mismatch(DeployTarget::vllm, spec).empty()) {
        return;
    }
    const std::string launch = render_launch(DeployTarget::vllm, spec).front().content;
    CHECK(compare_launch(spec, read_launch_settings(launch, "serve.sh")).empty());
    // The launch serves at the estimate's batch and in its precision.
    CHECK(launch.find(fmt::format("--max-num-seqs {} ", spec.max_num_seqs)) != std::string::npos);
    CHECK(spec.max_num_seqs == role.winner->batch);
    if (role.winner->precision == Precision::fp8 && role.workload.weights == WeightFormat::bf16) {
        CHECK(launch.find("--quantization fp8 ") != std::string::npos);
    }
    ++checked.launches;
}

// Everything above for one workload's pick, which it returns; none when the plan found nothing
// feasible.
std::optional<Candidate> check_workload(const Workload& workload, Checked& checked) {
    Project project;
    project.name = workload.name;
    project.workloads.push_back(workload);
    PlanOptions options;
    options.top = 1;
    const PlanReport report = make_plan(project, catalog(), efficiency(), options);
    REQUIRE(report.roles.size() == 1);
    const RolePlan& role = report.roles.front();
    if (!role.winner) {
        return std::nullopt;
    }
    const Candidate& pick = *role.winner;
    INFO(workload.name << ": " << pick.count << "x " << pick.gpu << " " << describe(pick.layout) << " "
                       << to_string(pick.precision));
    const GpuSpec& gpu = *catalog().find(pick.gpu);
    if (role.mix && role.mix->chosen) {
        // A chosen mixed fleet is ordered in the pick's place, one line per GPU type, each its part
        // as planned (test_mix.cpp); the launch still describes the pick's replica setup.
        REQUIRE(report.procurement.size() == role.mix->parts.size());
        for (std::size_t i = 0; i < role.mix->parts.size(); ++i) {
            CHECK(report.procurement[i].gpu == role.mix->parts[i].gpu);
            CHECK(report.procurement[i].tco_usd == role.mix->parts[i].tco_usd);
        }
    } else if (role.disaggregated && role.disaggregated->chosen && !role.disaggregated->order.empty()) {
        // A chosen prefill/decode split is ordered in the pick's place, one line per GPU type
        // (test_disaggregation.cpp); perf, check and deploy still hold to the co-located pick.
        REQUIRE(report.procurement.size() == role.disaggregated->order.size());
        for (std::size_t i = 0; i < role.disaggregated->order.size(); ++i) {
            CHECK(report.procurement[i].gpus == role.disaggregated->order[i].gpus);
        }
    } else if (role.fleet && role.fleet->ordered) {
        // An owned base plus a rented peak is ordered in the pick's place (test_fleet.cpp): the
        // owned line is the pick's GPU type.
        REQUIRE(!report.procurement.empty());
        CHECK(report.procurement.front().gpu == pick.gpu);
    } else {
        // The procurement line (CSV, XLSX and JSON render it field by field) orders the pick as planned.
        REQUIRE(report.procurement.size() == 1);
        CHECK(report.procurement.front().precision == pick.precision);
        CHECK(report.procurement.front().gpus ==
              pick.cost.offer.units * pick.cost.offer.gpus_per_unit + pick.cost.spare_gpus);
        CHECK(report.procurement.front().tco_usd == pick.cost.tco_usd);
    }
    check_perf_reproduces(workload, gpu, pick, checked);
    check_fixed_line(workload, gpu, pick);
    check_launch(report, role, checked);
    ++checked.picks;
    return pick;
}

Workload load(const std::string& text, const std::string& name) {
    return load_workload_text(text, name + ".yaml", LoadContext{&catalog(), &models()});
}

}  // namespace

TEST_CASE("consistency: a generated grid of serving workloads, plan against perf, check and deploy", "[consistency]") {
    Checked checked;
    int workloads = 0;
    for (const char* model : {"llama-3.2-3b", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "llama-3.1-70b"}) {
        for (const double rate : {2.0, 20.0, 60.0}) {
            for (const char* slo : {"{ttft: 300ms, tpot: 50ms}", "{ttft: 1s, tpot: 100ms}"}) {
                for (const char* precision : {"bf16", "[bf16, fp8]"}) {
                    for (const char* acquisition : {"buy-new", "cloud-on-demand"}) {
                        const std::string name = fmt::format("serve-{}", ++workloads);
                        const Workload workload = load(
                            fmt::format(
                                "format: 1\nname: {}\nkind: inference\nmodel: {{preset: {}}}\nprecision: "
                                "{}\nweights: bf16\ninference:\n  input_tokens: 1024\n  output_tokens: 256\n"
                                "  requests_per_s: {}\n  slo: {}\nconstraints:\n  max_gpus: 64\n  allow: "
                                "[L40S, A100-80GB-SXM4, H100-SXM5, H200-SXM, RTX-PRO-6000]\n  acquisitions: [{}]\n",
                                name, model, precision, rate, slo, acquisition),
                            name);
                        INFO(name << ": " << model << " " << rate << " req/s " << slo << " " << precision << " "
                                  << acquisition);
                        check_workload(workload, checked);
                    }
                }
            }
        }
    }
    CHECK(workloads == 120);
    // Most of the grid is feasible and most picks need several replicas: the checks ran.
    CHECK(checked.picks >= 100);
    CHECK(checked.serving_below >= 40);
    CHECK(checked.launches == checked.picks);
}

TEST_CASE("consistency: a generated grid of training workloads, plan against perf, check and deploy", "[consistency]") {
    Checked checked;
    int workloads = 0;
    for (const char* model : {"llama-3.2-1b", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b"}) {
        for (const char* method : {"  lora: {rank: 16}\n", ""}) {
            for (const char* tokens : {"1B", "20B"}) {
                for (const char* deadline : {"", "  deadline: 7d\n", "  deadline: 1d\n"}) {
                    for (const char* acquisition : {"buy-new", "cloud-on-demand"}) {
                        const std::string name = fmt::format("train-{}", ++workloads);
                        const Workload workload = load(
                            fmt::format("format: 1\nname: {}\nkind: {}\nmodel: {{preset: {}}}\nprecision: "
                                        "bf16\ntraining:\n  optimizer: adamw\n  micro_batch: 1\n  global_batch: 64\n"
                                        "  seq_len: 2048\n  checkpointing: full\n  dataset_tokens: {}\n{}{}"
                                        "constraints:\n  max_gpus: 64\n  allow: [L40S, A100-80GB-SXM4, H100-SXM5]\n"
                                        "  acquisitions: [{}]\n",
                                        name, method[0] ? "fine-tuning" : "training", model, tokens, method, deadline,
                                        acquisition),
                            name);
                        INFO(name << ": " << model << (method[0] ? " LoRA " : " full ") << tokens << " " << deadline
                                  << " " << acquisition);
                        check_workload(workload, checked);
                    }
                }
            }
        }
    }
    CHECK(workloads == 96);  // with the serving grid's 120: 216 generated workloads, dense and MoE
    CHECK(checked.picks >= 70);
    CHECK(checked.launches == checked.picks);
}

TEST_CASE("consistency: every example's picks, plan against perf, check and deploy", "[consistency]") {
    Checked checked;
    for (const char* file :
         {"examples/chat-llama2-13b-int4.yaml", "examples/llama-finetune.yaml", "examples/llama3-70b-finetune.yaml",
          "examples/pretrain-7b.yaml", "examples/roberta-finetune.yaml", "examples/vit-base-training.yaml",
          "examples/yolov8-training.yaml", "examples/bert-embeddings.yaml", "examples/sdxl-serving.yaml",
          "examples/recsys-serving.yaml", "examples/smart-support/dev.yaml", "examples/smart-support/train.yaml",
          "examples/chat-length-mix.yaml", "examples/chat-diurnal.yaml", "examples/serve-by-date.yaml",
          "examples/deepseek-r1-disagg.yaml", "examples/finetune-then-serve/serve.yaml"}) {
        INFO(file);
        const Workload workload = load_workload_file(test::source_path(file), LoadContext{&catalog(), &models()});
        CHECK(check_workload(workload, checked).has_value());
    }
    CHECK(checked.picks == 17);
}

TEST_CASE("consistency: Llama-3.1-8B at 50 req/s on RTX 5090 plans the count perf confirms", "[consistency]") {
    // The case the division over-bought (53 GPUs where perf found 19 meeting the SLO): the plan's
    // serving replicas are the fewest perf finds, and one spare (n+1) is all it adds.
    const Workload workload = load(
        "format: 1\nname: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\nprecision: bf16\ninference:\n"
        "  input_tokens: 512\n  output_tokens: 256\n  requests_per_s: 50\n  slo: {ttft: 500ms, tpot: 40ms}\n"
        "constraints:\n  max_gpus: 64\n  allow: [RTX-5090]\n  tiers: [hyperscaler, neocloud, marketplace]\n",
        "rtx5090");
    Checked checked;
    const std::optional<Candidate> planned = check_workload(workload, checked);
    REQUIRE(planned);
    const Candidate& pick = *planned;
    CHECK(pick.gpu == "RTX-5090");
    CHECK(pick.spare_replicas == 1);
    CHECK(pick.unit_fill_replicas == 0);
    // perf at one replica says how many it takes: the plan serves with exactly that many.
    PerfQuery one;
    one.layout.tensor_parallel = pick.layout.tensor_parallel;
    one.batch = pick.batch;
    const PerfEstimate single = estimate_perf(workload, *catalog().find("RTX-5090"), one, efficiency());
    REQUIRE(single.inference);
    CHECK(single.inference->replicas_needed == pick.serving_replicas() - pick.margin_replicas);
    CHECK(pick.count == (pick.serving_replicas() + 1) * pick.layout.tensor_parallel);
    // At most one replica more than perf's count, and the reason: at the decode band's 10th
    // percentile (0.83 × the estimate, objective.confidence 0.9) the fleet without it would not
    // carry 50 req/s, with it it does.
    CHECK(pick.margin_replicas <= 1);
    if (pick.margin_replicas == 1) {
        PerfQuery fleet;
        fleet.layout.tensor_parallel = pick.layout.tensor_parallel;
        fleet.batch = pick.batch;
        fleet.layout.data_parallel = pick.serving_replicas() - 1;
        const double without = estimate_perf(workload, *catalog().find("RTX-5090"), fleet, efficiency())
                                   .inference->max_requests_per_s_meeting_slo;
        CHECK(without * 0.83 < 50);
        CHECK(pick.perf.inference->max_requests_per_s_meeting_slo * 0.83 >= 50);
        // check agrees: the line one replica smaller meets the SLO at the estimate but not at the
        // confidence level, so it is no "sufficient" alternative to the pick.
        const gpusel::GpuSpec& gpu = *catalog().find("RTX-5090");
        CHECK(
            evaluate_fixed(workload, catalog(), gpu, pick.count, pick.acquisition, std::nullopt, nullptr, efficiency())
                .holds_at_confidence);
        CHECK_FALSE(evaluate_fixed(workload, catalog(), gpu, pick.count - 1, pick.acquisition, std::nullopt, nullptr,
                                   efficiency())
                        .holds_at_confidence);
    }
}

TEST_CASE("consistency: a model larger than one node serves with pipeline stages across nodes", "[consistency]") {
    // Llama-3.1-405B in bf16 is 810 GB of weights: more than one 8 × H100 node holds (8 × 80 GB).
    // vLLM's multi-node recipe splits it TP8 inside each node and PP2 across two; the planner
    // must find that layout (it searched TP up to 8 only), and perf's own layout for 16 GPUs must
    // be the same one.
    const Workload workload = load(
        "format: 1\nname: big\nkind: inference\nmodel: {preset: llama-3.1-405b}\nprecision: bf16\ninference:\n"
        "  input_tokens: 1024\n  output_tokens: 256\n  requests_per_s: 2\n  slo: {ttft: 2s, tpot: 100ms}\n"
        "constraints:\n  allow: [H100-SXM5]\n",
        "llama405");
    Checked checked;
    const std::optional<Candidate> planned = check_workload(workload, checked);
    REQUIRE(planned);
    CHECK(planned->layout.tensor_parallel == 8);
    CHECK(planned->layout.pipeline_parallel == 2);
    CHECK(planned->count == 16 * planned->replicas);
    const GpuSpec& h100 = *catalog().find("H100-SXM5");
    const FittingLayout fitting = fitting_layout(workload, h100, 16, ServingStack::automatic);
    REQUIRE(fitting.found());
    CHECK(fitting.layout.tensor_parallel == 8);
    CHECK(fitting.layout.pipeline_parallel == 2);
    CHECK(fitting.layout.data_parallel == 1);
    // Within one node the split stays tensor parallel (8 GPUs do not hold it: perf then says so).
    const FittingLayout one_node = fitting_layout(workload, h100, 8, ServingStack::automatic);
    REQUIRE(one_node.found());
    CHECK(one_node.layout.tensor_parallel == 8);
    CHECK(one_node.layout.pipeline_parallel == 1);
}

TEST_CASE("consistency: a plan that orders a split, a mix or a fleet in the pick's place heads with that order",
          "[consistency]") {
    struct Expected {
        const char* file;
        const char* ordered;  // how the headline starts: the GPUs of the procurement's lines
        const char* resale;   // the advice's expected resale: the ordered lines', by hand below
    };
    // deepseek-r1-disagg: the co-located pick's 8 HGX B200 servers resell for $1,627,200, $203,400
    // each; the split orders 6 (48 GPUs: 2 prefill + 3 decode workers of TP8 and one spare worker):
    // 6 × $203,400 = $1,220,400. chat-diurnal: the pick's 4
    // H100 NVL cards resell for $50,400, $12,600 each; the owned base is 3: $37,800.
    // chat-length-mix: 8 RTX PRO 6000 and one HGX B200 server (8 GPUs) in place of 40 cards.
    for (const Expected& expected :
         {Expected{"examples/deepseek-r1-disagg.yaml", "48× B200, buy new: disaggregated", "$1,220,400"},
          Expected{"examples/chat-diurnal.yaml", "3× H100-NVL buy new + up to 1× H100-NVL cloud on-demand", "$37,800"},
          Expected{"examples/chat-length-mix.yaml", "8× RTX-PRO-6000 + 8× B200, buy new: a mixed fleet", nullptr}}) {
        INFO(expected.file);
        Project project;
        project.workloads.push_back(
            load_workload_file(test::source_path(expected.file), LoadContext{&catalog(), &models()}));
        const PlanReport report = make_plan(project, catalog(), efficiency(), PlanOptions{});
        const RolePlan& role = report.roles.front();
        REQUIRE(role.winner);
        CHECK(role.ordered_in_place.rfind(expected.ordered, 0) == 0);
        const auto resale = std::find_if(role.advice.begin(), role.advice.end(), [](const std::string& line) {
            return line.rfind("expected resale ", 0) == 0;
        });
        REQUIRE(resale != role.advice.end());
        if (expected.resale != nullptr) {
            CHECK(resale->find(std::string("expected resale ") + expected.resale + " ") == 0);
        }
        // No sentence speaks of the pick's own price once the order replaces it.
        for (const std::string& line : role.advice) {
            CHECK(line.rfind("the pick rests on", 0) == std::string::npos);
        }
    }
    // A plan whose pick is what it orders keeps its headline.
    Project plain;
    plain.workloads.push_back(load_workload_file(test::source_path("examples/chat-llama2-13b-int4.yaml"),
                                                 LoadContext{&catalog(), &models()}));
    CHECK(make_plan(plain, catalog(), efficiency(), PlanOptions{}).roles.front().ordered_in_place.empty());
}
