#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/internal.hpp"
#include "plan/plan.hpp"
#include "plan/robustness.hpp"
#include "plan/robustness_analysis.hpp"
#include "support/test_support.hpp"

using gpusel::PlanReport;
using gpusel::RolePlan;

namespace {

const gpusel::ModelLibrary& models() {
    static const gpusel::ModelLibrary value = gpusel::builtin_models();
    return value;
}
const gpusel::EfficiencyTable& efficiency() {
    static const gpusel::EfficiencyTable value = gpusel::builtin_efficiency();
    return value;
}

// One GPU entry of a format-1 catalog: an A100-like card bought at `price_usd`, rented on
// demand at `rent` when given.
std::string gpu_entry(const std::string& id, const std::string& price_usd, const std::string& rent = "") {
    std::string entry = "  - id: " + id + R"(
    name: Test )" + id + R"(
    vendor: nvidia
    architecture: ampere
    segment: datacenter
    form_factor: sxm
    memory: 80GB
    memory_bandwidth: 2039GB/s
    dense_tflops: {fp32: 19.5, tf32: 156, fp16: 312, bf16: 312, int8: 624}
    power: 400W
    host_link: pcie4x16
    price: {new: )" + price_usd +
                        R"(USD, server_share: 4000USD}
)";
    if (!rent.empty()) {
        entry += "    cloud: {on_demand: " + rent + "USD/h}\n";
    }
    return entry + "    sources: [test]\n";
}

gpusel::Catalog catalog_of(const std::string& gpus) {
    gpusel::Catalog catalog;
    gpusel::merge_catalog_text(catalog, "format: 1\ngpus:\n" + gpus, "test-catalog.yaml");
    return catalog;
}

// A one-GPU-replica chat service: Llama 3.1 8B AWQ at 2 req/s within a 50 ms P99 TPOT.
RolePlan plan_service(const gpusel::Catalog& catalog, const std::string& horizon) {
    gpusel::Project project;
    project.workloads.push_back(
        gpusel::load_workload_text("name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\nweights: awq\n"
                                   "inference: {requests_per_s: 2, slo: {tpot: 50ms}}\n"
                                   "deployment: {horizon: " +
                                       horizon + ", utilization: 0.9, redundancy: none}\n",
                                   "w.yaml", gpusel::LoadContext{&catalog, &models()}));
    PlanReport report = gpusel::make_plan(project, catalog, efficiency());
    REQUIRE(report.roles.size() == 1);
    return report.roles.front();
}

}  // namespace

TEST_CASE("robustness: bands by price kind and by validation phase", "[robustness]") {
    CHECK(gpusel::price_band_fraction(gpusel::PriceKind::quote) == 0.05);
    CHECK(gpusel::price_band_fraction(gpusel::PriceKind::list) == 0.05);
    CHECK(gpusel::price_band_fraction(gpusel::PriceKind::street) == 0.15);
    CHECK(gpusel::price_band_fraction(gpusel::PriceKind::estimate) == 0.30);
    CHECK(gpusel::price_band_fraction(gpusel::PriceKind::estimate) >
          gpusel::price_band_fraction(gpusel::PriceKind::street));
}

TEST_CASE("robustness: two GPUs within the bands are tied", "[robustness]") {
    // Identical cards 2 % apart in price: the price bands (at least ±5 %) and the speed band
    // (decode: data/efficiency.yaml speed_bands) overlap, so the cheaper one cannot be told apart.
    const gpusel::Catalog catalog = catalog_of(gpu_entry("TEST-A", "15000") + gpu_entry("TEST-B", "15300"));
    const RolePlan plan = plan_service(catalog, "36mo");
    REQUIRE(plan.winner);
    REQUIRE(plan.ranked.size() == 2);
    const gpusel::RoleUncertainty& uncertainty = plan.uncertainty;
    REQUIRE(uncertainty.computed);
    CHECK(uncertainty.samples == 400);
    CHECK(uncertainty.tied_with == std::vector<int>{2});
    CHECK(uncertainty.p_best > 0.2);
    CHECK(uncertainty.p_best < 0.8);
    CHECK(uncertainty.speed_phase == "decode");
    const gpusel::SpeedBandFactors& decode = efficiency().speed_bands.at("decode");
    CHECK(uncertainty.speed_band_fraction == Approx(std::max(1 - decode.low, decode.high - 1)));
    CHECK(uncertainty.speed_band_fraction > 0.05);
}

