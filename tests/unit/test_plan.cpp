#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "plan/internal.hpp"
#include "plan/plan.hpp"
#include "support/test_support.hpp"

using gpusel::Candidate;
using gpusel::PlanReport;
using gpusel::RolePlan;
using gpusel::Workload;

namespace {
using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::models;

Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", gpusel::LoadContext{&catalog(), &models()});
}
RolePlan plan_one(const Workload& workload, std::size_t top = 5) {
    gpusel::Project project;
    project.name = workload.name;
    project.workloads.push_back(workload);
    gpusel::PlanOptions options;
    options.top = top;
    PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), options);
    REQUIRE(report.roles.size() == 1);
    return report.roles.front();
}
bool is_rental(gpusel::Acquisition acquisition) {
    return acquisition != gpusel::Acquisition::buy_new && acquisition != gpusel::Acquisition::buy_used;
}

const char* chat_service = R"(name: chat
kind: inference
model: {preset: llama-3.1-8b}
weights: awq
inference: {input_tokens: 512, output_tokens: 256, requests_per_s: 5, slo: {tpot: 50ms}}
deployment: {horizon: HORIZON, utilization: 0.9}
constraints: {allow: [A100-80GB-SXM4, L40S, H100-SXM5]}
)";
std::string with_horizon(const std::string& horizon) {
    std::string text = chat_service;
    text.replace(text.find("HORIZON"), 7, horizon);
    return text;
}
}  // namespace

