// Request-length distributions (inputs/workload_serving.cpp) and the mixed-fleet search
// (plan/mix.cpp): the bins, the errors, and the mix's cost against its parts planned alone.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "deploy/deploy.hpp"
#include "inputs/length_distribution.hpp"
#include "plan/internal.hpp"
#include "plan/plan.hpp"
#include "support/test_support.hpp"

using gpusel::LengthDistribution;
using gpusel::MixPlan;
using gpusel::RolePlan;
using gpusel::Workload;
using gpusel::test::input_errors;

namespace {
using gpusel::test::catalog;
using gpusel::test::efficiency;
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
    gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency());
    REQUIRE(report.roles.size() == 1);
    return report.roles.front();
}
std::string chat(const std::string& input_tokens, const std::string& extra = "") {
    return fmt::format(R"(name: chat
kind: inference
model: {{preset: llama-3.1-8b}}
inference: {{input_tokens: {}, output_tokens: 250, requests_per_s: 20, slo: {{ttft: 2s, tpot: 50ms}}}}
deployment: {{horizon: 24mo}}
{}
)",
                       input_tokens, extra);
}
bool assumed(const Workload& workload, const std::string& field, const std::string& value) {
    return std::any_of(workload.assumptions.begin(), workload.assumptions.end(),
                       [&](const gpusel::Assumption& a) { return a.field == field && a.value == value; });
}
}  // namespace

TEST_CASE("lengths: the log-normal bins reproduce p50 and p90", "[mix][workload]") {
    const Workload workload = load(chat("{p50: 300, p90: 4000}"));
    const LengthDistribution& lengths = workload.inference.input_length;
    REQUIRE(lengths.bins.size() == 8);
    // mu = ln 300, sigma = ln(4000/300) / 1.28155 = 2.02120; bin b at exp(mu + sigma z(mid_b)),
    // mid = 0.075, 0.225, 0.375, 0.5, 0.625, 0.775, 0.9, 0.975 (Python statistics.NormalDist):
    // 16.35, 65.17, 157.55, 300, 571.24, 1381.09, 4000, 15760.38.
    const int expected[] = {16, 65, 158, 300, 571, 1381, 4000, 15760};
    const double shares[] = {0.15, 0.15, 0.15, 0.10, 0.15, 0.15, 0.10, 0.05};
    double sum = 0;
    for (std::size_t bin = 0; bin < 8; ++bin) {
        CHECK(lengths.bins[bin].tokens == expected[bin]);
        CHECK(lengths.bins[bin].share == Approx(shares[bin]).margin(1e-12));
        sum += lengths.bins[bin].share;
    }
    CHECK(sum == Approx(1).margin(1e-12));
    CHECK(lengths.quantile_tokens(0.5) == 300);
    CHECK(lengths.quantile_tokens(0.9) == 4000);
    CHECK(lengths.p50_tokens == 300);
    CHECK(lengths.p90_tokens == 4000);
    // Mean: 0.15 (16 + 65 + 158 + 571 + 1381) + 0.10 (300 + 4000) + 0.05 × 15760 = 1546.65 → 1547.
    CHECK(lengths.mean_tokens() == Approx(1546.65).margin(1e-9));
    CHECK(workload.inference.input_tokens == 1547);
    CHECK(assumed(workload, "inference.input_tokens", "1547"));
    // Routing thresholds at the bin edges: the 45-55 % bin ends at the 55th percentile,
    // exp(mu + 2.02120 × 0.125661) = 386.75 → 387; the last bin ends at its own length.
    CHECK(gpusel::length_bin_upper_tokens(lengths, 3) == 387);
    CHECK(gpusel::length_bin_upper_tokens(lengths, 7) == 15760);
}

TEST_CASE("lengths: a histogram keeps its lengths, sorted, and its exact mean", "[mix][workload]") {
    const Workload workload = load(chat("{histogram: [[4000, 0.3], [200, 0.7]]}"));
    const LengthDistribution& lengths = workload.inference.input_length;
    REQUIRE(lengths.bins.size() == 2);
    CHECK(lengths.bins[0].tokens == 200);
    CHECK(lengths.bins[1].tokens == 4000);
    // 0.7 × 200 + 0.3 × 4000 = 140 + 1200 = 1340.
    CHECK(lengths.mean_tokens() == Approx(1340).margin(1e-9));
    CHECK(workload.inference.input_tokens == 1340);
    CHECK(lengths.quantile_tokens(0.7) == 200);
    CHECK(lengths.quantile_tokens(0.71) == 4000);
    CHECK(gpusel::length_bin_upper_tokens(lengths, 0) == 200);
    CHECK(lengths.p50_tokens == 0);
    // One length stays one length: no distribution, no derived assumption.
    const Workload single = load(chat("512"));
    CHECK_FALSE(single.inference.input_length.given());
    CHECK(single.inference.input_tokens == 512);
}

