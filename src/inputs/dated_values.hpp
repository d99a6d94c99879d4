#pragma once
// Entries of the data files that hold a model's decision constants (data/cost.yaml,
// data/memory.yaml): `key: {value: NUMBER, source: TEXT, as_of: YYYY-MM}`, the unit in the key's
// name. A value that no document gives has a source beginning "estimate: " and its reason.

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/units.hpp"

namespace gpusel {

class MapReader;

// Where one value comes from and the month it was read there.
struct DatedSource {
    std::string source;
    std::string as_of;  // YYYY-MM
    bool estimate() const { return source.rfind("estimate:", 0) == 0; }
};
// By "section.key", e.g. "warranty.edge_months".
using DatedSources = std::map<std::string, DatedSource, std::less<>>;

// Reads the required entry `key` of `section` into `into` (a number of `unit` in [min, max], or
// (min, max] when `min_exclusive`) and
// its source into `sources`. Every problem is a diagnostic at its position (a missing or unknown
// field, an empty source, "estimate:" without a reason, a malformed month); returns whether the
// entry was valid. `into` is untouched otherwise.
bool read_dated_number(MapReader& section, std::string_view key, UnitKind unit, double min, double max, double& into,
                       DatedSources& sources, bool min_exclusive = false);
// The same for a whole number in [min, max].
bool read_dated_integer(MapReader& section, std::string_view key, int min, int max, int& into, DatedSources& sources);
// Reads the required mapping `name` of `top` with `read(MapReader& section)`, then reports the
// section's unknown keys.
void read_dated_section(MapReader& top, std::string_view name, const std::function<void(MapReader&)>& read);

// Records `message` at the `value` of entry `key` (a rule between entries: "must be after ...").
void dated_value_error(MapReader& section, std::string_view key, std::string message);

}  // namespace gpusel
