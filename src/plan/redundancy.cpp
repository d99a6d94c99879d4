#include "plan/redundancy.hpp"

#include <algorithm>
#include <cmath>

namespace gpusel {

int spare_replicas_for_serving(const DeploymentSpec& deployment, int serving_replicas) {
    switch (deployment.redundancy) {
        case DeploymentSpec::Redundancy::none:
            return 0;
        case DeploymentSpec::Redundancy::n_plus_one:
            return 1;
        case DeploymentSpec::Redundancy::fraction:
            return std::max(1, static_cast<int>(std::ceil(serving_replicas * deployment.redundancy_fraction - 1e-9)));
    }
    return 0;
}

int spare_replicas_of_order(const DeploymentSpec& deployment, int ordered_replicas) {
    if (ordered_replicas < 2) {
        return 0;
    }
    int spares = 0;
    switch (deployment.redundancy) {
        case DeploymentSpec::Redundancy::none:
            break;
        case DeploymentSpec::Redundancy::n_plus_one:
            spares = 1;
            break;
        case DeploymentSpec::Redundancy::fraction: {
            // T = S + ⌈f·S⌉ gives T·f/(1+f) = f·S + e·f/(1+f) with 0 ≤ e < 1 the rounding, whose
            // ceiling is ⌈f·S⌉ again: the order's spares are the sizing's.
            const double fraction = deployment.redundancy_fraction;
            spares = std::max(1, static_cast<int>(std::ceil(ordered_replicas / (1.0 + fraction) * fraction - 1e-9)));
            break;
        }
    }
    return std::min(ordered_replicas - 1, spares);
}

ServingOfOrder serving_of_order(const Workload& workload, const Layout& ordered) {
    ServingOfOrder result{ordered, 0};
    if (workload.is_training()) {
        return result;
    }
    result.spare_replicas = spare_replicas_of_order(workload.deployment, ordered.data_parallel);
    result.serving.data_parallel = ordered.data_parallel - result.spare_replicas;
    return result;
}

}  // namespace gpusel