TEST_CASE("lengths: bad distributions are errors at their position, with the fix", "[mix][workload]") {
    CHECK(errors(chat("{p50: 4000, p90: 300}")) ==
          std::vector<std::string>{"w.yaml:4:44: inference.input_tokens.p90: p90 (300) is below p50 (4000): 90 % of "
                                   "requests are at most p90 tokens, so it is at least the median; swap them?"});
    CHECK(
        errors(chat("{p50: 300, p95: 4000}")) ==
        std::vector<std::string>{"w.yaml:4:27: inference.input_tokens.p90: missing required field",
                                 "w.yaml:4:38: inference.input_tokens.p95: unknown field 'p95', did you mean 'p90'?"});
    const std::vector<std::string> sum = errors(chat("{histogram: [[200, 0.7], [4000, 0.2]]}"));
    REQUIRE(sum.size() == 1);
    CHECK(sum.front().find("the shares sum to 0.9, not 1") != std::string::npos);
    const std::vector<std::string> zero = errors(chat("{histogram: [[0, 1]]}"));
    REQUIRE(zero.size() == 1);
    CHECK(zero.front().find("inference.input_tokens.histogram[0][0]") != std::string::npos);
    // Llama-2-13B has 4,096 positions: the 95-100 % bin of p50 300, p90 4000 is 15,760 tokens.
    const std::vector<std::string> context = errors(R"(name: chat
kind: inference
model: {preset: llama-2-13b}
inference: {input_tokens: {p50: 300, p90: 4000}, output_tokens: 250}
)");
    REQUIRE(context.size() == 1);
    CHECK(context.front().find("the longest bins, 15760 input + 250 output tokens = 16010, exceed the model's 4096 "
                               "positions") != std::string::npos);
}

TEST_CASE("mix: its TCO is its parts', each part the plan of its share alone", "[mix]") {
    const Workload workload = load(chat("{p50: 300, p90: 4000}", "constraints: {vendor: [nvidia]}"));
    const RolePlan plan = plan_one(workload);
    REQUIRE(plan.winner);
    REQUIRE(plan.mix);
    const MixPlan& mix = *plan.mix;
    REQUIRE(mix.parts.size() == 2);
    CHECK(mix.tco_usd == Approx(mix.parts[0].tco_usd + mix.parts[1].tco_usd).epsilon(1e-12));
    CHECK(mix.best_single_tco_usd == plan.winner->cost.tco_usd);
    CHECK(mix.saving_fraction == Approx(1 - mix.tco_usd / mix.best_single_tco_usd).epsilon(1e-12));
    CHECK(mix.parts[0].request_share + mix.parts[1].request_share == Approx(1).margin(1e-12));
    CHECK(mix.parts[0].gpu != mix.parts[1].gpu);
    // Each part again, planned by make_plan as a workload of its own: its share of 20 req/s at the
    // mean length of its bins, on its GPU type alone, its engine accepting the longest request
    // routed to it (max_model_len: the part's longest input + 250 output tokens).
    const LengthDistribution& lengths = workload.inference.input_length;
    double cumulative = 0;
    std::size_t first = 0;
    for (std::size_t index = 0; index < mix.parts.size(); ++index) {
        const gpusel::MixPart& part = mix.parts[index];
        double weighted = 0;
        double share = 0;
        std::size_t bin = first;
        for (; bin < lengths.bins.size(); ++bin) {
            weighted += lengths.bins[bin].share * lengths.bins[bin].tokens;
            share += lengths.bins[bin].share;
            if (gpusel::length_bin_upper_tokens(lengths, bin) == part.max_input_tokens) {
                ++bin;
                break;
            }
        }
        first = bin;
        cumulative += share;
        CHECK(share == Approx(part.request_share).margin(1e-12));
        const int mean = static_cast<int>(std::lround(weighted / share));
        const Workload alone = load(fmt::format(R"(name: part
kind: inference
model: {{preset: llama-3.1-8b}}
inference: {{input_tokens: {}, output_tokens: 250, requests_per_s: {}, slo: {{ttft: 2s, tpot: 50ms}}}}
runtime: {{max_model_len: {}}}
deployment: {{horizon: 24mo}}
constraints: {{vendor: [nvidia], allow: [{}]}}
)",
                                                mean, 20 * share, part.max_input_tokens + 250, part.gpu));
        const RolePlan single = plan_one(alone);
        REQUIRE(single.winner);
        CHECK(single.winner->cost.tco_usd == Approx(part.tco_usd).epsilon(1e-9));
        CHECK(single.winner->replicas == part.replicas);
    }
    CHECK(cumulative == Approx(1).margin(1e-12));
    // Chosen exactly when the saving passes the tie margin: max($50, 2 % of the single type's TCO).
    const double margin = std::max(gpusel::tie_tolerance_usd, gpusel::tie_tolerance_fraction * mix.best_single_tco_usd);
    CHECK(mix.chosen == (mix.best_single_tco_usd - mix.tco_usd > margin));
    CHECK(mix.routing_rule.rfind("input ≤ ", 0) == 0);
    CHECK(mix.routing_rule.find(" tokens → " + mix.parts[0].gpu + ", longer → " + mix.parts[1].gpu) !=
          std::string::npos);
}

