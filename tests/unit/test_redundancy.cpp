// deployment.redundancy's spares (plan/redundancy.hpp): the planner's sizing and the hold-out of
// a fixed count (`gpusel perf --count`, check's lines) are one rule, so ordering a plan's count
// holds back exactly the spares the plan sized.

#include <catch2/catch.hpp>

#include "plan/redundancy.hpp"

using gpusel::DeploymentSpec;
using gpusel::Layout;
using gpusel::serving_of_order;
using gpusel::spare_replicas_for_serving;
using gpusel::spare_replicas_of_order;
using gpusel::Workload;

namespace {

DeploymentSpec with(DeploymentSpec::Redundancy redundancy, double fraction = 0) {
    DeploymentSpec deployment;
    deployment.redundancy = redundancy;
    deployment.redundancy_fraction = fraction;
    return deployment;
}

}  // namespace

TEST_CASE("redundancy: n+1 and none, sized and held out of an order", "[redundancy]") {
    const DeploymentSpec n_plus_one = with(DeploymentSpec::Redundancy::n_plus_one);
    CHECK(spare_replicas_for_serving(n_plus_one, 3) == 1);
    CHECK(spare_replicas_of_order(n_plus_one, 4) == 1);
    // A lone replica serves: nothing is held out of one.
    CHECK(spare_replicas_of_order(n_plus_one, 1) == 0);
    CHECK(spare_replicas_of_order(n_plus_one, 2) == 1);
    const DeploymentSpec none = with(DeploymentSpec::Redundancy::none);
    CHECK(spare_replicas_for_serving(none, 7) == 0);
    CHECK(spare_replicas_of_order(none, 8) == 0);
}

TEST_CASE("redundancy: a percentage rounds up, and an order of serving + spares holds the same spares",
          "[redundancy]") {
    const DeploymentSpec quarter = with(DeploymentSpec::Redundancy::fraction, 0.25);
    // ⌈0.25 × 5⌉ = ⌈1.25⌉ = 2; ⌈0.25 × 4⌉ = 1; ⌈0.25 × 1⌉ = 1 (at least one).
    CHECK(spare_replicas_for_serving(quarter, 5) == 2);
    CHECK(spare_replicas_for_serving(quarter, 4) == 1);
    CHECK(spare_replicas_for_serving(quarter, 1) == 1);
    // 7 ordered: 7 / 1.25 × 0.25 = 1.4, rounded up 2 (5 serve); 5 ordered: 5 / 1.25 × 0.25 = 1.
    CHECK(spare_replicas_of_order(quarter, 7) == 2);
    CHECK(spare_replicas_of_order(quarter, 5) == 1);
    // 2 ordered at 50 %: 2 / 1.5 × 0.5 = 0.67 → 1, and one still serves.
    CHECK(spare_replicas_of_order(with(DeploymentSpec::Redundancy::fraction, 0.5), 2) == 1);
    for (const double fraction : {0.1, 0.2, 0.25, 1.0 / 3, 0.5, 1.0}) {
        const DeploymentSpec deployment = with(DeploymentSpec::Redundancy::fraction, fraction);
        for (int serving = 1; serving <= 64; ++serving) {
            const int spares = spare_replicas_for_serving(deployment, serving);
            INFO(fraction << " with " << serving << " serving, " << spares << " spares");
            CHECK(spare_replicas_of_order(deployment, serving + spares) == spares);
        }
    }
}

TEST_CASE("redundancy: serving_of_order holds a serving workload's spares, never a training one's", "[redundancy]") {
    Workload serving;
    serving.kind = gpusel::WorkloadKind::inference;
    serving.deployment.redundancy = DeploymentSpec::Redundancy::n_plus_one;
    Layout ordered;
    ordered.tensor_parallel = 4;
    ordered.data_parallel = 2;  // 8 GPUs as two TP4 replicas: one serves, one is the spare
    const auto held = serving_of_order(serving, ordered);
    CHECK(held.spare_replicas == 1);
    CHECK(held.serving.data_parallel == 1);
    CHECK(held.serving.tensor_parallel == 4);
    Workload training = serving;
    training.kind = gpusel::WorkloadKind::training;
    const auto trained = serving_of_order(training, ordered);
    CHECK(trained.spare_replicas == 0);
    CHECK(trained.serving.data_parallel == 2);
}
