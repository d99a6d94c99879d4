// The planner's side of `gpusel check`: evaluates each proposed hardware line at its count and
// at neighbouring counts, the same GPUs acquired the other way, and the cheapest option in the
// catalog. Kept apart from check.cpp so that the judgement links (and is tested) without the
// estimators.

#include <algorithm>
#include <bit>
#include <limits>
#include <map>

#include "check/check.hpp"
#include "cost/cost.hpp"
#include "perf/calibration.hpp"

#include <fmt/format.h>

namespace gpusel {

namespace {

// The counts tried besides a line's own form a ladder of how clusters are built: every count up
// to 32, multiples of 8 up to 1024, then 16 rungs per doubling (multiples of a sixteenth of the
// power of two below: 1024, 1088, ..., 2048, 2176, ...). A ladder, not every count: each rung is
// a full evaluation, and from 1 to 2^20 GPUs (the largest count a proposal may give) there are
// 316 rungs, where every multiple of 8 made 131,099 and took minutes (issue 38).
constexpr int every_count_up_to = 32;
constexpr int multiples_of_8_up_to = 1024;
constexpr int rungs_per_doubling = 16;

// The smallest rung above `count`.
int next_rung(int count) {
    const int next = count + 1;
    if (next <= every_count_up_to) {
        return next;
    }
    const int step = next < multiples_of_8_up_to
                         ? 8
                         : static_cast<int>(std::bit_floor(static_cast<unsigned>(next))) / rungs_per_doubling;
    return (next + step - 1) / step * step;
}

// Counts above `count` to try, ascending, at most `limit`: every count up to 32 more, then the
// ladder's rungs.
std::vector<int> counts_above(int count, int limit) {
    std::vector<int> counts;
    const int every_up_to = std::min(limit, count + every_count_up_to);
    for (int n = count + 1; n <= every_up_to; ++n) {
        counts.push_back(n);
    }
    for (int n = next_rung(std::max(count, every_up_to)); n <= limit; n = next_rung(n)) {
        counts.push_back(n);
    }
    return counts;
}

// Counts below `count`, ascending: the ladder's rungs.
std::vector<int> counts_below(int count) {
    std::vector<int> counts;
    for (int n = 1; n < count; n = next_rung(n)) {
        counts.push_back(n);
    }
    return counts;
}

bool meets_target(const Candidate& candidate) {
    if (candidate.perf.training) {
        return candidate.perf.training->meets_deadline;
    }
    return candidate.perf.inference ? candidate.perf.inference->meets_slo : true;
}

class Assessor {
public:
    Assessor(const Proposal& proposal, const Catalog& catalog, const EfficiencyTable& efficiency)
        : m_proposal(proposal), m_catalog(catalog), m_efficiency(efficiency) {}

