#pragma once
// The mixed-fleet search of plan/mix.cpp, for planner.cpp (private to src/plan/; plan/mix.hpp
// holds the result's contract; docs/cost-model.md, "Mixed fleets").

#include "plan/plan.hpp"

namespace gpusel::plan_detail {

// For a serving role with an input length distribution: the cheapest two-type mix of the
// cheapest single-type picks in `plan.ranked` (all GPU types that met the SLO, before the ranking
// is cut to --top), routed by input length, against `plan.winner`. `efficiency` is the role's
// calibrated table (plan_role's); `objective` the role's.
MixPlan plan_mix(const RolePlan& plan, const Workload& workload, const Catalog& catalog,
                 const EfficiencyTable& efficiency, Objective objective);

}  // namespace gpusel::plan_detail