TEST_CASE("plan: a small model never gets an eight-GPU cluster", "[plan]") {
    const RolePlan plan = plan_one(load(R"(name: classifier
kind: fine-tuning
model: {preset: roberta-base}
precision: fp16
training: {micro_batch: 32, seq_len: 512, dataset_samples: 1M, epochs: 3, deadline: 2d}
)"));
    REQUIRE(plan.winner);
    // No cluster beyond the smallest unit on offer: AWS rents A100 SXM4 only as 8-GPU p4d
    // instances, and a 15-minute job on one of them is priced as what it is.
    const auto smallest_unit = [](const Candidate& candidate) {
        return std::max(2, candidate.cost.offer.gpus_per_unit);
    };
    CHECK(plan.winner->count <= smallest_unit(*plan.winner));
    for (const Candidate& candidate : plan.ranked) {
        INFO(candidate.gpu);
        CHECK(candidate.count <= smallest_unit(candidate));
        CHECK_FALSE((gpusel::is_purchase(candidate.acquisition) && candidate.count >= 8));
    }
}

TEST_CASE("plan: a BF16 workload on V100 or T4 says that it falls back", "[plan]") {
    const RolePlan plan = plan_one(load(R"(name: tune
kind: fine-tuning
model: {preset: gpt2}
precision: bf16
training: {micro_batch: 8, seq_len: 1024, dataset_tokens: 100M}
constraints: {allow: [V100-SXM2-32GB, T4]}
)"));
    REQUIRE(plan.winner);
    CHECK(plan.winner->precision_fallback);
    CHECK(plan.winner->precision == gpusel::Precision::fp16);
    CHECK(plan.winner->reason.find("no native bf16: runs fp16") != std::string::npos);
    CHECK(std::any_of(plan.advice.begin(), plan.advice.end(),
                      [](const std::string& line) { return line.find("has no native bf16") != std::string::npos; }));
}

TEST_CASE("plan: a 3-month service rents, a 3-year one owns", "[plan]") {
    // One GPU with hyperscaler-like prices, so that the expectation can be checked by hand:
    // 3 months at 90 %: renting 2.79 × 2,191 h × 0.9 ≈ $5,500 against buying $19,000 less a
    // resale of 0.45^(3/24) × $15,000 ≈ $13,600, plus operations: renting wins.
    // 36 months: renting ≈ $66,000 (on demand) or $51,300 (reserved at $1.95) against buying
    // ≈ $27,600 (capex $19,000 + power + $5,400 operations + failures − resale): owning wins.
    gpusel::Catalog priced;
    gpusel::merge_catalog_text(priced, R"(format: 1
gpus:
  - id: TEST-A100
    name: Test A100
    vendor: nvidia
    architecture: ampere
    segment: datacenter
    form_factor: sxm
    memory: 80GB
    memory_bandwidth: 2039GB/s
    dense_tflops: {fp32: 19.5, tf32: 156, fp16: 312, bf16: 312, int8: 624}
    power: 400W
    host_link: pcie4x16
    price: {new: 15000USD, server_share: 4000USD}
    cloud: {on_demand: 2.79USD/h, reserved_1y: 1.95USD/h}
    sources: [test]
)",
                               "test-catalog.yaml");
    const auto winner_for = [&](const std::string& horizon) {
        gpusel::Project project;
        project.workloads.push_back(
            gpusel::load_workload_text("name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\nweights: awq\n"
                                       "inference: {requests_per_s: 2, slo: {tpot: 50ms}}\n"
                                       "deployment: {horizon: " +
                                           horizon + ", utilization: 0.9, redundancy: none}\n",
                                       "w.yaml", gpusel::LoadContext{&priced, &models()}));
        const PlanReport report = gpusel::make_plan(project, priced, efficiency());
        REQUIRE(report.roles.front().winner);
        REQUIRE(report.roles.front().winner->count == 1);
        return *report.roles.front().winner;
    };
    const Candidate short_winner = winner_for("3mo");
    CHECK(short_winner.acquisition == gpusel::Acquisition::cloud_on_demand);
    const Candidate long_winner = winner_for("36mo");
    CHECK(long_winner.acquisition == gpusel::Acquisition::buy_new);
    CHECK(long_winner.cost.tco_usd < 35000);
}

TEST_CASE("plan: an input-bound workload is told to fix the pipeline first", "[plan]") {
    const RolePlan plan = plan_one(gpusel::load_workload_file(
        gpusel::test::source_path("examples/yolov8-training.yaml"), gpusel::LoadContext{&catalog(), &models()}));
    REQUIRE(plan.winner);
    CHECK(plan.winner->perf.bottleneck.resource == gpusel::Resource::input_pipeline);
    REQUIRE_FALSE(plan.advice.empty());
    CHECK(plan.advice.front().rfind("input-bound: fix the data pipeline before buying a faster GPU", 0) == 0);
}

TEST_CASE("plan: every catalog GPU is either a candidate or rejected with a reason", "[plan]") {
    // No allow list and a --top as large as the catalog: every GPU type must be shown once,
    // ranked or rejected (the ranked list is cut at --top, docs/ARCHITECTURE.md).
    std::string text = with_horizon("24mo");
    text.erase(text.find("constraints:"));
    const RolePlan plan = plan_one(load(text), catalog().gpus().size());
    std::set<std::string> rejected;
    for (const gpusel::Rejection& rejection : plan.rejected) {
        CHECK_FALSE(rejection.why_not.empty());
        rejected.insert(rejection.gpu);
    }
    std::set<std::string> ranked;
    for (const Candidate& candidate : plan.ranked) {
        ranked.insert(candidate.gpu);
        CHECK(rejected.count(candidate.gpu) == 0);
    }
    CHECK(ranked.size() == plan.ranked.size());      // one row per GPU type
    CHECK(rejected.size() == plan.rejected.size());  // one rejection per GPU type
    // More GPU types fit than the default --top shows, so the cut matters here.
    CHECK(ranked.size() > 5);
    CHECK(ranked.size() + rejected.size() == catalog().gpus().size());
}

TEST_CASE("plan: GPUs outside constraints.allow are rejected for that reason", "[plan]") {
    const RolePlan plan = plan_one(load(with_horizon("24mo")));
    REQUIRE(plan.rejected.size() >= catalog().gpus().size() - 3);
    for (const gpusel::Rejection& rejection : plan.rejected) {
        if (rejection.gpu != "A100-80GB-SXM4" && rejection.gpu != "L40S" && rejection.gpu != "H100-SXM5") {
            CHECK(rejection.why_not == "not in constraints.allow");
        }
    }
}

TEST_CASE("plan: a rejection is typed: kind, limit, needed, available and the count it was measured at", "[plan]") {
    // Llama-3.1-8B's 16 GB of BF16 weights overflow a T4 at one GPU (max_gpus 1); every GPU
    // outside constraints.allow is an exclusion with no figures.
    const RolePlan plan = plan_one(load(R"(name: chat
kind: inference
model: {preset: llama-3.1-8b}
inference: {input_tokens: 512, output_tokens: 256, requests_per_s: 5, slo: {tpot: 50ms}}
constraints: {allow: [T4, H100-SXM5], max_gpus: 1}
)"));
    const auto t4 = std::find_if(plan.rejected.begin(), plan.rejected.end(),
                                 [](const gpusel::Rejection& rejection) { return rejection.gpu == "T4"; });
    REQUIRE(t4 != plan.rejected.end());
    CHECK(t4->kind == gpusel::RejectionKind::memory);
    CHECK(t4->limit == "memory per GPU");
    CHECK(t4->count == 1);
    CHECK(t4->needed > t4->available);
    // The figures are the sentence's: vLLM's weights 16.1 GB + activation peak 0.5 GB + non-torch
    // 0.3 GB against 0.9 × 17.0 GB.
    CHECK(gpusel::format_gb(t4->needed) == "16.9 GB");
    CHECK(gpusel::format_gb(t4->available) == "15.3 GB");
    CHECK_THAT(t4->why_not, Catch::Matchers::Contains("exceed 15.3 GB (0.9 × 17.0 GB)"));
    CHECK(t4->closeness == Approx(10.0 + t4->needed / t4->available));
    const auto excluded =
        std::find_if(plan.rejected.begin(), plan.rejected.end(),
                     [](const gpusel::Rejection& rejection) { return rejection.gpu == "A100-80GB-SXM4"; });
    REQUIRE(excluded != plan.rejected.end());
    CHECK(excluded->kind == gpusel::RejectionKind::excluded);
    CHECK(excluded->count == 0);
}

TEST_CASE("plan::rejection_closeness lists budget, count and deadline, SLO, memory, precision, exclusion in that order",
          "[plan]") {
    using gpusel::rejection_closeness;
    using gpusel::RejectionKind;
    CHECK(rejection_closeness(RejectionKind::budget, 1.5, 1.0) == Approx(1.5));
    CHECK(rejection_closeness(RejectionKind::max_gpus, 30, 24) == Approx(2.25));
    CHECK(rejection_closeness(RejectionKind::deadline, 21, 14) == Approx(2.5));
    CHECK(rejection_closeness(RejectionKind::slo, 0.06, 0.05) == 2.0);
    CHECK(rejection_closeness(RejectionKind::memory, 26.4, 14.4) == Approx(10.0 + 26.4 / 14.4));
    CHECK(rejection_closeness(RejectionKind::precision, 0, 0) > rejection_closeness(RejectionKind::memory, 1e6, 1));
    CHECK(rejection_closeness(RejectionKind::excluded, 0, 0) > rejection_closeness(RejectionKind::precision, 0, 0));
    CHECK(std::isinf(rejection_closeness(RejectionKind::no_offer, 0, 0)));
    CHECK(gpusel::to_string(RejectionKind::max_gpus) == "max-gpus");
    CHECK(gpusel::to_string(RejectionKind::no_offer) == "no-offer");
}

TEST_CASE("plan: ranked candidates meet every hard constraint", "[plan]") {
    for (const char* file : {"examples/chat-llama2-13b-int4.yaml", "examples/pretrain-7b.yaml",
                             "examples/edge-ocr-jetson.yaml", "examples/unet3d-medical.yaml"}) {
        INFO(file);
        const Workload workload =
            gpusel::load_workload_file(gpusel::test::source_path(file), gpusel::LoadContext{&catalog(), &models()});
        const RolePlan plan = plan_one(workload);
        REQUIRE_FALSE(plan.ranked.empty());
        for (const Candidate& candidate : plan.ranked) {
            INFO(candidate.gpu << " x" << candidate.count);
            CHECK(candidate.memory.fits);
            CHECK(candidate.count <= workload.constraints.max_gpus);
            const gpusel::GpuSpec& gpu = *catalog().find(candidate.gpu);
            if (workload.constraints.max_power_per_device_watts > 0) {
                CHECK(gpu.power_watts <= workload.constraints.max_power_per_device_watts);
            }
            if (candidate.perf.training) {
                CHECK(candidate.perf.training->meets_deadline);
            }
            if (candidate.perf.inference) {
                CHECK(candidate.perf.inference->meets_slo);
            }
            if (workload.deployment.target == gpusel::DeploymentTarget::on_prem ||
                workload.deployment.target == gpusel::DeploymentTarget::edge) {
                CHECK_FALSE(is_rental(candidate.acquisition));
            }
        }
        // Ranked best first by the objective (TCO by default), except inside the tie group at the
        // top (within the tie margin of the cheapest, ordered by the tie rule: docs/cost-model.md).
        const double cheapest =
            std::min_element(plan.ranked.begin(), plan.ranked.end(), [](const auto& a, const auto& b) {
                return a.score < b.score;
            })->score;
        for (std::size_t i = 1; i < plan.ranked.size(); ++i) {
            const bool in_tie_group = plan.ranked[i].tied && plan.ranked[i - 1].score - cheapest <=
                                                                 gpusel::plan_detail::tie_tolerance(cheapest);
            CHECK((plan.ranked[i - 1].score <= plan.ranked[i].score || in_tie_group));
        }
    }
}

TEST_CASE("plan: at exactly the same cost the faster configuration ranks first, then fewer GPUs", "[plan]") {
    using gpusel::plan_detail::RankKey;
    using gpusel::plan_detail::ranks_before;
    // 4 or 8 GPUs of one 8-GPU server bought whole: the same TCO; the 8 run twice as fast.
    const RankKey four{100000, 100000, 4, 1.0};
    const RankKey eight{100000, 100000, 8, 2.0};
    CHECK(ranks_before(eight, four));
    CHECK_FALSE(ranks_before(four, eight));
    // Equally fast: fewer GPUs.
    const RankKey eight_as_slow{100000, 100000, 8, 1.0};
    CHECK(ranks_before(four, eight_as_slow));
    // A cent cheaper ranks first, whatever its speed (within-tolerance ties are order_ties' job).
    const RankKey cheaper_four{100000, 99999.99, 4, 1.0};
    CHECK(ranks_before(cheaper_four, eight));
    // The objective's score comes before both.
    const RankKey better_score{99999, 200000, 16, 0.5};
    CHECK(ranks_before(better_score, eight));
}

TEST_CASE("plan: the tie ladder — fewer GPUs, none idle, no marketplace, a common part, then cheaper", "[plan]") {
    using gpusel::plan_detail::RankKey;
    using gpusel::plan_detail::tie_rule;
    using gpusel::plan_detail::wins_tie;
    // score, TCO, GPUs used, speed, GPUs ordered, idle, marketplace, single source
    const RankKey base{100, 100, 1, 1.0, 1, 0, false, false};
    RankKey other = base;
    other.tco_usd = 90;
    other.single_source = true;
    // A part one provider alone sells loses to a common one, even $10 cheaper.
    CHECK(wins_tie(base, other));
    CHECK(tie_rule(base, other) == "a part several providers offer");
    // A marketplace host loses before the part's scarcity is asked.
    RankKey market = base;
    market.marketplace = true;
    CHECK(wins_tie(other, market));
    CHECK(tie_rule(other, market) == "not a marketplace host");
    // Both common: the cheaper.
    other.single_source = false;
    CHECK(wins_tie(other, base));
    CHECK(tie_rule(other, base) == "cheaper");
    // Fewer GPUs ordered comes first of all.
    RankKey two = base;
    two.ordered_gpus = 2;
    two.count = 2;
    CHECK(tie_rule(other, two) == "fewer GPUs");
}

TEST_CASE("plan: a single-source GPU is marked, from the catalog's offers", "[plan]") {
    // A10G: rented from AWS only (g5); L4: several clouds and resellers.
    const RolePlan plan = plan_one(load("name: small\nkind: inference\nmodel: {preset: bert-base}\nprecision: fp16\n"
                                        "inference: {requests_per_s: 10}\nconstraints: {allow: [A10G, L4]}\n"),
                                   10);
    int seen = 0;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.gpu == "A10G") {
            CHECK(candidate.single_source);
            ++seen;
        } else if (candidate.gpu == "L4") {
            CHECK_FALSE(candidate.single_source);
            ++seen;
        }
    }
    CHECK(seen == 2);
}