    HardwareAssessment assess(std::size_t index) {
        const ProposedHardware& hardware = m_proposal.hardware[index];
        HardwareAssessment assessment;
        assessment.line = index;
        if (const GpuSpec* gpu = m_catalog.find(hardware.gpu)) {
            assessment.gpu = *gpu;
        } else {
            assessment.gpu.id = hardware.gpu;
        }
        const auto& workloads = m_proposal.project.workloads;
        const auto found = std::find_if(workloads.begin(), workloads.end(),
                                        [&](const Workload& workload) { return workload.role == hardware.role; });
        if (found == workloads.end() || m_catalog.find(hardware.gpu) == nullptr) {
            return assessment;
        }
        assessment.workload = static_cast<std::size_t>(found - workloads.begin());
        // The proposal's policy sets the memory headroom every evaluation is held to.
        Workload workload = *found;
        workload.constraints.memory_headroom_fraction = m_proposal.policy.memory_headroom_fraction;
        const GpuSpec& gpu = assessment.gpu;
        const int count = hardware.count;
        assessment.excluded_by = constraint_exclusion(workload, gpu);

        m_offer = hardware.offer.empty() ? nullptr : m_catalog.find_offer(hardware.offer);
        record_units(assessment, hardware, gpu);
        FixedEvaluation at_count = evaluate(workload, gpu, count, hardware.acquisition, hardware.unit_price_usd);
        if (at_count.candidate) {
            assessment.proposed = std::move(at_count.candidate);
        } else if (at_count.closest_memory &&
                   at_count.closest_memory->per_gpu.total_bytes <= at_count.closest_memory->capacity_bytes) {
            // It fits, but not with the policy's headroom: evaluate it without, to judge the rest.
            Workload bare = workload;
            bare.constraints.memory_headroom_fraction = 0;
            FixedEvaluation tight = evaluate(bare, gpu, count, hardware.acquisition, hardware.unit_price_usd);
            if (tight.candidate) {
                assessment.proposed = std::move(tight.candidate);
                assessment.meets_headroom = false;
            }
        }
        if (!assessment.proposed) {
            assessment.why_not = at_count.why_not;
            assessment.obstacle = obstacle(workload, hardware, gpu, at_count, assessment);
            if (assessment.obstacle == Obstacle::memory) {
                assessment.closest_miss = std::move(at_count.closest_memory);
                assessment.closest_layout = at_count.closest_layout;
            }
        }
        const bool evaluable = assessment.proposed || assessment.obstacle == Obstacle::memory;
        if (!evaluable) {
            assessment.cheapest_feasible = cheapest_feasible(workload);
            return assessment;
        }

        // More GPUs of the same type: the fewest that fit, and the fewest that also meet the target.
        const bool short_of_target = assessment.proposed && !meets_target(*assessment.proposed);
        if (!assessment.proposed || !assessment.meets_headroom || short_of_target) {
            const int limit = std::max(workload.constraints.max_gpus, count);
            assessment.max_count_searched = limit;
            for (const int n : counts_above(count, limit)) {
                FixedEvaluation more = evaluate(workload, gpu, n, hardware.acquisition, hardware.unit_price_usd);
                if (!more.candidate) {
                    continue;
                }
                if (!assessment.fewest_fitting) {
                    assessment.fewest_fitting = more.candidate;
                }
                if (meets_target(*more.candidate)) {
                    assessment.fewest_meeting_target = std::move(more.candidate);
                    break;
                }
            }
        }
        // Fewer GPUs of the same type that meet every constraint, at the confidence level a plan's
        // pick is sized for (a plan's margin replica is not "oversized").
        if (assessment.proposed && count > 1 && assessment.excluded_by.empty()) {
            for (const int n : counts_below(count)) {
                FixedEvaluation fewer = evaluate(workload, gpu, n, hardware.acquisition, hardware.unit_price_usd);
                // A single replica has no spare: where deployment.redundancy asks for one, the
                // plan buys it, so a count that drops it is not "enough".
                const bool keeps_spares = !fewer.candidate || !fewer.candidate->perf.inference ||
                                          workload.deployment.redundancy == DeploymentSpec::Redundancy::none ||
                                          fewer.candidate->spare_replicas > 0;
                if (fewer.candidate && fewer.holds_at_confidence && keeps_spares &&
                    meets_every_constraint(workload, m_proposal.policy, *fewer.candidate)) {
                    assessment.fewest_meeting_all = std::move(fewer.candidate);
                    break;
                }
            }
        }
        // The same GPUs acquired the other way, at catalog prices.
        if (assessment.proposed) {
            const Acquisition acquisition = hardware.acquisition;
            m_offer = nullptr;  // the other way: any offer of the GPU
            if (acquisition == Acquisition::buy_new || acquisition == Acquisition::buy_used) {
                assessment.same_count_on_demand =
                    evaluate(workload, gpu, count, Acquisition::cloud_on_demand, std::nullopt).candidate;
            } else if (acquisition == Acquisition::cloud_on_demand || acquisition == Acquisition::cloud_reserved ||
                       acquisition == Acquisition::cloud_reserved_3y) {
                assessment.same_count_bought =
                    evaluate(workload, gpu, count, Acquisition::buy_new, std::nullopt).candidate;
            }
        }
        assessment.cheapest_feasible = cheapest_feasible(workload);
        return assessment;
    }

private:
    // Whether the line's count is whole units of an offer it can be acquired through, and the
    // smallest unit there is (the fix of a not-purchasable line).
    void record_units(HardwareAssessment& assessment, const ProposedHardware& hardware, const GpuSpec& gpu) const {
        std::vector<const Offer*> offers;
        if (m_offer != nullptr) {
            offers.push_back(m_offer);
        } else {
            for (const Offer* offer : m_catalog.offers_for(gpu.id)) {
                const bool purchase = offer->kind == OfferKind::purchase;
                const bool condition_matches = !purchase || (hardware.acquisition == Acquisition::buy_new) ==
                                                                (offer->condition == UnitCondition::new_unit);
                if (purchase == is_purchase(hardware.acquisition) && condition_matches) {
                    offers.push_back(offer);
                }
            }
        }
        assessment.offers_available = !offers.empty();
        const auto& workloads = m_proposal.project.workloads;
        const auto workload = std::find_if(workloads.begin(), workloads.end(),
                                           [&](const Workload& entry) { return entry.role == hardware.role; });
        for (const Offer* offer : offers) {
            if (hardware.count % offer->gpus_per_unit == 0) {
                assessment.whole_units = true;
                if (workload != workloads.end()) {
                    const std::optional<OfferQuote> quote =
                        quote_offer(m_catalog, *workload, *offer, hardware.acquisition);
                    if (quote && (!assessment.catalog_price || quote->price.usd < assessment.catalog_price->usd)) {
                        assessment.catalog_price = quote->price;
                        assessment.catalog_offer = offer->id;
                    }
                }
            }
            if (assessment.smallest_unit_gpus == 0 || offer->gpus_per_unit < assessment.smallest_unit_gpus) {
                assessment.smallest_unit_gpus = offer->gpus_per_unit;
                assessment.smallest_unit =
                    offer->kind == OfferKind::rental
                        ? fmt::format("{} ({} × {})", offer->id, offer->gpus_per_unit, offer->gpu)
                        : fmt::format("{} ({}, {} GPU{})", offer->id, offer->name, offer->gpus_per_unit,
                                      offer->gpus_per_unit == 1 ? "" : "s");
            }
        }
    }

