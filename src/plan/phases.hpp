#pragma once
// Phases and a shared fleet (issue 37 item 4; docs/cost-model.md, "Phases and a shared fleet"):
// a project whose workloads run in phases (`phases:`, inputs/workload.hpp ProjectPhase) may
// buy one fleet of one GPU type that each phase uses in turn — fine-tune on it in months 1-2,
// serve from it from month 3 — instead of buying or renting for each role apart. Plain values;
// plan/phases.cpp fills them, make_plan stores them in PlanReport::shared_fleet.

#include <string>
#include <vector>

#include "inputs/workload.hpp"

namespace gpusel {

// One phase's use of the shared fleet.
struct SharedFleetPhase {
    std::string workload;
    Role role = Role::training;
    int first_month = 0;  // 1-based over the project, inclusive
    int last_month = 0;
    int gpus = 0;                 // of the fleet's GPUs it runs on: its own pick's count on the fleet's GPU type
    double utilisation = 0;       // busy share of those GPUs over its months: a service's utilisation, a job's
                                  // wall-clock over the phase
    double power_usd = 0;         // the energy its GPUs draw over its months (PUE included)
    double separate_tco_usd = 0;  // its own pick's TCO over its months, planned alone
    std::string separate_pick;    // e.g. "8 × H100-SXM5, cloud on-demand"
};

// One month of the project: what the fleet owns and what the phases keep busy.
struct SharedFleetMonth {
    int month = 0;         // 1-based
    int owned_gpus = 0;    // bought and in service
    double busy_gpus = 0;  // Σ over the phases running this month of gpus × utilisation
    int idle_gpus = 0;     // owned GPUs no running phase uses
    std::string phases;    // the workloads running, comma-separated; empty = none
    double utilisation() const { return owned_gpus > 0 ? busy_gpus / owned_gpus : 0; }
};

struct SharedFleet {
    std::string gpu;  // catalog id
    std::string gpu_name;
    std::string offer;       // the purchase offer's name
    int owned_gpus = 0;      // the most the running phases need in any month (whole units)
    double span_months = 0;  // month 1 to the last phase's last month
    double capex_usd = 0;
    double shared_tco_usd = 0;    // the fleet over the span: capex, operations, failures, each phase's power
    double separate_tco_usd = 0;  // the phases' own picks, summed
    bool chosen = false;          // cheaper than the separate picks by more than the tie margin
    std::string why;              // why chosen, or why not
    std::vector<SharedFleetPhase> phases;
    std::vector<SharedFleetMonth> months;
    std::vector<std::string> idle_advice;  // what idle owned capacity is worth renting out or dropping
};

}  // namespace gpusel
