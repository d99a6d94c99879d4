#pragma once
// The pruned training search against its reference (full estimators, no pruning): shared by the
// search tests (tests/unit/test_training_search.cpp) and the property tests.

#include <catch2/catch.hpp>

#include <cstddef>

#include "inputs/layout.hpp"
#include "search/training_search.hpp"

namespace gpusel::test {

// Runs both searches with `options` (its `reference` flag is set for the second) and requires
// the same space, no more evaluated points, and the same fastest point at every GPU count; for
// a rejected GPU (nothing kept) the same nearest miss, which names it. With points kept, pruning
// skips blocks that cannot beat them, and so the deadline misses in them: the miss then matters
// only if pricing rejects every kept point, and may differ.
inline void check_pruned_search_matches_reference(const Workload& workload, const GpuSpec& gpu,
                                                  const EfficiencyTable& efficiency,
                                                  TrainingSearchOptions options = {}) {
    options.reference = false;
    const TrainingSearchResult fast = search_training(workload, gpu, efficiency, options);
    options.reference = true;
    const TrainingSearchResult reference = search_training(workload, gpu, efficiency, options);
    CHECK(fast.space == reference.space);
    CHECK(reference.evaluated == reference.space);
    CHECK(fast.evaluated <= reference.evaluated);
    REQUIRE(fast.best_per_count.size() == reference.best_per_count.size());
    for (std::size_t index = 0; index < fast.best_per_count.size(); ++index) {
        const TrainingChoice& a = fast.best_per_count[index];
        const TrainingChoice& b = reference.best_per_count[index];
        INFO("count " << b.layout.gpu_count());
        CHECK(describe(a.layout) == describe(b.layout));
        CHECK(a.micro_batch == b.micro_batch);
        CHECK(a.precision.precision == b.precision.precision);
        CHECK(a.checkpointing == b.checkpointing);
        CHECK(a.samples_per_s == Approx(b.samples_per_s).epsilon(1e-9));
    }
    if (reference.best_per_count.empty()) {
        // Nothing kept from a non-empty space: the miss must name why (an empty result with no
        // miss would pass vacuously). An empty space (no precision the GPU runs) has no miss.
        CHECK((reference.space == 0) == !reference.miss.any());
        for (const auto& [nearest, fast_nearest] : {std::pair{&reference.miss.memory, &fast.miss.memory},
                                                    std::pair{&reference.miss.deadline, &fast.miss.deadline}}) {
            REQUIRE(nearest->has_value() == fast_nearest->has_value());
            if (nearest->has_value()) {
                CHECK((*fast_nearest)->needed == Approx((*nearest)->needed).epsilon(1e-9));
                CHECK((*fast_nearest)->available == Approx((*nearest)->available).epsilon(1e-9));
                CHECK((*fast_nearest)->count == (*nearest)->count);
            }
        }
    }
}

}  // namespace gpusel::test
