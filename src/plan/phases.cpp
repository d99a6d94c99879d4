// A shared fleet over a project's phases (phases.hpp; docs/cost-model.md, "Phases and a shared
// fleet"). Each phase was planned alone over its months; here every GPU type that all phased
// roles ranked is tried as one bought fleet sized for the busiest month, and priced as the cost
// model prices owning it over the whole span — capex, spares, operations and failures once, the
// energy of each phase over its own months — against the phases' own picks summed.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/parallel.hpp"
#include "base/units.hpp"
#include "plan/internal.hpp"

namespace gpusel {

namespace {

using namespace plan_detail;

const RolePlan* role_of(const std::vector<RolePlan>& roles, const std::string& workload) {
    const auto found =
        std::find_if(roles.begin(), roles.end(), [&](const RolePlan& role) { return role.workload.name == workload; });
    return found == roles.end() ? nullptr : &*found;
}

const Candidate* ranked_on(const RolePlan& role, const std::string& gpu) {
    const auto found =
        std::find_if(role.ranked.begin(), role.ranked.end(), [&](const Candidate& c) { return c.gpu == gpu; });
    return found == role.ranked.end() ? nullptr : &*found;
}

bool meets_target(const Candidate& candidate) {
    return candidate.perf.training ? candidate.perf.training->meets_deadline
                                   : (candidate.perf.inference && candidate.perf.inference->meets_slo);
}

int whole_units(int gpus, int gpus_per_unit) {
    const int per_unit = std::max(1, gpus_per_unit);
    return (gpus + per_unit - 1) / per_unit * per_unit;
}

// A busy share of the GPUs a phase runs on: a service's utilisation as priced; a job's
// wall-clock (all its runs) over the phase's months.
double phase_utilisation(const Candidate& candidate, double months) {
    if (candidate.usage.service) {
        return candidate.usage.average_utilization;
    }
    return std::min(1.0, candidate.usage.job_seconds / (months * seconds_per_month));
}

// The unit sizes the catalog sells `gpu` in, new (a card, an 8-GPU server, a baseboard in its
// host's slots), smallest first.
std::vector<int> purchase_unit_sizes(const Catalog& catalog, const GpuSpec& gpu) {
    std::vector<int> unit_sizes;
    for (const Offer* offer : catalog.offers_for(gpu.id)) {
        if (offer->kind == OfferKind::purchase && offer->condition == UnitCondition::new_unit && offer->price) {
            const HostOffer* host = offer->needs_host.empty() ? nullptr : catalog.find_host(offer->needs_host);
            unit_sizes.push_back(offer->gpus_per_unit * (host != nullptr ? std::max(1, host->slots) : 1));
            unit_sizes.push_back(offer->gpus_per_unit);
        }
    }
    std::sort(unit_sizes.begin(), unit_sizes.end());
    unit_sizes.erase(std::unique(unit_sizes.begin(), unit_sizes.end()), unit_sizes.end());
    return unit_sizes;
}

// The fleet's months: owned, busy (GPUs × utilisation of the phases running) and idle GPUs.
void fill_months(SharedFleet& fleet, int span) {
    for (int month = 1; month <= span; ++month) {
        SharedFleetMonth row;
        row.month = month;
        row.owned_gpus = fleet.owned_gpus;
        int used = 0;
        std::vector<std::string> running;
        for (const SharedFleetPhase& part : fleet.phases) {
            if (part.first_month <= month && month <= part.last_month) {
                row.busy_gpus += part.gpus * part.utilisation;
                used += part.gpus;
                running.push_back(part.workload);
            }
        }
        row.idle_gpus = std::max(0, fleet.owned_gpus - used);
        row.phases = fmt::format("{}", fmt::join(running, ", "));
        fleet.months.push_back(std::move(row));
    }
}

// The fleet bought in whole units of the smallest unit size that can be bought as one: each
// phase's count rounded up to it (into `counts`), the busiest month's sum (`gpus`) priced for
// `owner` over the span. None, with the last reason in `why_not`, when no unit size can be.
std::optional<FixedEvaluation> buy_fleet(const std::vector<ProjectPhase>& phases, int span,
                                         const std::vector<int>& unit_sizes, const Workload& owner,
                                         const RolePlan& owner_role, const Catalog& catalog,
                                         const EfficiencyTable& owner_efficiency, const GpuSpec& gpu,
                                         std::vector<int>& counts, int& gpus, std::string& why_not) {
    for (const int unit : unit_sizes) {
        std::vector<int> rounded = counts;
        for (int& count : rounded) {
            count = whole_units(count, unit);
        }
        int busiest = 0;
        for (int month = 1; month <= span; ++month) {
            int running = 0;
            for (std::size_t p = 0; p < phases.size(); ++p) {
                if (phases[p].first_month <= month && month <= phases[p].last_month) {
                    running += rounded[p];
                }
            }
            busiest = std::max(busiest, running);
        }
        FixedEvaluation attempt = evaluate_fixed(owner, catalog, gpu, busiest, Acquisition::buy_new, std::nullopt,
                                                 nullptr, owner_efficiency, &owner_role.calibration);
        if (attempt.candidate && attempt.candidate->cost.available) {
            counts = rounded;
            gpus = busiest;
            return attempt;
        }
        why_not = fmt::format("{} GPUs: {}", busiest, attempt.why_not);
    }
    return std::nullopt;
}

struct FleetTry {
    SharedFleet fleet;
    bool feasible = false;
    RolePlan owner;  // the largest phase's role over the span, its pick the whole fleet bought
};

FleetTry try_gpu(const std::vector<ProjectPhase>& phases, const std::vector<RolePlan>& roles, const Catalog& catalog,
                 const EfficiencyTable& efficiency, const GpuSpec& gpu) {
    FleetTry result;
    SharedFleet& fleet = result.fleet;
    fleet.gpu = gpu.id;
    fleet.gpu_name = gpu.name;
    int span = 0;
    for (const ProjectPhase& phase : phases) {
        span = std::max(span, phase.last_month);
    }
    fleet.span_months = span;
    std::vector<int> counts;
    for (const ProjectPhase& phase : phases) {
        counts.push_back(ranked_on(*role_of(roles, phase.workload), gpu.id)->count);
    }
    const std::vector<int> unit_sizes = purchase_unit_sizes(catalog, gpu);
    if (unit_sizes.empty()) {
        fleet.why = fmt::format("{} has no new purchase offer", gpu.name);
        return result;
    }
    // A phase whose own pick uses more GPUs than the others need is tried on the others' count
    // (a job then runs longer, which its deadline may allow): the fleet is sized to the phases,
    // not to the largest one's cheapest rental.
    for (std::size_t p = 0; p < phases.size(); ++p) {
        int others = 0;
        for (std::size_t q = 0; q < phases.size(); ++q) {
            others = q == p ? others : std::max(others, counts[q]);
        }
        if (others <= 0 || others >= counts[p]) {
            continue;
        }
        const RolePlan& role = *role_of(roles, phases[p].workload);
        const FixedEvaluation smaller =
            evaluate_fixed(role.workload, catalog, gpu, others, Acquisition::buy_new, std::nullopt, nullptr,
                           calibrated_efficiency(efficiency, role.calibration), &role.calibration, true);
        if (smaller.candidate && meets_target(*smaller.candidate) && smaller.holds_at_confidence) {
            counts[p] = others;
        }
    }
    // The busiest month's GPUs in whole units of the smallest unit that can be bought as one
    // fleet, priced by the cost model over the span with the deployment (site, PUE, operations)
    // of the phase that needs the most GPUs (the longest of those), which runs at the fleet's
    // size; its energy is replaced by each phase's own below.
    std::size_t largest = 0;
    for (std::size_t p = 1; p < phases.size(); ++p) {
        if (counts[p] > counts[largest] ||
            (counts[p] == counts[largest] && phases[p].months() > phases[largest].months())) {
            largest = p;
        }
    }
    const RolePlan& owner_role = *role_of(roles, phases[largest].workload);
    Workload owner = owner_role.workload;
    owner.deployment.horizon_months = span;
    const EfficiencyTable owner_efficiency = calibrated_efficiency(efficiency, owner_role.calibration);
    std::string why_not;
    const std::optional<FixedEvaluation> owned = buy_fleet(phases, span, unit_sizes, owner, owner_role, catalog,
                                                           owner_efficiency, gpu, counts, fleet.owned_gpus, why_not);
    if (!owned) {
        fleet.why = fmt::format("{} cannot be bought as one fleet: {}", gpu.name, why_not);
        return result;
    }
    result.owner.role = owner_role.role;
    result.owner.workload = owner;
    result.owner.winner = owned->candidate;
    const CostEstimate& owned_cost = owned->candidate->cost;
    const Offer* offer = catalog.find_offer(owned_cost.offer.id);
    fleet.offer = owned_cost.offer.name;
    fleet.capex_usd = owned_cost.capex_usd;
    fleet.shared_tco_usd = owned_cost.tco_usd - owned_cost.breakdown.power_usd;
    for (std::size_t p = 0; p < phases.size(); ++p) {
        const ProjectPhase& phase = phases[p];
        const RolePlan& role = *role_of(roles, phase.workload);
        const EfficiencyTable role_efficiency = calibrated_efficiency(efficiency, role.calibration);
        const FixedEvaluation use = evaluate_fixed(role.workload, catalog, gpu, counts[p], Acquisition::buy_new,
                                                   std::nullopt, offer, role_efficiency, &role.calibration, true);
        if (!use.candidate || !meets_target(*use.candidate) || !use.holds_at_confidence) {
            fleet.why = fmt::format(
                "{} on {} × {} {}", phase.workload, counts[p], gpu.name,
                use.candidate ? "misses its deadline or SLO at the confidence level" : "does not fit: " + use.why_not);
            return result;
        }
        SharedFleetPhase part;
        part.workload = phase.workload;
        part.role = role.role;
        part.first_month = phase.first_month;
        part.last_month = phase.last_month;
        part.gpus = counts[p];
        part.utilisation = phase_utilisation(*use.candidate, phase.months());
        part.power_usd = use.candidate->cost.breakdown.power_usd;
        part.separate_tco_usd = role.winner->cost.tco_usd;
        part.separate_pick =
            fmt::format("{} × {}, {}", role.winner->count, role.winner->gpu_name, describe(role.winner->acquisition));
        fleet.shared_tco_usd += part.power_usd;
        fleet.separate_tco_usd += part.separate_tco_usd;
        fleet.phases.push_back(std::move(part));
    }
    fill_months(fleet, span);
    result.feasible = true;
    return result;
}

// Runs of months with the same idle GPUs, each with what renting those GPUs out would bring at
// most: the catalog's lowest on-demand rate for the GPU (what a tenant pays a cloud; a
// marketplace host keeps that less its fee).
void advise_idle(SharedFleet& fleet, double rent_usd_per_gpu_hour, const Money& money) {
    std::size_t start = 0;
    while (start < fleet.months.size()) {
        std::size_t end = start;
        while (end + 1 < fleet.months.size() && fleet.months[end + 1].idle_gpus == fleet.months[start].idle_gpus &&
               fleet.months[end + 1].phases == fleet.months[start].phases) {
            ++end;
        }
        const SharedFleetMonth& row = fleet.months[start];
        if (row.idle_gpus > 0) {
            const int months = static_cast<int>(end - start + 1);
            const std::string when = months == 1 ? fmt::format("month {}", row.month)
                                                 : fmt::format("months {}–{}", row.month, fleet.months[end].month);
            std::string line = fmt::format("{}: {} of {} owned GPUs idle{}", when, row.idle_gpus, row.owned_gpus,
                                           row.phases.empty() ? " (no phase runs)" : "");
            if (rent_usd_per_gpu_hour > 0) {
                line += fmt::format(
                    "; renting them out brings at most {} (the lowest on-demand {}/GPU-h, before a marketplace's "
                    "fee), or order fewer and rent the busiest phase's extra",
                    money.whole(row.idle_gpus * rent_usd_per_gpu_hour * hours_per_month * months),
                    money.cents(rent_usd_per_gpu_hour));
            }
            fleet.idle_advice.push_back(std::move(line));
        }
        start = end + 1;
    }
}

}  // namespace

std::optional<SharedFleet> plan_detail::plan_shared_fleet(const std::vector<ProjectPhase>& phases,
                                                          const std::vector<RolePlan>& roles, const Catalog& catalog,
                                                          const EfficiencyTable& efficiency,
                                                          std::optional<ProcurementLine>& line) {
    if (phases.size() < 2) {
        return std::nullopt;
    }
    for (const ProjectPhase& phase : phases) {
        const RolePlan* role = role_of(roles, phase.workload);
        if (role == nullptr || !role->winner) {
            return std::nullopt;
        }
    }
    std::vector<const GpuSpec*> tried;
    for (const Candidate& candidate : role_of(roles, phases.front().workload)->ranked) {
        const bool everywhere = std::all_of(phases.begin(), phases.end(), [&](const ProjectPhase& phase) {
            return ranked_on(*role_of(roles, phase.workload), candidate.gpu) != nullptr;
        });
        const GpuSpec* gpu = catalog.find(candidate.gpu);
        if (everywhere && gpu != nullptr) {
            tried.push_back(gpu);
        }
    }
    // Each GPU type's fleet is independent of the others': on every core, each into its own
    // slot, then weighed in ranking order.
    std::vector<FleetTry> attempts(tried.size());
    parallel_for(tried.size(), [&](std::size_t index) {
        attempts[index] = try_gpu(phases, roles, catalog, efficiency, *tried[index]);
    });
    std::optional<FleetTry> best;
    for (FleetTry& attempt : attempts) {
        if (!attempt.feasible) {
            continue;
        }
        if (!best || attempt.fleet.shared_tco_usd < best->fleet.shared_tco_usd) {
            best = std::move(attempt);
        }
    }
    if (!best) {
        return std::nullopt;
    }
    SharedFleet fleet = std::move(best->fleet);
    const double margin = tie_tolerance(fleet.separate_tco_usd);
    const Money money = money_in(role_of(roles, phases.front().workload)->workload);
    fleet.chosen = fleet.shared_tco_usd < fleet.separate_tco_usd - margin;
    fleet.why = fleet.chosen
                    ? fmt::format("one fleet costs {} less over {:g} months than each phase on its own pick",
                                  money.whole(fleet.separate_tco_usd - fleet.shared_tco_usd), fleet.span_months)
                : fleet.shared_tco_usd > fleet.separate_tco_usd
                    ? fmt::format(
                          "one fleet costs {} more over {:g} months than each phase on its own pick: the "
                          "phases keep their own picks",
                          money.whole(fleet.shared_tco_usd - fleet.separate_tco_usd), fleet.span_months)
                    : fmt::format("one fleet saves {}, within the tie margin ({}): the phases keep their own picks",
                                  money.whole(fleet.separate_tco_usd - fleet.shared_tco_usd), money.whole(margin));
    double rent = 0;
    for (const ProjectPhase& phase : phases) {
        const RolePlan& role = *role_of(roles, phase.workload);
        if (const Candidate* on_fleet = ranked_on(role, fleet.gpu)) {
            rent = std::max(rent, on_fleet->usage.reference_rent_usd_per_gpu_hour);
        }
    }
    advise_idle(fleet, rent, money);
    if (fleet.chosen) {
        // The fleet's one order line, priced as the shared TCO: the energy each phase draws in
        // its own months in place of the owner's over the span, spread evenly as its opex.
        ProcurementLine shared = procurement_line(best->owner);
        const double resale_subtracted = shared.resale_counted ? shared.resale_usd : 0.0;
        shared.tco_usd = fleet.shared_tco_usd;
        shared.monthly_opex_usd = (fleet.shared_tco_usd + resale_subtracted - shared.total_usd) / fleet.span_months;
        std::vector<std::string> uses;
        for (const SharedFleetPhase& part : fleet.phases) {
            uses.push_back(
                fmt::format("{} (months {}–{}, {} GPUs)", part.workload, part.first_month, part.last_month, part.gpus));
        }
        shared.reason = fmt::format("one fleet for {}: {}", fmt::join(uses, ", then "), fleet.why);
        std::vector<std::string> separate;
        for (const SharedFleetPhase& part : fleet.phases) {
            separate.push_back(fmt::format("{}: {}", part.workload, part.separate_pick));
        }
        shared.alternative = fmt::format("{}", fmt::join(separate, "; "));
        shared.alternative_reason =
            fmt::format("each phase on its own pick: {} over the phases", money.whole(fleet.separate_tco_usd));
        line = std::move(shared);
    }
    return fleet;
}

}  // namespace gpusel