TEST_CASE("robustness: a winner far ahead stays the winner", "[robustness]") {
    // The same cards, the second three times the price: no scenario within the bands flips it.
    const gpusel::Catalog catalog = catalog_of(gpu_entry("TEST-A", "15000") + gpu_entry("TEST-B", "45000"));
    const RolePlan plan = plan_service(catalog, "36mo");
    REQUIRE(plan.winner);
    CHECK(plan.winner->gpu == "TEST-A");
    const gpusel::RoleUncertainty& uncertainty = plan.uncertainty;
    REQUIRE(uncertainty.computed);
    CHECK(uncertainty.p_best == 1.0);
    // 2 req/s on one replica that serves many times that within the SLO, 8B AWQ weights on
    // 80 GB: every scenario fits and meets the SLO as ordered.
    CHECK(uncertainty.p_feasible == 1.0);
    CHECK(uncertainty.tied_with.empty());
    CHECK(uncertainty.warnings.empty());
    REQUIRE(uncertainty.bands.size() == plan.ranked.size());
    CHECK(uncertainty.bands.front().tco_low_usd < plan.winner->cost.tco_usd);
    CHECK(uncertainty.bands.front().tco_high_usd > plan.winner->cost.tco_usd);
    // Identical cards: the other wins once the prices cross, either way (a tie in TCO and in
    // speed goes to the cheaper, so the crossing is the break-even).
    const auto price_entry = [&](double current) {
        return std::find_if(uncertainty.sensitivity.begin(), uncertainty.sensitivity.end(),
                            [&](const gpusel::Sensitivity& entry) {
                                return entry.input.rfind("price:", 0) == 0 && entry.current == current;
                            });
    };
    const auto price_a = price_entry(15000);
    REQUIRE(price_a != uncertainty.sensitivity.end());
    CHECK(price_a->new_winner == "TEST-B ×1 buy new");
    CHECK(price_a->break_even == Approx(45000).epsilon(0.001));
    const auto price_b = price_entry(45000);
    REQUIRE(price_b != uncertainty.sensitivity.end());
    CHECK(price_b->new_winner == "TEST-B ×1 buy new");
    CHECK(price_b->break_even == Approx(15000).epsilon(0.001));
}

TEST_CASE("robustness: the horizon break-even is the cost model's break-even month", "[robustness]") {
    // One card, bought or rented on demand. Renting wins a 3-month service; the horizon at
    // which owning takes over is where owning and renting the same GPU-hours cost the same,
    // which is the break-even month the cost model computes for the purchase at that horizon.
    const gpusel::Catalog catalog = catalog_of(gpu_entry("TEST-A", "15000", "2.79"));
    const RolePlan plan = plan_service(catalog, "3mo");
    REQUIRE(plan.winner);
    REQUIRE(plan.winner->acquisition == gpusel::Acquisition::cloud_on_demand);
    const std::vector<gpusel::Sensitivity>& sensitivity = plan.uncertainty.sensitivity;
    const auto horizon = std::find_if(sensitivity.begin(), sensitivity.end(), [](const gpusel::Sensitivity& entry) {
        return entry.input == "horizon_months" && entry.break_even > entry.current;
    });
    REQUIRE(horizon != sensitivity.end());
    CHECK(horizon->current == 3);
    CHECK(horizon->new_winner == "TEST-A ×1 buy new");
    // The purchase priced at that horizon: its break-even month is the horizon itself.
    gpusel::Workload workload = plan.workload;
    workload.deployment.horizon_months = horizon->break_even;
    const gpusel::FixedEvaluation bought =
        gpusel::evaluate_fixed(workload, catalog, *catalog.find("TEST-A"), 1, gpusel::Acquisition::buy_new,
                               std::nullopt, nullptr, efficiency());
    REQUIRE(bought.candidate);
    REQUIRE(bought.candidate->cost.break_even_month);
    CHECK(*bought.candidate->cost.break_even_month == Approx(horizon->break_even).epsilon(0.01));
}