TEST_CASE("mix: a chosen mix is what the procurement orders, one line per GPU type", "[mix][procurement]") {
    // examples/chat-length-mix.yaml: 200 req/s, the mix saves 3 % (more than the 2 % margin).
    gpusel::Project project;
    project.workloads.push_back(gpusel::load_workload_file(gpusel::test::source_path("examples/chat-length-mix.yaml"),
                                                           gpusel::LoadContext{&catalog(), &models()}));
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    const RolePlan& plan = report.roles.front();
    REQUIRE(plan.mix);
    REQUIRE(plan.mix->chosen);
    REQUIRE(report.procurement.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        const gpusel::MixPart& part = plan.mix->parts[i];
        const gpusel::ProcurementLine& line = report.procurement[i];
        CHECK(line.gpu == part.gpu);
        CHECK(line.tco_usd == part.tco_usd);
        CHECK(line.gpus == part.gpus);
        CHECK(line.reason.rfind("mixed fleet (" + plan.mix->routing_rule + ")", 0) == 0);
    }
    CHECK(report.total_tco_usd == Approx(plan.mix->tco_usd).epsilon(1e-12));
    CHECK(report.total_tco_usd < plan.winner->cost.tco_usd);
    // deploy launches one replica setup and says what the plan orders instead.
    const gpusel::LaunchSpec launch = gpusel::make_launch_spec(report, plan, catalog(), "mix.yaml");
    const auto fleet = std::find_if(launch.assumptions.begin(), launch.assumptions.end(),
                                    [](const gpusel::LaunchAssumption& a) { return a.setting == "fleet"; });
    REQUIRE(fleet != launch.assumptions.end());
    CHECK(fleet->value == "mixed: " + plan.mix->routing_rule);
}

TEST_CASE("mix: where one type is cheaper, or the only one, it says why", "[mix]") {
    // At 20 req/s the 5× RTX-PRO-6000 pick (4 replicas + 1 spare) serves every length; split, each
    // fleet keeps its own spare and the longer part alone needs as many GPUs as the whole.
    const RolePlan small = plan_one(load(chat("{p50: 300, p90: 4000}", "constraints: {vendor: [nvidia]}")));
    REQUIRE(small.mix);
    REQUIRE(small.winner);
    CHECK(small.winner->gpu == "RTX-PRO-6000");
    CHECK_FALSE(small.mix->chosen);
    CHECK(small.mix->tco_usd > small.mix->best_single_tco_usd);
    CHECK(small.mix->why.rfind("one type is cheaper: the best mix costs ", 0) == 0);
    CHECK(small.mix->why.find("each fleet keeps its own spare (2 spare replicas, not 1)") != std::string::npos);
    // One GPU type allowed: no mix.
    const RolePlan one = plan_one(load(chat("{p50: 300, p90: 4000}", "constraints: {allow: [H100-SXM5]}")));
    REQUIRE(one.mix);
    CHECK(one.mix->parts.empty());
    CHECK(one.mix->why == "only H100-SXM5 meets every constraint: a mix needs two GPU types");
    // No distribution: no mix at all (make_plan does no work for it).
    CHECK_FALSE(plan_one(load(chat("512"))).mix);
}

