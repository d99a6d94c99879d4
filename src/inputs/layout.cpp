#include "inputs/layout.hpp"

#include <fmt/format.h>

namespace gpusel {

std::string describe(const Layout& layout) {
    std::string text =
        fmt::format("tp{} pp{} dp{}", layout.tensor_parallel, layout.pipeline_parallel, layout.data_parallel);
    if (layout.expert_parallel > 1) {
        text += fmt::format(" ep{}", layout.expert_parallel);
    }
    if (layout.context_parallel > 1) {
        text += fmt::format(" cp{}", layout.context_parallel);
    }
    if (layout.sharding != Sharding::none) {
        text += fmt::format(" {}", to_string(layout.sharding));
    }
    if (layout.offload != Offload::none) {
        text += fmt::format(" offload:{}", to_string(layout.offload));
    }
    return text;
}

std::optional<Layout> layout_as_written(const Workload& workload, int count) {
    Layout layout;
    if (count < 1) {
        return std::nullopt;
    }
    if (!workload.is_training()) {
        layout.tensor_parallel = count;
        return layout;
    }
    const TrainingSpec& training = workload.training;
    layout.tensor_parallel = training.tensor_parallel > 0 ? training.tensor_parallel : 1;
    layout.pipeline_parallel = training.pipeline_parallel > 0 ? training.pipeline_parallel : 1;
    const int model_parallel = layout.tensor_parallel * layout.pipeline_parallel;
    if (count % model_parallel != 0) {
        return std::nullopt;
    }
    layout.data_parallel = count / model_parallel;
    layout.sharding = training.sharding;
    layout.offload = training.offload;
    layout.context_parallel = training.context_parallel;
    return layout;
}

}  // namespace gpusel
