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
    // GPUs of data_parallel that split each sequence (within it, like expert_parallel): the
    // workload's training.context_parallel, copied here for tables and JSON.
    int context_parallel = 1;
    Sharding sharding = Sharding::none;
    Offload offload = Offload::none;

    int gpu_count() const { return tensor_parallel * pipeline_parallel * data_parallel; }
};

// "tp2 pp1 dp4 zero1" ("tp8 pp8 dp16 cp2 zero1" under context parallelism), for tables.
std::string describe(const Layout& layout);

// The layout of `count` GPUs as the workload writes it, with no memory check (what `memory`
// evaluates): training runs data parallel with the workload's sharding and offload, keeping the
// tensor/pipeline-parallel degree the workload fixes (auto = 1); inference splits one replica
// over all the GPUs by tensor parallelism. Contrast `fitting_layout` (perf/perf.hpp), which
// shards only as far as memory needs and replicates. nullopt when `count` is below 1 or not a
// multiple of the fixed tensor × pipeline degree.
std::optional<Layout> layout_as_written(const Workload& workload, int count);

}  // namespace gpusel
