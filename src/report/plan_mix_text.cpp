#include "report/plan_mix_text.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "report/plan_common.hpp"

namespace gpusel::plan_text {

namespace {

// "1,024", as the routing rule writes tokens.
std::string grouped_tokens(int tokens) {
    std::string digits = std::to_string(tokens);
    for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
        digits.insert(static_cast<std::size_t>(at), ",");
    }
    return digits;
}

}  // namespace

std::vector<std::string> mix_lines(const RolePlan& plan) {
    if (!plan.mix) {
        return {};
    }
    const MixPlan& mix = *plan.mix;
    if (mix.parts.empty()) {
        return {fmt::format("none: {}", mix.why)};
    }
    const std::string single = plan.winner ? plan.winner->gpu : "the pick";
    const Money money = money_of(plan.workload.deployment.currency);
    std::vector<std::string> lines;
    lines.push_back(fmt::format("{}: {} against {} for {} alone ({}{}); {} — {}", mix.routing_rule,
                                money.whole(mix.tco_usd), money.whole(mix.best_single_tco_usd), single,
                                mix.saving_fraction > 0 ? "−" : "+", format_percent(std::abs(mix.saving_fraction)),
                                mix.chosen ? "chosen" : "not chosen", mix.why));
    const double rate = plan.workload.inference.requests_per_s;
    for (std::size_t index = 0; index < mix.parts.size(); ++index) {
        const MixPart& part = mix.parts[index];
        const std::string requests =
            index + 1 < mix.parts.size()
                ? fmt::format("input ≤ {} tokens", grouped_tokens(part.max_input_tokens))
                : fmt::format("input > {} tokens", grouped_tokens(mix.parts[index - 1].max_input_tokens));
        lines.push_back(fmt::format("{}: {} GPU{}, {} replica{} for {} ({} of requests, {:.3g} req/s), {}", part.gpu,
                                    part.gpus, part.gpus == 1 ? "" : "s", part.replicas, part.replicas == 1 ? "" : "s",
                                    requests, format_percent(part.request_share), part.request_share * rate,
                                    money.whole(part.tco_usd)));
    }
    return lines;
}

}  // namespace gpusel::plan_text
