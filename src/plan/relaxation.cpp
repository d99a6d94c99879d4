// When nothing meets every constraint: which one constraint, relaxed alone, gives a pick, and by
// how much (issue 39: "max_gpus 24 → 28", not "relax the deadline, SLO or budget"). Each is the
// same role planned again with that constraint lifted; the least value it then takes among the
// ranked options (one per GPU type, each the best of its type by the objective) is the smallest
// relaxation the ranking shows, not a search over every configuration.

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "base/format.hpp"
#include "plan/internal.hpp"

namespace gpusel::plan_detail {

namespace {

// Every GPU type's best option, so that the least value is looked for across the catalog.
constexpr std::size_t every_type = 1000;
// The widest cluster a relaxed max_gpus searches: the training search's own limit.
constexpr int widest_cluster = 16384;

std::string pick_words(const Candidate& candidate, const Workload& workload) {
    return fmt::format("{} × {}, {}, {} over {:g} months", candidate.count, candidate.gpu,
                       describe(candidate.acquisition), money_in(workload).whole(candidate.cost.tco_usd),
                       workload.deployment.horizon_months);
}

// The ranked option with the least `value` (absent values are skipped); nullptr when none has one.
const Candidate* least(const RolePlan& plan, const std::function<std::optional<double>(const Candidate&)>& value) {
    const Candidate* best = nullptr;
    double best_value = 0;
    for (const Candidate& candidate : plan.ranked) {
        const std::optional<double> figure = value(candidate);
        if (figure && (best == nullptr || *figure < best_value)) {
            best = &candidate;
            best_value = *figure;
        }
    }
    return best;
}

// "[a, b]" as a list is written in a workload.
template <typename Value>
std::string list_words(const std::vector<Value>& values) {
    std::vector<std::string> words;
    for (const Value& value : values) {
        if constexpr (std::is_same_v<Value, std::string>) {
            words.push_back(value);
        } else {
            words.emplace_back(to_string(value));
        }
    }
    return fmt::format("[{}]", fmt::join(words, ", "));
}

class Relaxer {
public:
    Relaxer(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency, Objective objective,
            bool reference)
        : m_workload(workload),
          m_catalog(catalog),
          m_efficiency(efficiency),
          m_objective(objective),
          m_reference(reference) {}

    std::vector<Relaxation> run() {
        max_gpus();
        deadline();
        budget();
        slo();
        filters();
        return std::move(m_found);
    }
    const std::vector<std::string>& tried() const { return m_tried; }

private:
    RolePlan replan(const std::function<void(Workload&)>& relax, Objective objective) const {
        Workload relaxed = m_workload;
        relax(relaxed);
        return plan_role(relaxed, m_catalog, m_efficiency, objective, every_type, m_reference);
    }

    // A numeric constraint: its field and value as given (`limit`, `from`), how a value is set
    // (`set`; `lifted` removes the bound), how a ranked option measures against it, how a value
    // is rounded to one a user would write (up: counts and dollars whole, durations 0.5 % over
    // their three printed figures) and printed.
    struct Bound {
        std::string field;
        std::string from;
        double limit = 0;
        double lifted = 0;
        std::function<void(Workload&, double)> set;
        Objective objective = Objective::tco;  // the lifted plan's: the least value comes first
        std::function<std::optional<double>(const Candidate&)> measure;
        std::function<double(double)> round;
        std::function<std::string(double)> words;
    };

    // The least value the options take with the bound lifted, then that value (rounded up) set
    // and planned again, raised by 10 % up to 8 times until the plan has a pick: the confidence
    // gate and the replicas' margins may need a little more than the estimate itself. Where the
    // pick then needs less than the value (another GPU type), its own figure is tried once more.
    // Nothing is added when the least value is within the limit (that bound was not what bound).
    void bounded(const Bound& bound) {
        m_tried.push_back(bound.field);
        const RolePlan lifted = replan([&](Workload& relaxed) { bound.set(relaxed, bound.lifted); }, bound.objective);
        const Candidate* best = least(lifted, bound.measure);
        if (best == nullptr || *bound.measure(*best) <= bound.limit) {
            return;
        }
        const auto plan_at = [&](double value) {
            return replan([&](Workload& relaxed) { bound.set(relaxed, value); }, m_objective);
        };
        double value = bound.round(*bound.measure(*best));
        for (int attempt = 0; attempt < 8; ++attempt) {
            const RolePlan plan = plan_at(value);
            if (!plan.winner) {
                value = bound.round(value * 1.1);
                continue;
            }
            Relaxation found{bound.field, bound.from, bound.words(value), pick_words(*plan.winner, m_workload)};
            if (const std::optional<double> needs = bound.measure(*plan.winner);
                needs && bound.round(*needs) < value && bound.round(*needs) > bound.limit) {
                const RolePlan tighter = plan_at(bound.round(*needs));
                if (tighter.winner) {
                    found.to = bound.words(bound.round(*needs));
                    found.pick = pick_words(*tighter.winner, m_workload);
                }
            }
            m_found.push_back(std::move(found));
            return;
        }
    }

    static double whole(double value) { return std::ceil(value - 1e-9); }
    static double duration_up(double seconds) { return seconds * 1.005; }