TEST_CASE("mix: a histogram routes at its own lengths, and another objective shows the mix, never chooses it",
          "[mix]") {
    // 80 % of prompts at 1,024 tokens, 20 % at 16,000: the one threshold is 1,024 tokens.
    const std::string lengths = "{histogram: [[1024, 0.8], [16000, 0.2]]}";
    const RolePlan plan = plan_one(load(chat(lengths, "constraints: {vendor: [nvidia]}")));
    REQUIRE(plan.mix);
    REQUIRE(plan.mix->parts.size() == 2);
    CHECK(plan.mix->parts[0].max_input_tokens == 1024);
    CHECK(plan.mix->parts[0].request_share == Approx(0.8).margin(1e-12));
    CHECK(plan.mix->parts[1].max_input_tokens == 16000);
    CHECK(plan.mix->parts[1].request_share == Approx(0.2).margin(1e-12));
    CHECK(plan.mix->routing_rule ==
          "input ≤ 1,024 tokens → " + plan.mix->parts[0].gpu + ", longer → " + plan.mix->parts[1].gpu);
    const RolePlan latency = plan_one(load(chat(lengths, "constraints: {vendor: [nvidia]}\nobjective: latency")));
    REQUIRE(latency.mix);
    CHECK_FALSE(latency.mix->chosen);
    CHECK(latency.mix->why ==
          "the role ranks by lowest latency meeting every constraint; a mix is weighed by TCO only, so it is shown, "
          "not chosen");
}

TEST_CASE("mix: a part sized by threshold questions gets the sizes and prices of full estimates", "[mix]") {
    // CandidatePolicy::sizing_only asks perf, after the first replica's estimate, only whether a
    // fleet carries the load at the speed band's slow end. Every candidate of every GPU type
    // must come out as with full estimates: same configuration, count, acquisition and TCO, the
    // same SLO verdict and the same verdict of holds_at_confidence (the one question asked of
    // its capacity); only the capacity figure itself may differ.
    const Workload workload = load(chat("1500"));
    using gpusel::plan_detail::CandidateEvaluator;
    using gpusel::plan_detail::CandidatePolicy;
    CandidatePolicy sized = CandidatePolicy::search(workload);
    sized.sizing_only = true;
    std::size_t compared = 0;
    std::size_t capacities_differ = 0;
    for (const gpusel::GpuSpec& gpu : catalog().gpus()) {
        if (!gpusel::plan_detail::static_exclusion(workload, gpu).empty()) {
            continue;
        }
        CandidateEvaluator full(workload, catalog(), efficiency(), CandidatePolicy::search(workload));
        CandidateEvaluator threshold(workload, catalog(), efficiency(), sized);
        for (const gpusel::PrecisionChoice& precision : gpusel::precision_choices(workload, gpu)) {
            std::vector<gpusel::Candidate> by_full;
            std::vector<gpusel::Candidate> by_threshold;
            gpusel::plan_detail::Miss miss_full;
            gpusel::plan_detail::Miss miss_threshold;
            std::size_t evaluated = 0;
            full.begin_gpu();
            full.evaluate_inference(gpu, precision, by_full, miss_full, evaluated);
            threshold.begin_gpu();
            threshold.evaluate_inference(gpu, precision, by_threshold, miss_threshold, evaluated);
            REQUIRE(by_full.size() == by_threshold.size());
            for (std::size_t i = 0; i < by_full.size(); ++i) {
                const gpusel::Candidate& a = by_full[i];
                const gpusel::Candidate& b = by_threshold[i];
                INFO(gpu.id << " candidate " << i);
                CHECK(a.count == b.count);
                CHECK(a.replicas == b.replicas);
                CHECK(a.layout.tensor_parallel == b.layout.tensor_parallel);
                CHECK(a.layout.data_parallel == b.layout.data_parallel);
                CHECK(a.batch == b.batch);
                CHECK(a.acquisition == b.acquisition);
                CHECK(a.cost.offer.id == b.cost.offer.id);
                CHECK(a.cost.tco_usd == b.cost.tco_usd);
                REQUIRE(a.perf.inference);
                REQUIRE(b.perf.inference);
                CHECK(a.perf.inference->meets_slo == b.perf.inference->meets_slo);
                CHECK(full.holds_at_confidence(gpu, a) == threshold.holds_at_confidence(gpu, b));
                if (a.perf.inference->max_requests_per_s_meeting_slo !=
                    b.perf.inference->max_requests_per_s_meeting_slo) {
                    ++capacities_differ;
                }
                ++compared;
            }
        }
    }
    // The comparison covers candidates, and the threshold path was taken (some capacities are
    // only known to be on the right side of the load).
    CHECK(compared >= 10);
    CHECK(capacities_differ >= 1);
}
