#pragma once
// How a job is spread over GPUs.

#include <optional>
#include <string>

#include "inputs/workload.hpp"

namespace gpusel {

struct Layout {
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int data_parallel = 1;
    int expert_parallel = 1;  // MoE experts spread over this many GPUs (within data parallel)
    Sharding sharding = Sharding::none;
    Offload offload = Offload::none;

    int gpu_count() const { return tensor_parallel * pipeline_parallel * data_parallel; }
};

// "tp2 pp1 dp4 zero1", for tables.
std::string describe(const Layout& layout);

// The layout of `count` GPUs for a workload when nothing else chooses one: training runs data
// parallel with the workload's sharding and offload, keeping the tensor/pipeline-parallel degree
// the workload fixes (auto = 1); inference splits one replica over the GPUs by tensor
// parallelism. nullopt when `count` is not a multiple of the fixed tensor × pipeline degree.
std::optional<Layout> default_layout(const Workload& workload, int count);

}  // namespace gpusel