    FixedEvaluation evaluate(const Workload& workload, const GpuSpec& gpu, int count, Acquisition acquisition,
                             std::optional<double> unit_price_usd) {
        const Calibrated& calibrated = calibrated_for(workload);
        return evaluate_fixed(workload, m_catalog, gpu, count, acquisition, unit_price_usd, m_offer,
                              calibrated.efficiency, &calibrated.calibration);
    }

    struct Calibrated {
        SpeedCalibration calibration;
        EfficiencyTable efficiency;
    };
    // A workload's speed calibration is fitted once, whichever lines and alternatives use it.
    const Calibrated& calibrated_for(const Workload& workload) {
        auto found = m_calibrated.find(&workload);
        if (found == m_calibrated.end()) {
            SpeedCalibration calibration = calibrate_speed(workload, m_catalog, m_efficiency);
            EfficiencyTable efficiency = calibrated_efficiency(m_efficiency, calibration);
            found = m_calibrated.emplace(&workload, Calibrated{std::move(calibration), std::move(efficiency)}).first;
        }
        return found->second;
    }

    static Obstacle obstacle(const Workload& workload, const ProposedHardware& hardware, const GpuSpec& gpu,
                             const FixedEvaluation& evaluation, const HardwareAssessment& assessment) {
        if (evaluation.closest_memory) {
            return Obstacle::memory;
        }
        if (!runnable_precision(workload, gpu)) {
            return Obstacle::precision;
        }
        if (hardware.acquisition == Acquisition::cloud_spot && !workload.is_training()) {
            return Obstacle::spot_serving;
        }
        if (!assessment.offers_available) {
            return Obstacle::price;
        }
        if (!assessment.whole_units) {
            return Obstacle::not_purchasable;
        }
        if (workload.is_training()) {
            const int fixed =
                std::max(1, workload.training.tensor_parallel) * std::max(1, workload.training.pipeline_parallel);
            if (hardware.count % fixed != 0) {
                return Obstacle::layout;
            }
        }
        return Obstacle::other;
    }

    // The lowest-TCO candidate in the catalog that meets every constraint, by the planner.
    std::optional<Candidate> cheapest_feasible(const Workload& workload) const {
        Project project;
        project.name = workload.name;
        project.workloads.push_back(workload);
        PlanOptions options;
        options.objective = Objective::tco;
        options.top = std::numeric_limits<std::size_t>::max();
        const PlanReport plan = make_plan(project, m_catalog, m_efficiency, options);
        if (plan.roles.empty()) {
            return std::nullopt;
        }
        for (const Candidate& candidate : plan.roles.front().ranked) {
            if (meets_every_constraint(workload, m_proposal.policy, candidate)) {
                return candidate;
            }
        }
        return std::nullopt;
    }

    const Proposal& m_proposal;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    std::map<const Workload*, Calibrated> m_calibrated;
    const Offer* m_offer = nullptr;  // the offer the line being assessed names, if any
};

}  // namespace

std::vector<HardwareAssessment> assess_proposal(const Proposal& proposal, const Catalog& catalog,
                                                const EfficiencyTable& efficiency) {
    Assessor assessor(proposal, catalog, efficiency);
    std::vector<HardwareAssessment> assessments;
    for (std::size_t index = 0; index < proposal.hardware.size(); ++index) {
        assessments.push_back(assessor.assess(index));
    }
    return assessments;
}

}  // namespace gpusel
