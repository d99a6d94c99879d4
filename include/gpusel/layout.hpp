#pragma once
// How a job is spread over GPUs.

#include <string>

#include "gpusel/workload.hpp"

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

}  // namespace gpusel