TEST_CASE("robustness: the same seed gives the same result, bit for bit", "[robustness]") {
    const gpusel::Catalog catalog = catalog_of(gpu_entry("TEST-A", "15000") + gpu_entry("TEST-B", "15300"));
    const RolePlan first = plan_service(catalog, "36mo");
    const RolePlan second = plan_service(catalog, "36mo");
    REQUIRE(first.uncertainty.computed);
    CHECK(first.uncertainty.p_best == second.uncertainty.p_best);
    CHECK(first.uncertainty.p_feasible == second.uncertainty.p_feasible);
    CHECK(first.uncertainty.tied_with == second.uncertainty.tied_with);
    REQUIRE(first.uncertainty.sensitivity.size() == second.uncertainty.sensitivity.size());
    for (std::size_t i = 0; i < first.uncertainty.sensitivity.size(); ++i) {
        CHECK(first.uncertainty.sensitivity[i].input == second.uncertainty.sensitivity[i].input);
        CHECK(first.uncertainty.sensitivity[i].break_even == second.uncertainty.sensitivity[i].break_even);
    }
    // Called again with the plan's ranked candidates as the pool, the analysis depends on the
    // seed alone.
    gpusel::RobustnessOptions options;
    options.seed = 7;
    const gpusel::RoleUncertainty a = gpusel::analyse_uncertainty(first, first.workload, catalog, efficiency(),
                                                                  first.workload.objective, first.ranked, options);
    const gpusel::RoleUncertainty b = gpusel::analyse_uncertainty(first, first.workload, catalog, efficiency(),
                                                                  first.workload.objective, first.ranked, options);
    REQUIRE(a.computed);
    CHECK(a.seed == 7);
    CHECK(a.p_best == b.p_best);
    CHECK(a.bands.front().tco_low_usd == b.bands.front().tco_low_usd);
}

TEST_CASE("robustness: scenario draws reproduce each band's published percentiles", "[robustness]") {
    // Every band is a 10th / 50th / 90th percentile triple (speed: measured / predicted over the
    // validation runs); the scenarios must draw values whose sampled percentiles are those three,
    // within ±2 % (20,000 draws: the sampling error of a 10th percentile is about 0.4 %).
    CHECK(gpusel::normal_quantile(0.9) == Approx(gpusel::normal_p90).epsilon(1e-8));
    CHECK(gpusel::normal_quantile(0.5) == Approx(0).margin(1e-12));
    CHECK(gpusel::normal_quantile(0.01) == Approx(-2.3263478740).epsilon(1e-8));
    const auto percentile = [](std::vector<double> values, double fraction) {
        std::sort(values.begin(), values.end());
        return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1))];
    };
    for (const auto& [group, measured] : efficiency().speed_bands) {
        INFO("speed band " << group);
        const gpusel::PercentileBand band{measured.low, measured.median, measured.high, true};
        gpusel::ScenarioRandom random(0x5eed2026ULL);
        std::vector<double> draws;
        for (int i = 0; i < 20000; ++i) {
            draws.push_back(gpusel::band_value(band, random.normal()));
        }
        CHECK(percentile(draws, 0.1) == Approx(measured.low).epsilon(0.02));
        CHECK(percentile(draws, 0.5) == Approx(measured.median).epsilon(0.02));
        CHECK(percentile(draws, 0.9) == Approx(measured.high).epsilon(0.02));
        // band_share_below inverts band_value.
        CHECK(gpusel::band_share_below(band, measured.low) == Approx(0.1).epsilon(1e-6));
        CHECK(gpusel::band_share_below(band, measured.median) == Approx(0.5).epsilon(1e-9));
        CHECK(gpusel::band_share_below(band, measured.high) == Approx(0.9).epsilon(1e-6));
    }
    // A memory band (bytes, additive): 30 GB estimated, 27–36 GB from 10th to 90th percentile.
    const gpusel::PercentileBand memory{27e9, 30e9, 36e9, false};
    gpusel::ScenarioRandom random(7);
    std::vector<double> draws;
    for (int i = 0; i < 20000; ++i) {
        draws.push_back(gpusel::band_value(memory, random.normal()));
    }
    CHECK(percentile(draws, 0.1) == Approx(27e9).epsilon(0.02));
    CHECK(percentile(draws, 0.5) == Approx(30e9).epsilon(0.02));
    CHECK(percentile(draws, 0.9) == Approx(36e9).epsilon(0.02));
    // Hand-worked: the 95th percentile lies 1.645 / 1.2816 of the upper half-width above the median.
    CHECK(gpusel::band_value(memory, gpusel::normal_quantile(0.95)) == Approx(30e9 + 6e9 * 1.6448536 / 1.2815516));
}

