#pragma once

// deployment.redundancy's spare replicas (docs/cost-model.md, `deployment.redundancy`): replicas
// ordered and kept out of serving, carrying no load. The one rule the planner sizes a serving
// fleet by, and `gpusel perf --count` and check's fixed lines hold spares out of a count by.

#include "inputs/layout.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// The spares for `serving_replicas` replicas that carry the load: none, 1 (n+1), or
// ⌈fraction × serving⌉, at least 1 (a percentage).
int spare_replicas_for_serving(const DeploymentSpec& deployment, int serving_replicas);

// The spares held out of `ordered_replicas` replicas ordered as given: the rule above solved for
// the total (ordering serving + spare_replicas_for_serving(serving) holds exactly those spares
// back), and never the last replica (a lone replica serves). 0 for fewer than 2 replicas.
int spare_replicas_of_order(const DeploymentSpec& deployment, int ordered_replicas);

// An inference layout over the GPUs ordered (`ordered.data_parallel`: every replica ordered) with
// the workload's spares held out: `serving.data_parallel` the replicas that carry the load. A
// training workload serves nothing: its layout is returned unchanged, no spares.
struct ServingOfOrder {
    Layout serving;
    int spare_replicas = 0;
};
ServingOfOrder serving_of_order(const Workload& workload, const Layout& ordered);

}  // namespace gpusel