    void max_gpus() {
        const int limit = m_workload.constraints.max_gpus;
        if (limit >= widest_cluster) {
            return;
        }
        bounded({"constraints.max_gpus", std::to_string(limit), static_cast<double>(limit), widest_cluster,
                 [](Workload& relaxed, double value) {
                     relaxed.constraints.max_gpus = std::min(widest_cluster, static_cast<int>(value));
                 },
                 m_objective, [](const Candidate& candidate) { return std::optional<double>(candidate.count); }, whole,
                 [](double count) { return fmt::format("{:.0f}", count); }});
    }

    void deadline() {
        const double limit = m_workload.training.deadline_seconds;
        if (!m_workload.is_training() || limit <= 0) {
            return;
        }
        bounded({"training.deadline", format_duration(limit), limit, 0,
                 [](Workload& relaxed, double value) { relaxed.training.deadline_seconds = value; }, Objective::time,
                 [](const Candidate& candidate) {
                     return candidate.perf.training ? candidate.perf.training->time_to_train_s : std::nullopt;
                 },
                 duration_up, [](double seconds) { return format_duration(seconds); }});
    }

    void budget() {
        const BudgetSpec& budget = m_workload.budget;
        const auto words = [](double usd) { return format_usd(usd); };
        if (budget.capex_usd > 0) {
            bounded({"budget.capex", format_usd(budget.capex_usd), budget.capex_usd, 0,
                     [](Workload& relaxed, double value) { relaxed.budget.capex_usd = value; }, m_objective,
                     [](const Candidate& candidate) { return std::optional<double>(candidate.cost.capex_usd); }, whole,
                     words});
        }
        if (budget.monthly_usd > 0) {
            bounded({"budget.monthly", format_usd(budget.monthly_usd), budget.monthly_usd, 0,
                     [](Workload& relaxed, double value) { relaxed.budget.monthly_usd = value; }, m_objective,
                     [](const Candidate& candidate) { return std::optional<double>(candidate.cost.monthly_opex_usd); },
                     whole, words});
        }
    }

    void slo() {
        if (m_workload.is_training()) {
            return;
        }
        const SloSpec& slo = m_workload.inference.slo;
        const auto target = [&](const char* field, double limit, double SloSpec::*member,
                                std::optional<double> InferencePerf::*measured) {
            if (limit <= 0) {
                return;
            }
            bounded({fmt::format("inference.slo.{}", field), format_duration(limit), limit, 0,
                     [member](Workload& relaxed, double value) { relaxed.inference.slo.*member = value; },
                     Objective::latency,
                     [measured](const Candidate& candidate) {
                         return candidate.perf.inference ? (*candidate.perf.inference).*measured : std::nullopt;
                     },
                     duration_up, [](double seconds) { return format_duration(seconds); }});
        };
        target("tpot", slo.tpot_seconds, &SloSpec::tpot_seconds, &InferencePerf::p99_tpot_s);
        target("ttft", slo.ttft_seconds, &SloSpec::ttft_seconds, &InferencePerf::p99_ttft_s);
        target("e2e", slo.e2e_seconds, &SloSpec::e2e_seconds, &InferencePerf::p99_e2e_s);
    }

    // A GPU filter lifted: "any"; the pick is the relaxed plan's own.
    void lifted(const std::string& field, const std::string& from, const std::function<void(Workload&)>& relax) {
        m_tried.push_back(field);
        const RolePlan plan = replan(relax, m_objective);
        if (plan.winner) {
            m_found.push_back({field, from, "any", pick_words(*plan.winner, m_workload)});
        }
    }

    void filters() {
        const ConstraintSpec& constraints = m_workload.constraints;
        if (!constraints.vendors.empty()) {
            lifted("constraints.vendor", list_words(constraints.vendors),
                   [](Workload& relaxed) { relaxed.constraints.vendors.clear(); });
        }
        if (!constraints.segments.empty()) {
            lifted("constraints.segment", list_words(constraints.segments),
                   [](Workload& relaxed) { relaxed.constraints.segments.clear(); });
        }
        if (!constraints.form_factors.empty()) {
            lifted("constraints.form_factor", list_words(constraints.form_factors),
                   [](Workload& relaxed) { relaxed.constraints.form_factors.clear(); });
        }
        if (!constraints.allow.empty()) {
            lifted("constraints.allow", list_words(constraints.allow),
                   [](Workload& relaxed) { relaxed.constraints.allow.clear(); });
        }
        if (!constraints.deny.empty()) {
            lifted("constraints.deny", list_words(constraints.deny),
                   [](Workload& relaxed) { relaxed.constraints.deny.clear(); });
        }
        if (constraints.max_power_per_device_watts > 0) {
            lifted("constraints.max_power_per_device", fmt::format("{:g} W", constraints.max_power_per_device_watts),
                   [](Workload& relaxed) { relaxed.constraints.max_power_per_device_watts = 0; });
        }
    }

    const Workload& m_workload;
    const Catalog& m_catalog;
    const EfficiencyTable& m_efficiency;
    Objective m_objective;
    bool m_reference;
    std::vector<Relaxation> m_found;
    std::vector<std::string> m_tried;
};

}  // namespace

std::vector<Relaxation> find_relaxations(const Workload& workload, const Catalog& catalog,
                                         const EfficiencyTable& efficiency, Objective objective, bool reference,
                                         std::vector<std::string>& tried) {
    Relaxer relaxer(workload, catalog, efficiency, objective, reference);
    std::vector<Relaxation> found = relaxer.run();
    tried = relaxer.tried();
    return found;
}

}  // namespace gpusel::plan_detail
