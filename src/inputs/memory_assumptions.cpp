// Loads data/memory.yaml: the memory model's decision constants, each with its source and date.

#include "inputs/memory_assumptions.hpp"

#include <fmt/format.h>

#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_memory_yaml();
}

namespace gpusel {

MemoryAssumptions parse_memory_assumptions_text(std::string_view text, const std::string& file_name) {
    const YamlNode root = parse_yaml_text(text, file_name);
    Diagnostics diagnostics(file_name);
    MapReader top(root, "", diagnostics);
    MemoryAssumptions assumptions;
    top.require("format");
    top.format_version();
    read_dated_section(top, "allocator_reserve", [&](MapReader& section) {
        DatedSources& sources = assumptions.sources;
        const bool nominal = read_dated_number(section, "nominal_fraction", UnitKind::fraction, 0, 1,
                                               assumptions.allocator_reserve_fraction, sources);
        const bool low = read_dated_number(section, "low_fraction", UnitKind::fraction, 0, 1,
                                           assumptions.allocator_reserve_fraction_low, sources);
        const bool high = read_dated_number(section, "high_fraction", UnitKind::fraction, 0, 1,
                                            assumptions.allocator_reserve_fraction_high, sources);
        if (nominal && low && high &&
            !(assumptions.allocator_reserve_fraction_low <= assumptions.allocator_reserve_fraction &&
              assumptions.allocator_reserve_fraction <= assumptions.allocator_reserve_fraction_high)) {
            dated_value_error(
                section, "nominal_fraction",
                "the band must hold the nominal value: low_fraction <= nominal_fraction <= high_fraction");
        }
    });
    top.finish();
    diagnostics.throw_if_any();
    return assumptions;
}

const MemoryAssumptions& builtin_memory_assumptions() {
    static const MemoryAssumptions assumptions =
        parse_memory_assumptions_text(embedded::builtin_memory_yaml(), "data/memory.yaml");
    return assumptions;
}

}  // namespace gpusel
