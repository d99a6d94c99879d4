// The `memory` renderers on hand-built estimates.

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

#include "report/memory_render.hpp"

namespace {

gpusel::MemoryResult one_candidate() {
    gpusel::MemoryResult result;
    result.workload.name = "tiny";
    result.workload.kind = gpusel::WorkloadKind::training;
    result.count = 1;
    gpusel::MemoryEstimate estimate;
    estimate.per_gpu.weights_bytes = 2e9;
    estimate.per_gpu.total_bytes = 6e9;
    estimate.per_gpu.total_low_bytes = 5e9;
    estimate.per_gpu.total_high_bytes = 7e9;
    estimate.capacity_bytes = 24e9;
    estimate.fits = true;
    estimate.headroom_bytes = 18e9;
    estimate.headroom_fraction = 0.1;
    estimate.max_micro_batch = 8;
    estimate.micro_batch = 2;
    result.candidates.push_back({"L4", gpusel::Layout{}, estimate});
    return result;
}

}  // namespace

TEST_CASE("render::memory overview: one row per candidate", "[render][memory]") {
    std::ostringstream out;
    gpusel::render_memory_overview(one_candidate(), out, gpusel::MemoryStyle{true});
    CHECK(out.str() ==
          "tiny · training · micro-batch 2 · 1 GPU per candidate (tp1 pp1 dp1) · GB = 1e9 bytes\n"
          "\n"
          "gpu    memory  estimate       band  fits         headroom  max micro-batch\n"
          "L4   24.00 GB   6.00 GB  5.00–7.00  yes   18.00 GB (75 %)                8\n");
}

TEST_CASE("render::memory json: a value not computed is null with a note, not 0", "[render][memory][json]") {
    gpusel::MemoryResult result = one_candidate();
    result.candidates.front().estimate.per_gpu.total_bytes = std::numeric_limits<double>::infinity();
    std::ostringstream out;
    gpusel::render_memory_json(result, out);
    CHECK_THAT(out.str(), Catch::Matchers::Contains("\"total_bytes\": null,"));
    CHECK_THAT(out.str(), Catch::Matchers::Contains("\"weights_bytes\": 2000000000,"));
    CHECK_THAT(out.str(),
               Catch::Matchers::Contains(
                   "\"per_gpu.total_bytes: the computed value is not a finite number (inf); written as null\""));
}