TEST_CASE("robustness: every example's pick, and the alternative it names, holds at its confidence level",
          "[robustness]") {
    for (const char* file :
         {"examples/bert-embeddings.yaml", "examples/chat-llama2-13b-int4.yaml", "examples/edge-ocr-jetson.yaml",
          "examples/llama-finetune.yaml", "examples/llama3-70b-finetune.yaml", "examples/pretrain-7b.yaml",
          "examples/recsys-serving.yaml", "examples/resnet50-train-cpu-decode.yaml", "examples/roberta-finetune.yaml",
          "examples/sdxl-lora.yaml", "examples/sdxl-serving.yaml", "examples/unet3d-medical.yaml",
          "examples/vit-base-training.yaml", "examples/yolov8-training.yaml", "examples/smart-support/dev.yaml",
          "examples/smart-support/train.yaml"}) {
        INFO(file);
        gpusel::Project project;
        project.name = "example";
        project.workloads.push_back(gpusel::load_workload_file(
            gpusel::test::source_path(file), gpusel::LoadContext{&gpusel::test::catalog(), &models()}));
        const PlanReport report = gpusel::make_plan(project, gpusel::test::catalog(), efficiency());
        const RolePlan& plan = report.roles.front();
        REQUIRE(plan.winner);
        REQUIRE(plan.uncertainty.computed);
        CHECK(plan.uncertainty.p_feasible >= project.workloads.front().confidence);
        CHECK(project.workloads.front().confidence == 0.9);
        // The alternative is its GPU type's ranked row (one per type; the row may be past the
        // rows kept for display); where the analysis sampled it, it holds too (llama3-70b-finetune's
        // B300 ×16 at 89 % is no longer named).
        const auto row = plan.alternative ? std::find_if(plan.ranked.begin(), plan.ranked.end(),
                                                         [&](const gpusel::Candidate& candidate) {
                                                             return candidate.gpu == plan.alternative->gpu;
                                                         })
                                          : plan.ranked.end();
        if (row != plan.ranked.end()) {
            const auto index = static_cast<std::size_t>(row - plan.ranked.begin());
            REQUIRE(index < plan.uncertainty.bands.size());
            const gpusel::EstimateBand& band = plan.uncertainty.bands[index];
            CHECK((!band.sampled || band.p_feasible >= project.workloads.front().confidence));
        }
    }
}

TEST_CASE("robustness: pick_wins_pair agrees with winner_of over two outcomes", "[robustness]") {
    // Pairs around the tie tolerance (USD 100 or 1 %: ties at 10,000 USD are within 100 USD),
    // on one GPU type and on two, feasible or not, under every objective: the Monte Carlo's
    // pairwise shortcut must be the ranking rule itself.
    using gpusel::robustness_detail::Outcome;
    const std::vector<double> tcos{10000, 10050, 10100, 10150, 9990, 20000};
    std::size_t compared = 0;
    for (const gpusel::Objective objective :
         {gpusel::Objective::tco, gpusel::Objective::time, gpusel::Objective::latency,
          gpusel::Objective::throughput_per_usd, gpusel::Objective::energy}) {
        for (const double other_tco : tcos) {
            for (const int other_count : {1, 2, 4}) {
                for (const std::size_t other_gpu : {0U, 1U}) {
                    for (const int feasibility : {0, 1, 2, 3}) {
                        Outcome pick;
                        pick.tco_usd = 10000;
                        pick.count = 2;
                        pick.speed = 100;
                        pick.time_s = 50;
                        pick.latency_s = 0.05;
                        pick.energy_kwh = 40;
                        pick.usd_per_unit = 1.5;
                        pick.gpu = 0;
                        Outcome other = pick;
                        other.tco_usd = other_tco;
                        other.count = other_count;
                        other.speed = 100.0 * other_count / 2;
                        other.time_s = 100.0 / other_count;
                        other.gpu = other_gpu;
                        other.idle_gpus = other_count == 4 ? 1 : 0;
                        other.marketplace = other_gpu == 1;
                        pick.feasible = (feasibility & 1) != 0;
                        other.feasible = (feasibility & 2) != 0;
                        INFO(compared);
                        CHECK(gpusel::robustness_detail::pick_wins_pair(pick, other, objective) ==
                              (gpusel::robustness_detail::winner_of({pick, other}, objective) == 0));
                        ++compared;
                    }
                }
            }
        }
    }
    CHECK(compared == 5 * 6 * 3 * 2 * 4);
}

