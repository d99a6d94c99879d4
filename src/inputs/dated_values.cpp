// Reads the `{value, source, as_of}` entries of data/cost.yaml and data/memory.yaml.

#include "inputs/dated_values.hpp"

#include <utility>

#include <fmt/format.h>

#include "io/yaml.hpp"

namespace gpusel {

namespace {

bool is_year_month(std::string_view text) {
    if (text.size() != 7 || text[4] != '-') {
        return false;
    }
    for (const std::size_t i : {0U, 1U, 2U, 3U, 5U, 6U}) {
        if (text[i] < '0' || text[i] > '9') {
            return false;
        }
    }
    const int month = (text[5] - '0') * 10 + (text[6] - '0');
    return month >= 1 && month <= 12;
}

// The source and month of the entry; records them under "section.key" when both are valid.
bool read_dated_source(MapReader& entry, const std::string& path, DatedSources& sources) {
    DatedSource dated;
    bool ok = entry.text("source", dated.source);
    if (ok && dated.source.find_first_not_of(" \t") == std::string::npos) {
        entry.error("source",
                    "a source is required (a document and the row the value comes from, or "
                    "\"estimate: \" and why)");
        ok = false;
    } else if (ok && dated.estimate() && dated.source.find_first_not_of(" \t", 9) == std::string::npos) {
        entry.error("source", "an estimate says why: \"estimate: <reason>\"");
        ok = false;
    }
    if (entry.text("as_of", dated.as_of)) {
        if (!is_year_month(dated.as_of)) {
            entry.error("as_of", fmt::format("'{}' is not a month; write YYYY-MM, e.g. 2026-11", dated.as_of));
            ok = false;
        }
    } else {
        ok = false;
    }
    if (ok) {
        sources[path] = std::move(dated);
    }
    return ok;
}

// Reads the required entry `key` of `section`: value (by `read_value`), source and as_of.
template <typename ReadValue>
bool read_entry(MapReader& section, std::string_view key, DatedSources& sources, ReadValue&& read_value) {
    section.require(key);
    const YamlNode* node = section.node(key);
    if (node == nullptr) {
        return false;
    }
    const std::string path = section.child_path(key);
    MapReader entry(*node, path, section.diagnostics());
    entry.require("value");
    entry.require("source");
    entry.require("as_of");
    const bool value_ok = read_value(entry);
    const bool source_ok = read_dated_source(entry, path, sources);
    entry.finish();
    return value_ok && source_ok;
}

}  // namespace

void read_dated_section(MapReader& top, std::string_view name, const std::function<void(MapReader&)>& read) {
    top.require(name);
    if (const YamlNode* node = top.node(name)) {
        MapReader section(*node, std::string(name), top.diagnostics());
        read(section);
        section.finish();
    }
}

bool read_dated_number(MapReader& section, std::string_view key, UnitKind unit, double min, double max, double& into,
                       DatedSources& sources, bool min_exclusive) {
    double value = 0;
    const bool ok = read_entry(section, key, sources, [&](MapReader& entry) {
        return entry.number("value", value, unit, min, max, min_exclusive);
    });
    if (ok) {
        into = value;
    }
    return ok;
}

bool read_dated_integer(MapReader& section, std::string_view key, int min, int max, int& into, DatedSources& sources) {
    int value = 0;
    const bool ok =
        read_entry(section, key, sources, [&](MapReader& entry) { return entry.integer("value", value, min, max); });
    if (ok) {
        into = value;
    }
    return ok;
}

void dated_value_error(MapReader& section, std::string_view key, std::string message) {
    const YamlNode* entry = section.node(key);
    const YamlNode* value = entry != nullptr ? entry->find("value") : nullptr;
    if (value == nullptr) {
        section.error(key, std::move(message));
        return;
    }
    section.diagnostics().error(value->position, section.child_path(key) + ".value", std::move(message));
}

}  // namespace gpusel
