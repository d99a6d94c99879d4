#pragma once
// Bounds that hold a validation figure where it stands today, so that a clear regression fails
// (issue 32): the targets of docs/memory-model.md and docs/perf-model.md sit far above today's
// figures, and a model twice as wrong would still meet them. An error figure (in percent) may grow
// by 10 % of itself, or by half a percentage point where that is more (figures below 5 %, where
// one case moves the median by a few tenths); a bound never exceeds the target it replaces. Counts
// of cases are held at today's count. When a change moves a figure past its bound, the commit
// either fixes the regression or resets the bound to the new figure and says why.

#include <algorithm>

namespace gpusel::validation {

inline constexpr double held_relative_margin = 0.10;         // + 10 % of today's figure
inline constexpr double held_absolute_margin_percent = 0.5;  // at least + 0.5 percentage point

// The upper bound, in percent, of an error figure that is `today_percent` today, and no more
// than `target_percent`.
constexpr double held_bound_percent(double today_percent, double target_percent) {
    return std::min(target_percent,
                    std::max(today_percent * (1 + held_relative_margin), today_percent + held_absolute_margin_percent));
}

}  // namespace gpusel::validation
