#pragma once
// The words of a serving role's mixed fleet (plan/mix.hpp), shared by the terminal and Markdown
// renderers (private to src/report/).

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace gpusel::plan_text {

// `plan.mix`'s headline ("input ≤ 1,024 tokens → L4, longer → H100-SXM5: $X against $Y for
// 4× H100-SXM5 alone (−Z %); chosen|not chosen — why"), then one line per part (GPUs, replicas,
// share of requests and their rate, TCO). Without parts: "none: why". Empty without a mix.
std::vector<std::string> mix_lines(const RolePlan& plan);

}  // namespace gpusel::plan_text