namespace {

// The ranking rule as a sort: every feasible outcome stably sorted by ranks_before; under TCO
// the first of each GPU type within the tie tolerance of the cheapest, the tie rule deciding.
// winner_of must give what this gives without sorting everything.
std::size_t winner_by_sorting(const std::vector<gpusel::robustness_detail::Outcome>& outcomes,
                              gpusel::Objective objective) {
    using gpusel::robustness_detail::Outcome;
    namespace detail = gpusel::plan_detail;
    const auto key = [&](const Outcome& outcome) {
        return detail::RankKey{gpusel::robustness_detail::score_of(objective, outcome),
                               outcome.tco_usd,
                               outcome.count,
                               outcome.speed,
                               outcome.count + outcome.idle_gpus,
                               outcome.idle_gpus,
                               outcome.marketplace,
                               outcome.single_source};
    };
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (outcomes[i].feasible) {
            order.push_back(i);
        }
    }
    if (order.empty()) {
        return gpusel::robustness_detail::none;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return detail::ranks_before(key(outcomes[a]), key(outcomes[b]));
    });
    if (objective != gpusel::Objective::tco) {
        return order.front();
    }
    const double cheapest = outcomes[order.front()].tco_usd;
    std::vector<std::size_t> seen;
    std::size_t pick = order.front();
    for (const std::size_t index : order) {
        if (std::find(seen.begin(), seen.end(), outcomes[index].gpu) != seen.end()) {
            continue;
        }
        seen.push_back(outcomes[index].gpu);
        if (outcomes[index].tco_usd - cheapest > detail::tie_tolerance(cheapest)) {
            break;
        }
        if (detail::wins_tie(key(outcomes[index]), key(outcomes[pick]))) {
            pick = index;
        }
    }
    return pick;
}

}  // namespace

TEST_CASE("robustness: winner_of is the front of the ranking's stable sort, ties per GPU type", "[robustness]") {
    // Lists of 1-12 outcomes drawn from few values (so that scores, TCOs, counts and GPU types
    // tie often, and TCOs fall on both sides of the USD 100 tie tolerance), under every objective.
    using gpusel::robustness_detail::Outcome;
    std::uint64_t state = 12345;
    const auto next = [&](std::uint64_t range) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (state >> 33) % range;
    };
    std::size_t lists = 0;
    std::size_t tco_ties = 0;  // TCO lists whose winner is not the cheapest: the tie rule decided
    for (const gpusel::Objective objective :
         {gpusel::Objective::tco, gpusel::Objective::time, gpusel::Objective::latency,
          gpusel::Objective::throughput_per_usd, gpusel::Objective::energy}) {
        for (int round = 0; round < 2000; ++round) {
            std::vector<Outcome> outcomes(1 + next(12));
            for (Outcome& outcome : outcomes) {
                outcome.feasible = next(5) != 0;
                outcome.tco_usd = 10000 + 40.0 * static_cast<double>(next(6));
                outcome.count = 1 << next(3);
                outcome.idle_gpus = static_cast<int>(next(2));
                outcome.speed = 50.0 * static_cast<double>(1 + next(3));
                outcome.time_s = 10.0 * static_cast<double>(1 + next(3));
                outcome.latency_s = 0.01 * static_cast<double>(1 + next(3));
                outcome.energy_kwh = 5.0 * static_cast<double>(1 + next(3));
                outcome.usd_per_unit = next(2) == 0 ? 0 : 0.5 * static_cast<double>(1 + next(3));
                outcome.gpu = next(3);
                outcome.marketplace = next(4) == 0;
                outcome.single_source = next(4) == 0;
            }
            const std::size_t expected = winner_by_sorting(outcomes, objective);
            INFO(lists);
            REQUIRE(gpusel::robustness_detail::winner_of(outcomes, objective) == expected);
            if (objective == gpusel::Objective::tco && expected != gpusel::robustness_detail::none) {
                const auto cheapest =
                    std::min_element(outcomes.begin(), outcomes.end(), [](const Outcome& a, const Outcome& b) {
                        return a.feasible && (!b.feasible || a.tco_usd < b.tco_usd);
                    });
                if (outcomes[expected].tco_usd > cheapest->tco_usd) {
                    ++tco_ties;
                }
            }
            ++lists;
        }
    }
    CHECK(lists == 5 * 2000);
    CHECK(tco_ties > 0);  // the tie rule was exercised, not only the cheapest
}
