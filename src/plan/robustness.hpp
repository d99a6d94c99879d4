#pragma once
// How firmly a role's pick stands (docs/cost-model.md, "Robustness"). Bands: speed from the perf
// model's validation errors by phase, price from its kind, memory from the memory model's own
// band. A seeded Monte Carlo over those bands gives the share of scenarios in which the pick
// stays best (p_best) and still meets every hard constraint as ordered (p_feasible); break-even
// values come from re-ranking the planner's configurations with one input moved (grid, then
// bisection). Pure and deterministic: the same inputs and seed give the same result, bit for bit.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace gpusel {

// ± fraction of a price by its kind: quote, list and MSRP 5 %; reported 10 %; street 15 %;
// estimate 30 % (docs/cost-model.md, "Price bands").
double price_band_fraction(PriceKind kind);

// ± fraction of a candidate's speed, by the validation group its speed belongs to
// (speed_band_group): the wider side of the group's out-of-sample band in data/efficiency.yaml
// (`speed_bands`, docs/perf-model.md "Validation").
struct SpeedBand {
    std::string phase;  // "training", "non-LLM", "prefill", "decode"
    double fraction = 0;
    SpeedBandFactors percentiles;  // measured / predicted speed: 10th, 50th, 90th percentile
    bool measured = false;         // a calibration measured this GPU and size: the band is its noise
};
SpeedBand speed_band(const Workload& workload, const EfficiencyTable& efficiency);
// The band of one configuration: the measurement's noise where `calibration` measured `gpu` at
// the layout's size (measured_speed_band, perf/calibration.hpp), else the group's band above.
SpeedBand speed_band(const Workload& workload, const EfficiencyTable& efficiency, const SpeedCalibration& calibration,
                     std::string_view gpu, const Layout& layout);

// A distribution through three percentiles (10th, 50th, 90th), as the bands are measured: two
// half-normals joined at the median (a split normal), in log space for factors (speed, price)
// so that a factor stays positive. Reproduces all three percentiles exactly; below the 10th and
// above the 90th it has the normal's tails, so 10 % of draws fall outside the band on each side.
struct PercentileBand {
    double p10 = 1;
    double p50 = 1;
    double p90 = 1;
    bool log_scale = true;  // factors; false: an additive quantity (bytes)
};
// The 90th percentile of the standard normal.
inline constexpr double normal_p90 = 1.2815515655446004;
// The bands as distributions: speed as measured / predicted, a price ± its kind's fraction, a
// memory breakdown's low / estimate / high bytes.
PercentileBand speed_distribution(const SpeedBandFactors& band);
PercentileBand price_distribution(double band_fraction);
PercentileBand memory_distribution(const MemoryBreakdown& memory);
// The band's value at standard-normal deviate `z` (its quantile at Φ(z)).
double band_value(const PercentileBand& band, double z);
// The share of the band's distribution at or below `value` (band_value's inverse, then Φ).
double band_share_below(const PercentileBand& band, double value);
// The scenarios' random numbers: splitmix64 (Steele, Lea, Flood 2014), a fixed, portable
// sequence (<random>'s distributions are implementation-defined, which would make the output
// differ between standard libraries), and standard-normal deviates from it (Box–Muller).
class ScenarioRandom {
public:
    explicit ScenarioRandom(std::uint64_t seed) : m_state(seed) {}
    double uniform();  // [0, 1)
    double normal();

private:
    std::uint64_t m_state;
};

// The standard-normal deviate of probability `p` in (0, 1) (Acklam's rational approximation,
// relative error below 1.2e-9).
double normal_quantile(double p);

struct RobustnessOptions {
    int samples = 400;
    unsigned long long seed = 0x5eed2026ULL;
    double tie_confidence = 0.9;  // a candidate the pick beats in fewer scenarios than this is tied with it
};

// The configurations the analysis re-ranks: of `sorted` (the planner's feasible configurations,
// best first), the first of each GPU type, and the first of each further acquisition of a GPU
// type, at most `limit` of those.
std::vector<Candidate> robustness_pool(const std::vector<const Candidate*>& sorted, std::size_t limit = 24);

// Bands, robustness, sensitivity and tornado of `plan`'s pick. `pool` as robustness_pool gives
// it; `plan.ranked` and `plan.winner` as the planner left them. Not computed (computed = false)
// without a winner.
RoleUncertainty analyse_uncertainty(const RolePlan& plan, const Workload& workload, const Catalog& catalog,
                                    const EfficiencyTable& efficiency, Objective objective,
                                    const std::vector<Candidate>& pool, const RobustnessOptions& options = {});

}  // namespace gpusel