TEST_CASE("plan: a serving candidate's replicas are the fewest perf finds meeting the SLO", "[plan]") {
    // The queueing model pools requests over all replicas, so N replicas carry more than N times
    // one replica's largest load: dividing the load by one replica's capacity over-buys (on this
    // example 29 A40 replicas where 11 meet the SLO). Every ranked serving candidate must hold
    // the SLO with its serving replicas and miss it with one fewer, by perf itself.
    const Workload workload = gpusel::load_workload_file(
        gpusel::test::source_path("examples/chat-llama2-13b-int4.yaml"), gpusel::LoadContext{&catalog(), &models()});
    const RolePlan plan = plan_one(workload, 40);
    REQUIRE(plan.ranked.size() >= 20);
    int checked_below = 0;
    for (const Candidate& candidate : plan.ranked) {
        INFO(candidate.gpu << " x" << candidate.count << " tp" << candidate.layout.tensor_parallel);
        REQUIRE(candidate.perf.inference);
        const gpusel::GpuSpec& gpu = *catalog().find(candidate.gpu);
        gpusel::PerfQuery query;
        query.layout = candidate.layout;
        query.batch = candidate.batch;
        query.precision = candidate.precision;
        CHECK(candidate.layout.data_parallel == candidate.serving_replicas());
        CHECK(gpusel::estimate_perf(workload, gpu, query, efficiency()).inference->meets_slo);
        // Replicas filling whole units bought anyway (8 V100s of one server at TP2) and those the
        // speed band's slow end needs (objective.confidence) come on top of the fewest; those are
        // what the SLO needs at the estimate.
        const int fewest = candidate.serving_replicas() - candidate.unit_fill_replicas - candidate.margin_replicas;
        query.layout.data_parallel = fewest;
        CHECK(gpusel::estimate_perf(workload, gpu, query, efficiency()).inference->meets_slo);
        if (fewest > 1) {
            --query.layout.data_parallel;
            CHECK_FALSE(gpusel::estimate_perf(workload, gpu, query, efficiency()).inference->meets_slo);
            ++checked_below;
        }
    }
    CHECK(checked_below >= 15);
    // The A40 on demand: 11 serving replicas at the estimate, as `gpusel perf --count 10/11`
    // shows; the margin replicas are the fewest more whose fleet still carries 20 req/s at the
    // decode band's 10th percentile (0.83 × the estimate); + 1 spare (n+1).
    const auto a40 = std::find_if(plan.ranked.begin(), plan.ranked.end(), [](const Candidate& candidate) {
        return candidate.gpu == "A40" && candidate.acquisition == gpusel::Acquisition::cloud_on_demand;
    });
    REQUIRE(a40 != plan.ranked.end());
    CHECK(a40->serving_replicas() - a40->margin_replicas == 11);
    REQUIRE(a40->margin_replicas >= 1);
    gpusel::PerfQuery fleet;
    fleet.layout = a40->layout;
    fleet.batch = a40->batch;
    fleet.precision = a40->precision;
    const gpusel::GpuSpec& a40_gpu = *catalog().find("A40");
    CHECK(gpusel::estimate_perf(workload, a40_gpu, fleet, efficiency()).inference->max_requests_per_s_meeting_slo *
              0.83 >=
          20);
    --fleet.layout.data_parallel;
    CHECK(gpusel::estimate_perf(workload, a40_gpu, fleet, efficiency()).inference->max_requests_per_s_meeting_slo *
              0.83 <
          20);
    CHECK(a40->count == a40->serving_replicas() + 1);
}

