#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "inputs/memory_assumptions.hpp"
#include "support/test_support.hpp"

using gpusel::test::input_errors;

namespace {
std::string memory_file(const std::string& low, const std::string& extra) {
    return "format: 1\n"
           "allocator_reserve:\n"
           "  nominal_fraction: {value: 0.10, source: a, as_of: 2026-11}\n"
           "  low_fraction: {value: " +
           low +
           ", source: b, as_of: 2026-11}\n"
           "  high_fraction: {value: 0.15, source: c, as_of: 2026-11}\n" +
           extra;
}
}  // namespace

TEST_CASE("memory assumptions: the built-in data/memory.yaml holds the documented allocator reserve", "[memory]") {
    const gpusel::MemoryAssumptions& memory = gpusel::builtin_memory_assumptions();
    CHECK(&memory == &gpusel::builtin_memory_assumptions());  // parsed once
    // docs/memory-model.md, "Overhead": 10 % of allocated, band 5–15 % (docs/reference/formulas.md).
    CHECK(memory.allocator_reserve_fraction == 0.10);
    CHECK(memory.allocator_reserve_fraction_low == 0.05);
    CHECK(memory.allocator_reserve_fraction_high == 0.15);
    REQUIRE(memory.sources.size() == 3);
    for (const auto& [key, dated] : memory.sources) {
        INFO(key);
        CHECK_FALSE(dated.source.empty());
        CHECK(dated.as_of.size() == 7);
    }
}

TEST_CASE("memory assumptions: a malformed memory file gives every problem at file:line:col", "[memory]") {
    CHECK_NOTHROW(gpusel::parse_memory_assumptions_text(memory_file("0.05", ""), "m.yaml"));
    CHECK(
        input_errors([] { gpusel::parse_memory_assumptions_text(memory_file("0.2", "nccl: 4\n"), "m.yaml"); }) ==
        std::vector<std::string>{
            "m.yaml:3:29: allocator_reserve.nominal_fraction.value: the band must hold the nominal value: low_fraction "
            "<= nominal_fraction <= high_fraction",
            "m.yaml:6:1: nccl: unknown field 'nccl'; known fields: format, allocator_reserve"});
    CHECK(input_errors([] {
              gpusel::parse_memory_assumptions_text("format: 1\nallocator_reserve:\n  nominal_fraction: {value: 0.1}\n",
                                                    "m.yaml");
          }) ==
          std::vector<std::string>{"m.yaml:3:3: allocator_reserve.low_fraction: missing required field",
                                   "m.yaml:3:3: allocator_reserve.high_fraction: missing required field",
                                   "m.yaml:3:21: allocator_reserve.nominal_fraction.source: missing required field",
                                   "m.yaml:3:21: allocator_reserve.nominal_fraction.as_of: missing required field"});
}