TEST_CASE("plan: the same input gives the same plan", "[plan]") {
    const Workload workload = load(with_horizon("24mo"));
    const RolePlan first = plan_one(workload);
    const RolePlan second = plan_one(workload);
    REQUIRE_FALSE(first.ranked.empty());
    REQUIRE(first.ranked.size() == second.ranked.size());
    for (std::size_t i = 0; i < first.ranked.size(); ++i) {
        CHECK(first.ranked[i].gpu == second.ranked[i].gpu);
        CHECK(first.ranked[i].count == second.ranked[i].count);
        CHECK(first.ranked[i].cost.tco_usd == second.ranked[i].cost.tco_usd);
    }
}

TEST_CASE("plan: constraints.providers [aws] rents AWS instance types at AWS's instance-hour prices",
          "[plan][offers]") {
    // Prices from data/offers.yaml (AWS EC2 on-demand, us-east-1; docs/reference/offers.md §2.4, cross-checked with
    // vantage.sh 2025-12-21 and datareceipts 2026-11-09): p5.48xlarge $55.04/h for 8 × H100,
    // p4d.24xlarge $21.957642/h for 8 × A100 40GB, g6e.xlarge $1.861/h for 1 × L40S.
    const gpusel::Catalog& built_in = catalog();
    const auto rate = [&](const std::string& id) {
        const gpusel::Offer* offer = built_in.find_offer(id);
        REQUIRE(offer != nullptr);
        for (const gpusel::RegionalRates& rates : offer->rates) {
            if (rates.region == "us-east-1" && rates.on_demand) {
                return rates.on_demand->usd;
            }
        }
        FAIL("no us-east-1 on-demand price for " << id);
        return 0.0;
    };
    CHECK(rate("aws/p5.48xlarge") == 55.04);
    CHECK(built_in.find_offer("aws/p5.48xlarge")->gpus_per_unit == 8);
    CHECK(rate("aws/p4d.24xlarge") == Approx(21.957642));
    CHECK(rate("aws/g6e.xlarge") == Approx(1.861));
    const RolePlan plan = plan_one(load(R"(name: tune
kind: fine-tuning
model: {preset: llama-3.1-8b}
training: {micro_batch: 1, seq_len: 4096, dataset_tokens: 1B, deadline: 14d, lora: {rank: 16}}
deployment: {target: cloud}
constraints: {providers: [aws]}
)"));
    REQUIRE(plan.winner);
    REQUIRE(!plan.ranked.empty());
    for (const Candidate& candidate : plan.ranked) {
        INFO(candidate.gpu << " " << candidate.cost.offer.id);
        CHECK(candidate.cost.offer.provider == "aws");
        CHECK(candidate.cost.offer.kind == gpusel::OfferKind::rental);
        CHECK(candidate.cost.offer.id.rfind("aws/", 0) == 0);
        CHECK(candidate.count <= candidate.cost.offer.units * candidate.cost.offer.gpus_per_unit);
        // Billed per instance-hour: the unit price is the instance's, not a per-GPU figure.
        const gpusel::Offer* offer = built_in.find_offer(candidate.cost.offer.id);
        REQUIRE(offer != nullptr);
        CHECK(candidate.cost.offer.gpus_per_unit == offer->gpus_per_unit);
    }
}

TEST_CASE("plan: a p4d spot plan ranks on the median of the zone prices, not the lowest zone", "[plan][offers][spot]") {
    // data/offers.yaml p4d.24xlarge us-east-1 spot per AZ (skypilot-catalog aws/vms.csv @00148f2):
    // 2.4655, 7.8799, 8.1203, 8.1915. The median, 8.0001, ranks and prices the plan; the az1 outlier
    // (0.11 of on-demand) used to. Dated 2025-12: 12 months before the catalog, so max_spot_age opens to 12mo.
    const RolePlan plan = plan_one(load(R"(name: pretrain
kind: training
model: {preset: llama-3.2-3b}
training: {micro_batch: 4, seq_len: 2048, dataset_tokens: 300B, deadline: 60d}
deployment: {target: cloud}
constraints: {allow: [A100-40GB-SXM4], providers: [aws], acquisitions: [cloud-spot], max_spot_age: 12mo}
)"));
    REQUIRE(plan.winner);
    const gpusel::OfferUse& offer = plan.winner->cost.offer;
    CHECK(offer.id == "aws/p4d.24xlarge");
    CHECK(plan.winner->acquisition == gpusel::Acquisition::cloud_spot);
    CHECK(offer.price_usd == Approx(8.0001));
    CHECK(offer.zones_usd == std::vector<double>{2.4655, 7.8799, 8.1203, 8.1915});
    CHECK(offer.order.find("spot $8.00/h median of 4 zones, $2.47–8.19") != std::string::npos);
}

TEST_CASE("plan: no example buys a GB200 alone or a fraction of an HGX server", "[plan][offers]") {
    const RolePlan plan = plan_one(load(R"(name: chat
kind: inference
model: {preset: llama-3.1-70b}
weights: awq
inference: {requests_per_s: 5, slo: {tpot: 50ms}}
deployment: {target: on-prem}
constraints: {allow: [GB200, H100-SXM5, B200]}
)"));
    for (const Candidate& candidate : plan.ranked) {
        INFO(candidate.gpu << " " << candidate.cost.offer.id);
        const int per_unit = candidate.cost.offer.gpus_per_unit;
        CHECK(per_unit >= 8);  // HGX servers, the NVL72 rack
        CHECK(candidate.count + candidate.cost.offer.idle_gpus == candidate.cost.offer.units * per_unit);
        if (candidate.gpu == "GB200") {
            CHECK(per_unit == 72);
        }
    }
}

TEST_CASE("plan: production serving keeps a spare replica (n+1) unless told otherwise", "[plan][money]") {
    const std::string service =
        "name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\nweights: awq\n"
        "inference: {requests_per_s: 2, slo: {tpot: 50ms}}\n"
        "constraints: {allow: [L40S]}\ndeployment: {horizon: 24mo";
    const RolePlan spare = plan_one(load(service + "}\n"));
    const RolePlan bare = plan_one(load(service + ", redundancy: none}\n"));
    const RolePlan quarter = plan_one(load(service + ", redundancy: 50%}\n"));
    REQUIRE(spare.winner);
    REQUIRE(bare.winner);
    REQUIRE(quarter.winner);
    const int serving = bare.winner->replicas;
    CHECK(bare.winner->spare_replicas == 0);
    CHECK(spare.winner->spare_replicas == 1);
    CHECK(spare.winner->replicas == serving + 1);
    CHECK(spare.winner->count == (serving + 1) * spare.winner->layout.tensor_parallel);
    // 50 % of the serving replicas, rounded up, at least one.
    CHECK(quarter.winner->spare_replicas == std::max(1, (serving + 1) / 2));
    // The load is carried by the serving replicas alone: the same latency as without spares.
    CHECK(spare.winner->perf.inference->p99_tpot_s.value() == Approx(bare.winner->perf.inference->p99_tpot_s.value()));
}

TEST_CASE("plan: six seats buy six boxes", "[plan][money]") {
    const std::string dev =
        "name: dev\nkind: fine-tuning\nrole: development\nmodel: {preset: llama-3.1-8b}\n"
        "training: {micro_batch: 1, seq_len: 2048, lora: {rank: 16}, checkpointing: full}\n"
        "constraints: {allow: [RTX-4090], max_gpus: 1}\nobjective: {minimize: tco, confidence: 0.5}\n"
        "deployment: {target: on-prem";
    const RolePlan one = plan_one(load(dev + "}\n"));
    const RolePlan six = plan_one(load(dev + ", seats: 6}\n"));
    REQUIRE(one.winner);
    REQUIRE(six.winner);
    CHECK(six.winner->count == one.winner->count);  // per box
    CHECK(six.winner->cost.offer.units == 6 * one.winner->cost.offer.units);
    CHECK(six.winner->cost.capex_usd == Approx(6 * one.winner->cost.capex_usd));
    // A GeForce box runs at a desk: no data-centre operations or PUE.
    CHECK(six.winner->cost.site == gpusel::Site::office);
    CHECK(six.winner->cost.breakdown.operations_usd == 0);
}

TEST_CASE("plan: candidates within the tie tolerance rank by speed — the alternative is a Pareto neighbour",
          "[plan][money]") {
    // A short fine-tune whose rentals cost a few dollars: many options tie.
    const RolePlan plan = plan_one(load(R"(name: classifier
kind: fine-tuning
model: {preset: roberta-base}
precision: fp16
training: {micro_batch: 32, seq_len: 512, dataset_samples: 1M, epochs: 3, deadline: 2d}
deployment: {target: cloud}
)"));
    REQUIRE(plan.ranked.size() >= 2);
    const double best = plan.ranked.front().cost.tco_usd;
    const double tolerance = std::max(gpusel::tie_tolerance_usd, gpusel::tie_tolerance_fraction * best);
    std::size_t tied = 0;
    for (std::size_t i = 1; i < plan.ranked.size(); ++i) {
        if (plan.ranked[i].tied) {
            ++tied;
            CHECK(plan.ranked[i].cost.tco_usd - best <= tolerance + 1e-9);
        }
    }
    CHECK(tied >= 1);
    REQUIRE(plan.alternative);
    const Candidate& winner = *plan.winner;
    const Candidate& alternative = *plan.alternative;
    const bool dominated = alternative.cost.tco_usd >= winner.cost.tco_usd && !alternative.tied &&
                           alternative.perf.training->tokens_per_s <= winner.perf.training->tokens_per_s;
    CHECK_FALSE(dominated);
    CHECK_THAT(plan.alternative_why_not, !Catch::Matchers::Contains("$0 more"));
    if (alternative.tied) {
        CHECK_THAT(plan.alternative_why_not, Catch::Matchers::Contains("tied on TCO"));
    }
}

TEST_CASE("plan: constraints.segment [edge] alone makes the site edge, and a Jetson is picked", "[plan]") {
    // The edge OCR example without deployment.target: the default site of a serving role
    // (datacenter) would exclude every edge module; the explicit segment decides instead.
    const Workload workload = load(
        "name: edge\nkind: inference\nmodel: {family: cnn, params: 25.6M, flops_per_sample: 8.2GFLOP, "
        "activation_per_sample: 100MiB, input: 224x224x3}\nprecision: fp16\nweights: int8\n"
        "inference: {batch: 1, requests_per_s: 10, slo: {e2e: 100ms}}\n"
        "constraints: {segment: [edge], max_power_per_device: 25W}\n");
    REQUIRE(workload.deployment.site == gpusel::Site::edge);
    const auto derived = std::find_if(workload.assumptions.begin(), workload.assumptions.end(),
                                      [](const gpusel::Assumption& a) { return a.field == "deployment.site"; });
    REQUIRE(derived != workload.assumptions.end());
    CHECK(derived->value == "edge");
    CHECK(derived->source == "derived from constraints.segment: [edge]");
    CHECK(workload.deployment.redundancy == gpusel::DeploymentSpec::Redundancy::none);  // as at edge targets
    const RolePlan plan = plan_one(workload);
    REQUIRE(plan.winner);
    CHECK(plan.winner->gpu.rfind("JETSON-", 0) == 0);
    CHECK(plan.winner->count == 1);
    // A site written in the file is kept (and then no edge module may be bought).
    const Workload written = load(
        "name: edge\nkind: inference\nmodel: {preset: bert-base}\nprecision: fp16\n"
        "inference: {requests_per_s: 10}\ndeployment: {site: datacenter}\nconstraints: {segment: [edge]}\n");
    CHECK(written.deployment.site == gpusel::Site::datacenter);
}

TEST_CASE("plan: a job of minutes gets one GPU, said as such", "[plan]") {
    // ResNet-50 fine-tuned on 50k images × 10 epochs: minutes of GPU work. Every option costs
    // less than the $50 tie margin, so the tie rule decides: fewer GPUs ordered first, then
    // cheaper. Issue 39's failure was 2 × GB200 from a marketplace.
    const Workload workload = load(
        "name: small-cnn\nkind: fine-tuning\nmodel: {preset: resnet-50}\nprecision: fp16\n"
        "training: {optimizer: sgd-momentum, micro_batch: 64, dataset_samples: 50K, epochs: 10}\n");
    const RolePlan plan = plan_one(workload);
    REQUIRE(plan.winner);
    CHECK(plan.winner->count == 1);
    for (const Candidate& candidate : plan.ranked) {
        CHECK(candidate.count == 1);  // the tie group: every cheap option has one GPU
    }
    // No data: section, yet the images are decoded somewhere: on the host's vCPUs, assumed.
    REQUIRE(plan.winner->perf.training);
    REQUIRE(plan.winner->perf.training->input_data);
    CHECK_FALSE(plan.winner->perf.training->input_data->given);
    CHECK(plan.winner->perf.training->input_samples_per_s > 0);
    const auto hours = std::find_if(plan.advice.begin(), plan.advice.end(), [](const std::string& line) {
        return line.find("GPU-hours of work in all") != std::string::npos;
    });
    REQUIRE(hours != plan.advice.end());
    CHECK(hours->find("the pick (one GPU) costs $") != std::string::npos);
    // The explanation names the rule that decided against the alternative.
    CHECK(plan.alternative_why_not.find("the pick won the tie: ") != std::string::npos);
}

namespace {
// A printed value ("13.5 d") as a workload field takes it ("13.5d").
std::string without_spaces(std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    return text;
}
}  // namespace

TEST_CASE("plan: nothing feasible names each constraint that, relaxed alone, gives a pick", "[plan]") {
    // 7B pre-training in 12 h on at most 8 AMD GPUs under $100,000 of capex: the deadline binds;
    // lifting the GPU count, the budget or the vendor alone still leaves the others unmet.
    const std::string head =
        "name: tight\nkind: training\nmodel: {preset: llama-2-7b}\nprecision: bf16\n"
        "constraints: {max_gpus: 8, vendor: [amd]}\nbudget: {capex: 100000USD}\n";
    const RolePlan plan =
        plan_one(load(head + "training: {optimizer: adamw, global_batch: 512, dataset_tokens: 20B, deadline: 12h}\n"));
    REQUIRE_FALSE(plan.winner);
    REQUIRE(plan.relaxations.size() == 1);
    const gpusel::Relaxation& deadline = plan.relaxations.front();
    CHECK(deadline.field == "training.deadline");
    CHECK(deadline.from == "12.0 h");
    // The value it names gives exactly the pick it names.
    const RolePlan relaxed = plan_one(load(head +
                                           "training: {optimizer: adamw, global_batch: 512, dataset_tokens: "
                                           "20B, deadline: " +
                                           without_spaces(deadline.to) + "}\n"));
    REQUIRE(relaxed.winner);
    CHECK(deadline.pick.rfind(fmt::format("{} × {}, ", relaxed.winner->count, relaxed.winner->gpu), 0) == 0);
    CHECK(relaxed.winner->perf.training->time_to_train_s.value() > 12 * 3600.0);
    const auto line = std::find_if(plan.advice.begin(), plan.advice.end(), [&](const std::string& text) {
        return text.find("relaxing one constraint gives a pick: training.deadline 12.0 h → " + deadline.to) !=
               std::string::npos;
    });
    CHECK(line != plan.advice.end());
}

TEST_CASE("plan: an SLO no GPU meets is relaxed to the least P99 that gives a pick", "[plan]") {
    const std::string head =
        "name: chat\nkind: inference\nmodel: {preset: llama-3.1-70b}\nprecision: fp8\n"
        "constraints: {max_gpus: 16}\n";
    const RolePlan plan = plan_one(load(head + "inference: {requests_per_s: 20, slo: {tpot: 8ms, ttft: 500ms}}\n"));
    REQUIRE_FALSE(plan.winner);
    std::map<std::string, gpusel::Relaxation> by_field;
    for (const gpusel::Relaxation& relaxation : plan.relaxations) {
        by_field[relaxation.field] = relaxation;
    }
    REQUIRE(by_field.count("inference.slo.tpot") == 1);
    const gpusel::Relaxation& tpot = by_field["inference.slo.tpot"];
    CHECK(tpot.from == "8.0 ms");
    const RolePlan at_target = plan_one(
        load(head + "inference: {requests_per_s: 20, slo: {tpot: " + without_spaces(tpot.to) + ", ttft: 500ms}}\n"));
    REQUIRE(at_target.winner);
    CHECK(tpot.pick.rfind(fmt::format("{} × {}, ", at_target.winner->count, at_target.winner->gpu), 0) == 0);
    CHECK(at_target.winner->perf.inference->p99_tpot_s.value() > 0.008);
    // More GPUs alone also do it (more tensor parallel per replica): at the count it names.
    REQUIRE(by_field.count("constraints.max_gpus") == 1);
    const int gpus = std::stoi(by_field["constraints.max_gpus"].to);
    CHECK(gpus > 16);
    const RolePlan wider =
        plan_one(load("name: chat\nkind: inference\nmodel: {preset: llama-3.1-70b}\n"
                      "precision: fp8\nconstraints: {max_gpus: " +
                      std::to_string(gpus) + "}\ninference: {requests_per_s: 20, slo: {tpot: 8ms, ttft: 500ms}}\n"));
    REQUIRE(wider.winner);
    CHECK(wider.winner->count <= gpus);
}
