// SkyPilot vms.csv → format-2 rental offers (catalog/skypilot_import.hpp). The rules and the
// data bugs they work around are in docs/catalog.md, "Importing a SkyPilot catalog"; the mapping
// tables (clouds, accelerator names, known counts, GCP machine types) in data/skypilot.yaml.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "catalog/offers.hpp"
#include "catalog/skypilot_import.hpp"
#include "io/csv_reader.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_skypilot_yaml();
}

namespace gpusel {

namespace {

// A per-GPU price outside these bounds is a unit slip or a sentinel, not a rate anyone bills
// (docs/reference/offers.md §6.2: the cheapest real GPU-hour is a few cents, the dearest about $20).
constexpr double min_usd_per_gpu_hour = 0.01;
// Most zone prices one region's spot lists: a cloud region has a handful of availability zones
// (AWS us-east-1: six, plus Local Zones); a file with more is not a price list to copy out.
constexpr std::size_t max_listed_zones = 32;
constexpr double max_usd_per_gpu_hour = 100.0;
// fetch_gcp.py's TPU_V6E_MAX_PRICE: written "so failover goes to regions with precise pricing".
constexpr double placeholder_usd = 700.0;
constexpr double memory_tolerance = 0.10;
constexpr double regional_outlier_ratio = 2.0;
// More GPUs in one instance than any system sold (GB200 NVL72 is 72): a corrupt cell.
constexpr double max_gpus_per_instance = 1024;

// The mapping tables live in data/skypilot.yaml (SkyPilot's clouds with gpusel's tier and id,
// accelerator names to catalog ids by cloud and instance family, known GPU counts, GCP machine
// types), each entry with its source and date; parse_skypilot_mappings reads them.

// Every entry says where it comes from and when that was checked.
void read_provenance(MapReader& entry) {
    entry.require("source");
    entry.require("as_of");
    std::string source;
    if (entry.text("source", source) && source.empty()) {
        entry.error("source", "the source must not be empty");
    }
    std::string as_of;
    read_year_month(entry, "as_of", as_of);
}

template <typename Read>
void read_entries(MapReader& top, std::string_view key, Read read) {
    top.require(key);
    const YamlNode* list = top.node(key);
    if (list == nullptr) {
        return;
    }
    if (list->kind != YamlNode::Kind::sequence) {
        top.error(key, fmt::format("expected a list, got {}", kind_name(list->kind)));
        return;
    }
    for (std::size_t i = 0; i < list->items.size(); ++i) {
        MapReader entry(list->items[i], fmt::format("{}[{}]", key, i), top.diagnostics());
        read(entry);
        read_provenance(entry);
        entry.finish();
    }
}

SkypilotGpuRule read_gpu_rule(MapReader& entry) {
    SkypilotGpuRule rule;
    entry.require("accelerator");
    entry.text("accelerator", rule.accelerator);
    entry.text("cloud", rule.cloud);
    entry.text("prefix", rule.prefix);
    entry.text("contains", rule.contains);
    int outcomes = 0;
    for (const auto& [key, kind] : {std::pair<std::string_view, SkypilotRuleKind>{"gpu", SkypilotRuleKind::gpu},
                                    {"no_entry", SkypilotRuleKind::no_entry},
                                    {"ambiguous", SkypilotRuleKind::ambiguous}}) {
        if (entry.has(key)) {
            ++outcomes;
            rule.kind = kind;
            entry.text(key, rule.gpu_or_reason);
        }
    }
    if (outcomes != 1) {
        entry.error(outcomes == 0 ? "gpu" : "ambiguous", "give one of gpu, no_entry and ambiguous");
    }
    return rule;
}

void read_mapping_lists(MapReader& top, SkypilotMappings& mappings) {
    read_entries(top, "providers", [&](MapReader& entry) {
        SkypilotProvider provider;
        entry.require("cloud");
        entry.require("name");
        entry.require("tier");
        entry.text("cloud", provider.cloud);
        provider.id = provider.cloud;
        if (entry.text("id", provider.id) && !valid_provider_id(provider.id)) {
            entry.error(
                "id", fmt::format("'{}' is not a provider id; write lower-case letters, digits and '-'", provider.id));
        }
        entry.text("name", provider.name);
        entry.choice("tier", provider.tier, tier_names);
        mappings.providers.push_back(std::move(provider));
    });
    read_entries(top, "gpus", [&](MapReader& entry) { mappings.gpu_rules.push_back(read_gpu_rule(entry)); });
    read_entries(top, "known_counts", [&](MapReader& entry) {
        SkypilotKnownCount known;
        entry.require("cloud");
        entry.require("instance_type");
        entry.require("gpus");
        entry.text("cloud", known.cloud);
        entry.text("instance_type", known.instance_type);
        entry.integer("gpus", known.gpus, 1, 1024);
        mappings.known_counts.push_back(std::move(known));
    });
    read_entries(top, "gcp_machines", [&](MapReader& entry) {
        SkypilotGcpMachine machine;
        entry.require("accelerator");
        entry.require("gpus");
        entry.require("machine_type");
        entry.text("accelerator", machine.accelerator);
        entry.integer("gpus", machine.gpus, 1, 1024);
        entry.text("machine_type", machine.machine_type);
        mappings.gcp_machines.push_back(std::move(machine));
    });
    read_entries(top, "gcp_attachable", [&](MapReader& entry) {
        std::string accelerator;
        entry.require("accelerator");
        entry.text("accelerator", accelerator);
        mappings.gcp_attachable.push_back(std::move(accelerator));
    });
}

bool starts_with_ignore_case(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && equals_ignore_case(text.substr(0, prefix.size()), prefix);
}

bool contains_ignore_case(std::string_view text, std::string_view part) {
    return to_lower(text).find(to_lower(part)) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Reading the file.

enum Col : std::size_t {
    col_instance_type,
    col_accelerator_name,
    col_accelerator_count,
    col_price,
    col_spot_price,
    col_region,
    col_zone,
    col_gpu_info,
    col_count
};
constexpr std::string_view column_names[col_count] = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price",
                                                      "SpotPrice",    "Region",          "AvailabilityZone", "GpuInfo"};
constexpr std::size_t required_columns = col_region + 1;
// Columns of v7/v8 files gpusel does not need; named so that a typo in a required one is told
// apart from a column it skips.
constexpr std::string_view ignored_columns[] = {"vCPUs", "MemoryGiB", "Arch", "Generation", "HostingType"};

struct Cell {
    std::string text;
    Position position;
};

struct Row {
    int line = 0;
    Cell cells[col_count];
    std::optional<double> count;
    std::optional<double> price;
    std::optional<double> spot;

    const std::string& text(Col column) const { return cells[column].text; }
    Position at(Col column) const { return cells[column].position; }
};

// The first byte that is not UTF-8, as a diagnostic: names and regions are copied into YAML,
// which must be valid UTF-8.
void check_utf8(std::string_view text, const std::string& file_name) {
    int line = 1;
    int column = 1;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = utf8_character_length(text, at);
        if (length == 0) {
            throw InputError(Diagnostic{file_name, Position{line, column}, "",
                                        fmt::format("invalid UTF-8 (byte \\x{:02X}); SkyPilot catalogs are UTF-8",
                                                    static_cast<unsigned char>(text[at]))});
        }
        if (text[at] == '\n') {
            ++line;
            column = 1;
        } else {
            column += static_cast<int>(length);
        }
        at += length;
    }
}

std::string quote_cell(std::string_view text) {
    constexpr std::size_t limit = 40;
    return text.size() <= limit ? fmt::format("'{}'", text) : fmt::format("'{}…'", text.substr(0, limit));
}

std::optional<double> read_number(const Cell& cell, std::string_view column, std::string_view expected,
                                  Diagnostics& diagnostics) {
    if (cell.text.empty()) {
        return std::nullopt;
    }
    const ParsedNumber parsed = parse_quantity(cell.text, UnitKind::plain);
    if (!parsed.value) {
        const bool negative = cell.text.front() == '-';
        diagnostics.error(cell.position, std::string(column),
                          fmt::format("{} is {}; expected {}", quote_cell(cell.text),
                                      negative ? "negative" : "not a number", expected));
        return std::nullopt;
    }
    return parsed.value;
}

// The data rows of a vms.csv, one at a time: the reader keeps the header's column indexes and
// one record, never the file's rows.
class RowReader {
public:
    // Reads and checks the header. Throws InputError for an empty file, a missing or duplicate
    // column, malformed quoting.
    RowReader(std::string_view text, const std::string& file_name)
        : m_records(text, file_name), m_diagnostics(file_name) {
        CsvRecord header;
        if (!m_records.next(header)) {
            throw InputError(Diagnostic{file_name, Position{1, 1}, "",
                                        "empty file; expected a SkyPilot vms.csv with a header line"});
        }
        read_header(header);
        m_diagnostics.throw_if_any();
        m_width = header.fields.size();
    }

    // The next data row of the header's width into `row`; false at the end. A row of another
    // width or with a number that is not one is recorded in diagnostics() and passed over.
    bool next(Row& row) {
        while (m_records.next(m_record)) {
            ++m_rows;
            if (read_row(row)) {
                return true;
            }
        }
        return false;
    }

    std::size_t rows() const { return m_rows; }
    Diagnostics& diagnostics() { return m_diagnostics; }

private:
    void read_header(const CsvRecord& header) {
        std::vector<std::string> header_names;
        for (std::size_t i = 0; i < header.fields.size(); ++i) {
            const CsvField& field = header.fields[i];
            header_names.push_back(field.text);
            for (std::size_t c = 0; c < col_count; ++c) {
                // Case-insensitive: the README spells it GPUInfo, the files GpuInfo.
                if (equals_ignore_case(field.text, column_names[c])) {
                    if (m_index[c]) {
                        m_diagnostics.error(field.position, std::string(column_names[c]),
                                            fmt::format("duplicate column (also column {})", *m_index[c] + 1));
                    } else {
                        m_index[c] = i;
                    }
                }
            }
        }
        std::vector<std::string> known_names(std::begin(column_names), std::end(column_names));
        known_names.insert(known_names.end(), std::begin(ignored_columns), std::end(ignored_columns));
        for (std::size_t c = 0; c < required_columns; ++c) {
            if (!m_index[c]) {
                // A header cell that is a near miss of the column is the likely culprit.
                std::string near;
                for (const std::string& name : header_names) {
                    const bool known = std::any_of(known_names.begin(), known_names.end(),
                                                   [&](const std::string& k) { return equals_ignore_case(k, name); });
                    if (!known && edit_distance(name, column_names[c]) <= 2) {
                        near = name;
                    }
                }
                m_diagnostics.error(Position{header.line, 1}, std::string(column_names[c]),
                                    near.empty() ? std::string("missing required column")
                                                 : fmt::format("missing required column; is '{}' meant?", near));
            }
        }
    }

    bool read_row(Row& row) {
        const CsvRecord& record = m_record;
        if (record.fields.size() != m_width) {
            const Position position = record.fields.size() > m_width ? record.fields[m_width].position
                                                                     : Position{record.line, record.end_column};
            m_diagnostics.error(
                position, "",
                fmt::format("row has {} fields; the header has {}{}", record.fields.size(), m_width,
                            record.fields.size() > m_width ? " (a field with a comma must be quoted)" : ""));
            return false;
        }
        row.line = record.line;
        for (std::size_t c = 0; c < col_count; ++c) {
            if (m_index[c]) {
                const CsvField& field = record.fields[*m_index[c]];
                row.cells[c].text.assign(field.text);  // keeps the cell's capacity from row to row
                row.cells[c].position = field.position;
            } else {
                row.cells[c].text.clear();
                row.cells[c].position = record.fields.front().position;
            }
        }
        row.count = read_number(row.cells[col_accelerator_count], "AcceleratorCount",
                                "a GPU count such as 8 or 0.125, or an empty cell", m_diagnostics);
        row.price = read_number(row.cells[col_price], "Price", "USD per instance-hour such as 3.912, or an empty cell",
                                m_diagnostics);
        row.spot = read_number(row.cells[col_spot_price], "SpotPrice",
                               "USD per instance-hour such as 1.4134, or an empty cell", m_diagnostics);
        return true;
    }

    CsvRecordReader m_records;
    CsvRecord m_record;
    Diagnostics m_diagnostics;
    std::optional<std::size_t> m_index[col_count];
    std::size_t m_width = 0;
    std::size_t m_rows = 0;
};

// GpuInfo's per-GPU memory: `'MemoryInfo': {'SizeInMiB': N}` of the first GPU. The total
// (TotalGpuMemoryInMiB) is not used: Lambda writes one GPU's size there.
std::optional<double> gpu_info_mib(std::string_view gpu_info) {
    constexpr std::string_view key = "'SizeInMiB':";
    const std::size_t at = gpu_info.find(key);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::size_t from = at + key.size();
    while (from < gpu_info.size() && gpu_info[from] == ' ') {
        ++from;
    }
    std::size_t to = from;
    while (to < gpu_info.size() && ((gpu_info[to] >= '0' && gpu_info[to] <= '9') || gpu_info[to] == '.')) {
        ++to;
    }
    const ParsedNumber parsed = parse_quantity(gpu_info.substr(from, to - from), UnitKind::plain);
    return parsed.value;
}

// Round a sum of two prices to the 8 decimals SkyPilot's figures fit in, so that 0.73948 +
// 2.93391 is written 3.67339 and not 3.6733900000000004.
double round_price(double usd) {
    return std::round(usd * 1e8) / 1e8;
}

std::string number_text(double value) {
    return fmt::format("{}", value);
}

std::string count_text(double count) {
    return number_text(count);
}

// ---------------------------------------------------------------------------------------------
// YAML output.

// A double-quoted YAML scalar: every string the file names is written this way unless it is
// plainly an identifier, so that no name can become a number, a boolean or YAML syntax.
std::string yaml_quoted(std::string_view text) {
    std::string quoted = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            quoted.push_back('\\');
            quoted.push_back(c);
        } else if (byte < 0x20 || byte == 0x7F) {
            quoted += fmt::format("\\x{:02X}", byte);
        } else {
            quoted.push_back(c);
        }
    }
    return quoted + "\"";
}

std::string yaml_scalar(std::string_view text) {
    static const std::set<std::string> reserved = {"y",  "yes", "n",    "no",  "true", "false",
                                                   "on", "off", "null", "nan", "inf"};
    const bool plain = !text.empty() &&
                       ((text.front() >= 'a' && text.front() <= 'z') || (text.front() >= 'A' && text.front() <= 'Z')) &&
                       std::all_of(text.begin(), text.end(),
                                   [](char c) {
                                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/';
                                   }) &&
                       reserved.count(to_lower(text)) == 0;
    return plain ? std::string(text) : yaml_quoted(text);
}

// ---------------------------------------------------------------------------------------------
// Building offers.

struct RegionAccumulator {
    std::string region;
    std::optional<double> on_demand_low;  // over the zone rows that have one
    std::optional<double> on_demand_high;
    std::vector<double> spot_usd;  // every usable zone's, in file order (one number per row read)
    int zones = 0;
    int spot_zones = 0;
    int spot_not_below = 0;                         // zones whose spot was at or above on-demand
    std::vector<std::string> spot_not_below_names;  // the first max_listed_names of them
};

struct OfferAccumulator {
    ImportedOffer offer;
    std::string accelerator;  // the SkyPilot name, for conflicts
    std::string gcp_host;     // the machine type summed in, GCP only
    std::vector<RegionAccumulator> regions;
    // Region -> position in `regions`: a linear search made 10^5 regions of one instance type
    // take minutes.
    std::unordered_map<std::string, std::size_t> region_index;
};

// Names listed in one note or warning; the rest are counted. A note is one YAML value, and the
// loader refuses a value over 64 KiB.
constexpr std::size_t max_listed_names = 50;

// "a, b, c" of the first max_listed_names names, then "and N more".
std::string name_list(const std::vector<std::string>& names, std::size_t total) {
    const std::size_t shown = std::min(names.size(), max_listed_names);
    std::string text =
        fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
    if (total > shown) {
        text += fmt::format(" and {} more", total - shown);
    }
    return text;
}

// Values (YAML nodes) the loader counts for an offer's fixed fields: the mapping, ten keys and
// their values, and the one sources item. Each price line adds at least three (the mapping,
// `region` and its value). Used to refuse an output the loader would refuse, while reading.
constexpr std::size_t nodes_per_offer = 22;
constexpr std::size_t nodes_per_price_line = 3;

// "a4-highgpu-8g B200 × 8: the a4-highgpu-8g row (line 7) has price '0.0'"
std::string describe(const SkippedRow& row) {
    std::string text = row.instance_type.empty() ? row.accelerator : row.instance_type + " " + row.accelerator;
    return row.detail.empty() ? text : text + ": " + row.detail;
}

// The prices of a GCP host row, kept to be added to its accelerator rows.
struct GcpHost {
    std::optional<double> price;
    std::optional<double> spot;
    int line = 0;
    std::string price_text;  // the cell, for the message when the price is empty or 0
};

// One hash key for (machine type, region, zone): lengths first, so that no cell's text can be
// mistaken for a separator.
std::string gcp_host_key(const std::string& machine_type, const std::string& region, const std::string& zone) {
    return fmt::format("{}:{}{}:{}{}", machine_type.size(), machine_type, region.size(), region, zone);
}

bool matches_any(const std::vector<std::string>& patterns, std::string_view text) {
    return patterns.empty() || std::any_of(patterns.begin(), patterns.end(),
                                           [&](const std::string& pattern) { return region_matches(pattern, text); });
}

class Importer {
public:
    Importer(const std::string& file_name, const SkypilotImportOptions& options, const Catalog& catalog)
        : m_file(file_name),
          m_options(options),
          m_catalog(catalog),
          m_provider(cloud_provider(options.provider)),
          m_cloud(options.cloud.empty() ? options.provider : options.cloud),
          m_gcp(m_cloud == "gcp"),
          m_source(yaml_quoted(source_line())) {}

    SkypilotImportResult run(std::string_view text) {
        if (!m_options.schema_version.empty() && m_options.schema_version != "v7" && m_options.schema_version != "v8") {
            throw InputError(
                Diagnostic{m_file,
                           {},
                           "",
                           fmt::format("SkyPilot catalog schema {} is not supported; gpusel imports schemas v7 and v8 "
                                       "(~/.sky/catalogs/v8/<cloud>/vms.csv); older schemas lack columns",
                                       m_options.schema_version)});
        }
        check_utf8(text, m_file);
        if (m_gcp) {
            index_gcp_hosts(text);
        }
        RowReader reader(text, m_file);
        Row row;
        while (reader.next(row)) {
            // Once the file is known to be malformed nothing is imported; the rest is only checked,
            // so that every problem is reported.
            if (reader.diagnostics().empty()) {
                import_row(row);
            }
        }
        m_result.rows = reader.rows();
        reader.diagnostics().throw_if_any();
        if (!m_provider.known) {
            warn(0, "",
                 fmt::format("provider '{}' is not in gpusel's tier table; written as tier "
                             "neocloud with its id as name: edit the providers entry if wrong",
                             m_provider.id));
        }
        for (OfferAccumulator& accumulator : m_offers) {
            finish(accumulator);
            m_result.offers.push_back(std::move(accumulator.offer));
        }
        m_offers.clear();
        m_result.unknown_accelerators.assign(m_unknown.begin(), m_unknown.end());
        if (m_result.offers.empty()) {
            throw_no_offers();
        }
        m_result.yaml = render();
        // The running count is a lower bound (a price line may hold two prices more, notes are
        // added at the end); the exact one gives the same advice before the loader is asked.
        if (rendered_nodes() > max_nodes || m_result.yaml.size() > max_input_bytes) {
            throw_too_large({}, rendered_nodes() > max_nodes, "");
        }
        check_loads(m_result.yaml);
        return m_result;
    }

private:
    void skip(const Row& row, Position position, std::string column, std::string instance_type, std::string reason,
              std::string detail) {
        SkippedRow skipped{position,          std::move(column), std::move(instance_type), accelerator_text(row),
                           std::move(reason), std::move(detail)};
        ++m_result.skipped_rows;
        auto group = std::find_if(m_result.skip_groups.begin(), m_result.skip_groups.end(),
                                  [&](const SkipGroup& g) { return g.reason == skipped.reason; });
        if (group == m_result.skip_groups.end()) {
            m_result.skip_groups.push_back(SkipGroup{skipped.reason, 0, {}});
            group = std::prev(m_result.skip_groups.end());
        }
        ++group->rows;
        if (group->examples.size() < max_skip_examples) {
            group->examples.push_back(skipped);
        }
        if (m_result.skipped.size() < max_kept_skipped_rows) {
            m_result.skipped.push_back(std::move(skipped));
        }
    }

    static std::string accelerator_text(const Row& row) {
        if (row.text(col_accelerator_name).empty()) {
            return "";
        }
        return row.count ? fmt::format("{} × {}", row.text(col_accelerator_name), count_text(*row.count))
                         : row.text(col_accelerator_name);
    }

    void warn(int line, const std::string& offer_id, std::string message) {
        if (m_result.warnings.size() >= max_kept_warnings) {
            ++m_result.warnings_not_kept;
            return;
        }
        m_result.warnings.push_back(ImportWarning{line, offer_id, std::move(message)});
    }

    // First pass over a GCP file: the host rows an accelerator row may be joined with. Only the
    // machine types of the tables are kept, since only they are looked up.
    void index_gcp_hosts(std::string_view text) {
        std::unordered_set<std::string> machine_types;
        for (const SkypilotGcpMachine& machine : builtin_skypilot_mappings().gcp_machines) {
            machine_types.insert(machine.machine_type);
        }
        RowReader reader(text, m_file);  // its diagnostics are the second pass's to report
        Row row;
        while (reader.next(row)) {
            if (!row.text(col_accelerator_name).empty() || machine_types.count(row.text(col_instance_type)) == 0) {
                continue;
            }
            const bool usable_price = row.price && *row.price != 0;
            m_gcp_hosts.try_emplace(
                gcp_host_key(row.text(col_instance_type), row.text(col_region), row.text(col_zone)),
                GcpHost{row.price, row.spot, row.line, usable_price ? std::string() : row.text(col_price)});
        }
    }

    // The gpusel id for this row, or a skip. Returns "" when skipped.
    std::string map_gpu(const Row& row, const std::string& instance_type) {
        const std::string& name = row.text(col_accelerator_name);
        const Position at = row.at(col_accelerator_name);
        bool name_known = false;
        for (const SkypilotGpuRule& rule : builtin_skypilot_mappings().gpu_rules) {
            if (!equals_ignore_case(rule.accelerator, name)) {
                continue;
            }
            name_known = true;
            if ((!rule.cloud.empty() && rule.cloud != m_cloud) ||
                !starts_with_ignore_case(instance_type, rule.prefix) ||
                (!rule.contains.empty() && !contains_ignore_case(instance_type, rule.contains))) {
                continue;
            }
            switch (rule.kind) {
                case SkypilotRuleKind::gpu:
                    return std::string(rule.gpu_or_reason);
                case SkypilotRuleKind::no_entry:
                    skip(row, at, "AcceleratorName", instance_type, "accelerator without a catalog entry",
                         std::string(rule.gpu_or_reason));
                    return "";
                case SkypilotRuleKind::ambiguous:
                    skip(row, at, "AcceleratorName", instance_type, "ambiguous accelerator (not guessed)",
                         std::string(rule.gpu_or_reason));
                    return "";
            }
        }
        if (!name_known && m_catalog.find(name) != nullptr) {
            return m_catalog.find(name)->id;
        }
        std::string listed = name_known ? fmt::format("{} on {} {}", name, m_cloud, instance_type) : name;
        if (m_unknown.size() < max_listed_unknown_accelerators) {
            m_unknown.insert(std::move(listed));
        } else if (m_unknown.count(listed) == 0) {
            m_result.more_unknown_accelerators = true;
        }
        skip(row, at, "AcceleratorName", instance_type, "unknown accelerator name (not guessed)",
             name_known ? fmt::format("no rule for this name on {} {}", m_cloud, instance_type) : "");
        return "";
    }

    // The row's whole GPU count, or nullopt when the count or the price rules the row out.
    std::optional<int> usable_gpu_count(const Row& row) {
        if (!row.count || *row.count <= 0) {
            skip(row, row.at(col_accelerator_count), "AcceleratorCount", row.text(col_instance_type),
                 "accelerator count empty or 0", "");
            return std::nullopt;
        }
        if (*row.count != std::floor(*row.count) || *row.count > max_gpus_per_instance) {
            skip(row, row.at(col_accelerator_count), "AcceleratorCount", row.text(col_instance_type),
                 *row.count > max_gpus_per_instance ? "implausible GPU count"
                                                    : "fractional GPU count (whole units only)",
                 "");
            return std::nullopt;
        }
        if (row.price && *row.price == 0) {
            skip(row, row.at(col_price), "Price", row.text(col_instance_type),
                 "price 0 (not a price; an unknown price is an empty cell)", "");
            return std::nullopt;
        }
        if (row.price && *row.price == placeholder_usd) {
            skip(row, row.at(col_price), "Price", row.text(col_instance_type), "placeholder price 700.0 (not a price)",
                 "");
            return std::nullopt;
        }
        return static_cast<int>(*row.count);
    }

    // The row's instance type; for a GCP accelerator row (no instance type) the machine type its
    // accelerator and count come as. Empty when there is none (the row is skipped).
    std::string instance_type_of(const Row& row, const std::string& name, int gpus) {
        std::string instance_type = row.text(col_instance_type);
        if (!instance_type.empty()) {
            return instance_type;
        }
        if (!m_gcp) {
            skip(row, row.at(col_instance_type), "InstanceType", "", "no instance type", "");
            return "";
        }
        instance_type = gcp_machine_type(name, gpus);
        if (instance_type.empty()) {
            const std::vector<std::string>& attachable_names = builtin_skypilot_mappings().gcp_attachable;
            const bool attachable = std::any_of(attachable_names.begin(), attachable_names.end(),
                                                [&](std::string_view a) { return equals_ignore_case(a, name); });
            skip(row, row.at(col_accelerator_count), "AcceleratorCount", "",
                 attachable ? "GCP N1-attachable GPU (no one machine type; not imported)"
                            : "no GCP machine type for this accelerator and count",
                 "");
        }
        return instance_type;
    }

    // False (the row is skipped) when the instance type cannot be part of an offer id: the
    // catalog loader would refuse the file.
    bool instance_type_makes_an_id(const Row& row, const std::string& instance_type) {
        const std::string id = m_provider.id + "/" + instance_type;
        if (valid_offer_id(id)) {
            return true;
        }
        const bool too_long = id.size() > max_offer_id_length;
        skip(row, row.at(col_instance_type), "InstanceType", "", "instance type not usable in an offer id",
             too_long ? fmt::format("{} is {} characters, over the {} of an offer id", quote_cell(printable_text(id)),
                                    id.size(), max_offer_id_length)
                      : fmt::format("{} has a character other than letters, digits, '-', '_', '.' and '/'",
                                    quote_cell(printable_text(instance_type))));
        return false;
    }

    // False (the row is skipped) when a known instance type has another GPU count than the row.
    bool count_agrees_with_instance(const Row& row, const std::string& instance_type, int gpus) {
        for (const SkypilotKnownCount& known : builtin_skypilot_mappings().known_counts) {
            if (known.cloud == m_cloud && equals_ignore_case(known.instance_type, instance_type) &&
                known.gpus != gpus) {
                skip(row, row.at(col_accelerator_count), "AcceleratorCount", instance_type,
                     "GPU count disagrees with the instance type",
                     fmt::format("the instance type has {} GPUs", known.gpus));
                return false;
            }
        }
        return true;
    }

    // A row's prices per hour for the whole instance, with the host's added for a GCP
    // accelerator row.
    struct RowPrices {
        std::optional<double> on_demand;
        std::optional<double> spot;
        bool gcp_host = false;
        bool spot_not_below = false;  // a spot price at or above on-demand was dropped
    };

    // Adds the GCP host row's prices to an accelerator row's; false (the row is skipped) when the
    // host row is missing or has no price.
    bool add_gcp_host(const Row& row, const std::string& instance_type, RowPrices& prices) {
        const auto found = m_gcp_hosts.find(gcp_host_key(instance_type, row.text(col_region), row.text(col_zone)));
        if (found == m_gcp_hosts.end()) {
            skip(row, row.at(col_region), "Region", instance_type, "no GCP host row for the machine type and zone",
                 fmt::format("no {} row in {} {}", instance_type, row.text(col_region), row.text(col_zone)));
            return false;
        }
        const GcpHost& host = found->second;
        prices.gcp_host = true;
        if (!host.price || *host.price == 0) {
            skip(row, row.at(col_price), "Price", instance_type, "GCP host price 0.0 or empty (unknown)",
                 fmt::format("the {} row (line {}) has price '{}'", instance_type, host.line, host.price_text));
            return false;
        }
        // The accelerator row's own spot at or above its own on-demand is the data bug
        // (docs/reference/offers.md §2.4, A100-80GB); the host's share would hide it in the sum.
        std::optional<double>& spot = prices.spot;
        if (spot && prices.on_demand && *spot >= *prices.on_demand) {
            prices.spot_not_below = true;
            spot.reset();
        }
        if (prices.on_demand) {
            prices.on_demand = round_price(*prices.on_demand + *host.price);
        }
        spot =
            spot && host.spot && *host.spot > 0 ? std::optional<double>(round_price(*spot + *host.spot)) : std::nullopt;
        return true;
    }

    // The row's zone joins its offer's region: its on-demand price and a spot price that is usable
    // and below on-demand.
    void add_zone(const Row& row, OfferAccumulator& accumulator, RowPrices prices, int gpus) {
        std::optional<double>& spot = prices.spot;
        const std::optional<double>& on_demand = prices.on_demand;
        if (spot && (*spot == 0 || *spot == placeholder_usd || *spot / gpus < min_usd_per_gpu_hour ||
                     *spot / gpus > max_usd_per_gpu_hour)) {
            warn(row.line, accumulator.offer.id,
                 fmt::format("{} {}: spot {} is not a usable price (0, the 700.0 placeholder or outside "
                             "$0.01..$100 per GPU-hour); dropped",
                             row.text(col_region), zone_name(row), row.text(col_spot_price)));
            spot.reset();
        }
        RegionAccumulator& region = region_for(row, accumulator);
        ++region.zones;
        if (on_demand) {
            region.on_demand_low = region.on_demand_low ? std::min(*region.on_demand_low, *on_demand) : *on_demand;
            region.on_demand_high = region.on_demand_high ? std::max(*region.on_demand_high, *on_demand) : *on_demand;
        }
        if (spot && on_demand && *spot >= *on_demand) {
            prices.spot_not_below = true;
            spot.reset();
        }
        if (prices.spot_not_below) {
            ++region.spot_not_below;
            if (region.spot_not_below_names.size() < max_listed_names) {
                region.spot_not_below_names.push_back(zone_name(row));
            }
        }
        if (spot) {
            ++region.spot_zones;
            region.spot_usd.push_back(*spot);
            // A second zone and on turn the spot price into a list: one more number each, counted
            // as read (the first is the price a one-zone region writes, counted as on-demand is:
            // at the end). Past max_listed_zones the list is not written (the median alone is), so
            // nothing more is counted.
            if (region.spot_usd.size() >= 2 && region.spot_usd.size() <= max_listed_zones) {
                count_output(row, 1, number_text(*spot).size() + 2);
            }
        }
    }

    void import_row(const Row& row) {
        const std::string& name = row.text(col_accelerator_name);
        if (name.empty()) {
            return;  // a CPU instance, or a GCP host row (joined below)
        }
        if (!matches_any(m_options.regions, row.text(col_region)) ||
            (!row.text(col_instance_type).empty() &&
             !matches_any(m_options.instance_types, row.text(col_instance_type)))) {
            ++m_result.unselected_gpu_rows;
            return;
        }
        ++m_result.gpu_rows;
        const std::optional<int> count = usable_gpu_count(row);
        if (!count) {
            return;
        }
        const int gpus = *count;
        const std::string instance_type = instance_type_of(row, name, gpus);
        if (instance_type.empty()) {
            return;
        }
        if (row.text(col_instance_type).empty() && !matches_any(m_options.instance_types, instance_type)) {
            --m_result.gpu_rows;  // a GCP accelerator row, matched by its machine type
            ++m_result.unselected_gpu_rows;
            return;
        }
        if (!instance_type_makes_an_id(row, instance_type)) {
            return;
        }
        const std::string mapped = map_gpu(row, instance_type);
        if (mapped.empty()) {
            return;
        }
        const GpuSpec* spec = m_catalog.find(mapped);
        if (spec == nullptr) {
            skip(row, row.at(col_accelerator_name), "AcceleratorName", instance_type, "GPU not in the catalog",
                 "maps to " + mapped);
            return;
        }
        if (!count_agrees_with_instance(row, instance_type, gpus)) {
            return;
        }
        RowPrices prices;
        prices.on_demand = row.price;
        prices.spot = row.spot;
        if (row.text(col_instance_type).empty() && !add_gcp_host(row, instance_type, prices)) {  // GCP accelerator row
            return;
        }
        const std::optional<double>& on_demand = prices.on_demand;
        if (on_demand && (*on_demand / gpus < min_usd_per_gpu_hour || *on_demand / gpus > max_usd_per_gpu_hour)) {
            skip(row, row.at(col_price), "Price", instance_type, "per-GPU price outside $0.01..$100 per hour",
                 fmt::format("{}/h is {}/GPU-h", number_text(*on_demand), number_text(*on_demand / gpus)));
            return;
        }
        OfferAccumulator* accumulator = offer_for(row, instance_type, spec->id, gpus, prices.gcp_host);
        if (accumulator == nullptr) {
            return;
        }
        add_zone(row, *accumulator, prices, gpus);
    }

    std::string zone_name(const Row& row) const {
        return row.text(col_zone).empty() ? row.text(col_region) : row.text(col_zone);
    }

    static std::string gcp_machine_type(std::string_view accelerator, int gpus) {
        for (const SkypilotGcpMachine& machine : builtin_skypilot_mappings().gcp_machines) {
            if (equals_ignore_case(machine.accelerator, accelerator) && machine.gpus == gpus) {
                return std::string(machine.machine_type);
            }
        }
        return "";
    }

    OfferAccumulator* offer_for(const Row& row, const std::string& instance_type, const std::string& gpu, int gpus,
                                bool gcp_host) {
        const auto found = m_offer_index.find(instance_type);
        if (found != m_offer_index.end()) {
            OfferAccumulator& existing = m_offers[found->second];
            if (!equals_ignore_case(existing.accelerator, row.text(col_accelerator_name)) ||
                existing.offer.gpus != gpus) {
                skip(row, row.at(col_accelerator_name), "AcceleratorName", instance_type,
                     "conflicting accelerator for the instance type",
                     fmt::format("line {} says {} × {}", existing.offer.line, existing.accelerator,
                                 existing.offer.gpus));
                return nullptr;
            }
            return &existing;
        }
        OfferAccumulator accumulator;
        accumulator.accelerator = row.text(col_accelerator_name);
        accumulator.gcp_host = gcp_host ? instance_type : "";
        ImportedOffer& offer = accumulator.offer;
        offer.id = m_provider.id + "/" + instance_type;
        offer.instance_type = instance_type;
        offer.gpu = gpu;
        offer.gpus = gpus;
        offer.line = row.line;
        check_memory(row, accumulator);
        m_offer_index.emplace(instance_type, m_offers.size());
        m_offers.push_back(std::move(accumulator));
        count_output(row, nodes_per_offer,
                     offer_head(m_offers.back().offer, false).size() + std::string_view("    prices:\n").size());
        return &m_offers.back();
    }

    // Adds what a new offer or price line will at least write to the running count, and refuses
    // the import at the row that takes it past what the catalog loader reads: the output is
    // never built only to be refused (10^6 instance types were 2.4 GB of memory and a 397 MB file).
    void count_output(const Row& row, std::size_t nodes, std::size_t bytes) {
        m_output_nodes += nodes;
        m_output_bytes += bytes;
        if (m_output_nodes > max_nodes || m_output_bytes > max_input_bytes) {
            throw_too_large(Position{row.line, 1}, m_output_nodes > max_nodes, " by this row");
        }
    }

    [[noreturn]] void throw_too_large(Position position, bool too_many_values, std::string_view when) const {
        const std::size_t offers = m_offers.empty() ? m_result.offers.size() : m_offers.size();
        throw InputError(Diagnostic{
            m_file, position, "",
            fmt::format("the imported catalog would {} ({} offer{} and {} regional price{}{}); import part of the "
                        "file with --regions GLOB,... or --instance-types GLOB,..., or split it; nothing written",
                        too_many_values
                            ? fmt::format("hold more than the {} values a catalog file may", max_nodes)
                            : fmt::format("be larger than the {} MiB a catalog file may be", max_input_bytes >> 20),
                        offers, offers == 1 ? "" : "s", m_price_lines, m_price_lines == 1 ? "" : "s", when)});
    }

    // The values (YAML nodes) the loader will count in the rendered output: 18 for the header
    // (format, as_of, the provider), then per offer its fixed fields, notes, and price lines of
    // 3 to 7 values.
    std::size_t rendered_nodes() const {
        std::size_t nodes = 18;
        for (const ImportedOffer& offer : m_result.offers) {
            nodes += nodes_per_offer + (offer.notes.empty() ? 0 : 2);
            for (const ImportedPrice& price : offer.prices) {
                nodes += nodes_per_price_line + (price.on_demand_usd_per_hour ? 2 : 0) +
                         (price.spot_usd_per_hour ? 2 : 0) +
                         (price.spot_zones_usd.size() >= 2 ? price.spot_zones_usd.size() + 2 : 0);
            }
        }
        return nodes;
    }

    void check_memory(const Row& row, OfferAccumulator& accumulator) {
        const std::optional<double> mib = gpu_info_mib(row.text(col_gpu_info));
        const GpuSpec* spec = m_catalog.find(accumulator.offer.gpu);
        if (!mib || spec == nullptr || spec->memory_bytes <= 0) {
            return;
        }
        const double spec_gib = spec->memory_bytes / bytes_per_gib;
        const auto close = [&](double gib) { return std::abs(gib - spec_gib) <= memory_tolerance * spec_gib; };
        // RunPod writes GB into the MiB field (80 for an 80 GB card): read it as GiB.
        if (close(*mib / 1024.0) || (m_cloud == "runpod" && close(*mib))) {
            return;
        }
        const std::string message = fmt::format(
            "GpuInfo gives {} MiB ({:.1f} GiB) per GPU, the catalog's {} has {:.0f} GiB; the catalog "
            "spec is used",
            number_text(*mib), *mib / 1024.0, spec->id, spec_gib);
        warn(row.line, accumulator.offer.id, message);
        accumulator.offer.notes.push_back(message);
    }

    RegionAccumulator& region_for(const Row& row, OfferAccumulator& accumulator) {
        const std::string& region = row.text(col_region);
        const auto [found, inserted] = accumulator.region_index.try_emplace(region, accumulator.regions.size());
        if (inserted) {
            ++m_price_lines;
            // Counted as written before regions of one price are merged (a lower bound only
            // when they are not): at most one bound for both cases.
            count_output(row, nodes_per_price_line, price_line(ImportedPrice{region, {}, {}, 0, 0, {}}).size());
            accumulator.regions.push_back(RegionAccumulator{region, {}, {}, {}, 0, 0, 0, {}});
        }
        return accumulator.regions[found->second];
    }

    void finish(OfferAccumulator& accumulator) {
        ImportedOffer& offer = accumulator.offer;
        const bool marketplace = m_provider.tier == ProviderTier::marketplace;
        std::vector<std::string> notes;
        if (!accumulator.gcp_host.empty()) {
            notes.push_back(
                fmt::format("on-demand and spot are the {} host row plus the {} × {} accelerator row "
                            "(SkyPilot lists them apart)",
                            accumulator.gcp_host, offer.gpus, accumulator.accelerator));
        }
        for (RegionAccumulator& region : accumulator.regions) {
            ImportedPrice price;
            price.region = region.region;
            price.zones = region.zones;
            price.spot_zones = region.spot_zones;
            if (!region.spot_usd.empty()) {
                std::sort(region.spot_usd.begin(), region.spot_usd.end());
                price.spot_usd_per_hour = median_of(region.spot_usd);
                if (region.spot_usd.size() > max_listed_zones) {
                    warn(0, offer.id,
                         fmt::format("{}: spot in {} zones, more than a region has: their median {} is written, "
                                     "not the list",
                                     region.region, region.spot_usd.size(), number_text(*price.spot_usd_per_hour)));
                } else if (region.spot_usd.size() >= 2) {
                    price.spot_zones_usd = std::move(region.spot_usd);
                }
            }
            if (region.on_demand_low) {
                price.on_demand_usd_per_hour = region.on_demand_low;
                if (*region.on_demand_low != *region.on_demand_high && !marketplace) {
                    warn(
                        0, offer.id,
                        fmt::format("{}: on-demand differs between zones ({} to {}); the lowest is kept", region.region,
                                    number_text(*region.on_demand_low), number_text(*region.on_demand_high)));
                }
            }
            if (region.spot_not_below > 0) {
                warn(0, offer.id,
                     fmt::format(
                         "{}: spot at or above on-demand in {} of {} zone{} ({}); spot dropped there", region.region,
                         region.spot_not_below, region.zones, region.zones == 1 ? "" : "s",
                         name_list(region.spot_not_below_names, static_cast<std::size_t>(region.spot_not_below))));
            }
            offer.prices.push_back(price);
        }
        accumulator.regions.clear();
        accumulator.region_index.clear();
        offer.reservation_only = std::none_of(offer.prices.begin(), offer.prices.end(), [](const ImportedPrice& p) {
            return p.on_demand_usd_per_hour.has_value();
        });
        if (offer.reservation_only) {
            notes.push_back("no on-demand price in the file: reservations or capacity blocks only");
        }
        std::vector<const ImportedPrice*> priced;
        for (const ImportedPrice& price : offer.prices) {
            if (price.on_demand_usd_per_hour) {
                priced.push_back(&price);
            }
        }
        if (priced.size() >= 2) {
            const auto [low, high] = std::minmax_element(
                priced.begin(), priced.end(),
                [](const auto* a, const auto* b) { return *a->on_demand_usd_per_hour < *b->on_demand_usd_per_hour; });
            if (*(*high)->on_demand_usd_per_hour > regional_outlier_ratio * *(*low)->on_demand_usd_per_hour) {
                warn(0, offer.id,
                     fmt::format("on-demand differs more than {:g}× between regions ({} in {}, {} in {}); check "
                                 "before relying on it",
                                 regional_outlier_ratio, number_text(*(*low)->on_demand_usd_per_hour), (*low)->region,
                                 number_text(*(*high)->on_demand_usd_per_hour), (*high)->region));
            }
        }
        const bool any_spot = std::any_of(offer.prices.begin(), offer.prices.end(),
                                          [](const ImportedPrice& p) { return p.spot_usd_per_hour.has_value(); });
        const bool one_price = offer.prices.size() >= 2 && priced.size() == offer.prices.size() &&
                               std::all_of(offer.prices.begin(), offer.prices.end(), [&](const ImportedPrice& p) {
                                   return *p.on_demand_usd_per_hour == *offer.prices.front().on_demand_usd_per_hour;
                               });
        if (one_price && !any_spot) {
            std::vector<std::string> names;
            int zones = 0;
            for (const ImportedPrice& price : offer.prices) {
                if (names.size() < max_listed_names) {
                    names.push_back(price.region);
                }
                zones += price.zones;
            }
            notes.push_back(fmt::format("the same on-demand price in {} regions, written as region any: {}",
                                        offer.prices.size(), name_list(names, offer.prices.size())));
            ImportedPrice any;
            any.region = "any";
            any.on_demand_usd_per_hour = offer.prices.front().on_demand_usd_per_hour;
            any.zones = zones;
            offer.prices = {any};
        }
        if (any_spot) {
            std::vector<std::string> counts;
            std::size_t spot_regions = 0;
            for (const ImportedPrice& price : offer.prices) {
                if (price.spot_usd_per_hour) {
                    if (++spot_regions <= max_listed_names) {
                        counts.push_back(fmt::format("{} {} of {} zone{}", price.region, price.spot_zones, price.zones,
                                                     price.zones == 1 ? "" : "s"));
                    }
                }
            }
            notes.push_back(fmt::format("spot is every availability zone's price (ranked on their median): {}",
                                        name_list(counts, spot_regions)));
        }
        if (marketplace) {
            notes.push_back("marketplace prices move hourly: re-import before deciding");
        }
        notes.insert(notes.end(), offer.notes.begin(), offer.notes.end());  // memory checks last
        offer.notes = std::move(notes);
    }

    [[noreturn]] void throw_no_offers() const {
        std::vector<Diagnostic> diagnostics;
        for (const SkippedRow& row : m_result.skipped) {
            diagnostics.push_back(Diagnostic{m_file, row.position, row.column,
                                             fmt::format("row skipped: {}: {}", row.reason, describe(row))});
        }
        if (m_result.skipped_rows > max_reported_diagnostics) {
            diagnostics.resize(max_reported_diagnostics);
            diagnostics.push_back(Diagnostic{
                m_file,
                {},
                "",
                fmt::format("{} more skipped rows not shown", m_result.skipped_rows - max_reported_diagnostics)});
        }
        std::string last =
            m_result.gpu_rows == 0
                ? fmt::format("no offer imported: none of the {} rows names an accelerator", m_result.rows)
            : m_result.gpu_rows == 1
                ? std::string("no offer imported: the one GPU row was skipped; nothing written")
                : fmt::format("no offer imported: all {} GPU rows were skipped; nothing written", m_result.gpu_rows);
        if (m_result.gpu_rows == 0 && m_result.unselected_gpu_rows > 0) {
            last = fmt::format(
                "no offer imported: none of the {} GPU rows is selected by --regions/--instance-types; nothing written",
                m_result.unselected_gpu_rows);
        }
        diagnostics.push_back(Diagnostic{m_file, {}, "", std::move(last)});
        throw InputError(std::move(diagnostics));
    }

    // The output read back as `--catalog` will read it, on top of the catalog the import mapped
    // against. The checks above keep every known cause out; this is the guarantee that a
    // cause nobody thought of yet gives an error here rather than a file gpusel refuses later.
    void check_loads(const std::string& yaml) const {
        Catalog copy = m_catalog;
        try {
            merge_catalog_text(copy, yaml, "the imported catalog");
        } catch (const InputError& error) {
            std::vector<Diagnostic> diagnostics;
            for (const Diagnostic& problem : error.diagnostics()) {
                diagnostics.push_back(
                    Diagnostic{m_file,
                               {},
                               "",
                               "the imported catalog would not load (nothing written): " + format_diagnostic(problem)});
            }
            throw InputError(std::move(diagnostics));
        }
    }

    std::string source_line() const {
        const std::string cloud = m_options.cloud.empty() ? m_options.provider : m_options.cloud;
        std::string line = fmt::format("skypilot-catalog {}{}/vms.csv imported {} from {}",
                                       m_options.schema_version.empty() ? "" : m_options.schema_version + "/", cloud,
                                       m_options.imported_on, m_options.source_path);
        if (!m_options.md5.empty()) {
            line += ", md5 " + m_options.md5;
        }
        return line;
    }

    // An offer's lines from `- id:` to `sources:` (and `notes:` when asked): what it writes
    // before its prices.
    std::string offer_head(const ImportedOffer& offer, bool with_notes) const {
        std::string out;
        out += fmt::format("  - id: {}\n", yaml_scalar(offer.id));
        out += fmt::format("    provider: {}\n", yaml_scalar(m_provider.id));
        out += fmt::format("    instance_type: {}\n", yaml_scalar(offer.instance_type));
        out += fmt::format("    gpu: {}\n", yaml_scalar(offer.gpu));
        out += fmt::format("    gpus: {}\n", offer.gpus);
        out += fmt::format("    availability: {}\n", offer.reservation_only ? "reservation_only" : "on_demand");
        out += "    price_kind: list\n";
        out += fmt::format("    as_of: {}\n", m_options.as_of);
        out += fmt::format("    sources: [{}]\n", m_source);
        if (with_notes && !offer.notes.empty()) {
            out += fmt::format("    notes: {}\n", yaml_quoted(fmt::format("{}", fmt::join(offer.notes, "; "))));
        }
        return out;
    }

    static std::string price_line(const ImportedPrice& price) {
        std::string line = fmt::format("region: {}", yaml_scalar(price.region));
        if (price.on_demand_usd_per_hour) {
            line += ", on_demand: " + number_text(*price.on_demand_usd_per_hour);
        }
        if (price.spot_zones_usd.size() >= 2) {
            std::vector<std::string> zones;
            zones.reserve(price.spot_zones_usd.size());
            for (const double usd : price.spot_zones_usd) {
                zones.push_back(number_text(usd));
            }
            line += fmt::format(", spot: {{zones: [{}]}}", fmt::join(zones, ", "));
        } else if (price.spot_usd_per_hour) {
            line += ", spot: " + number_text(*price.spot_usd_per_hour);
        }
        return "      - {" + line + "}\n";
    }

    std::string render() const {
        std::string out;
        out += "# Rental offers imported by `gpusel catalog import skypilot` from\n";
        out += "# " + printable_text(m_options.source_path) + "\n";
        out += "# Prices are USD per instance-hour, on-demand and spot only: SkyPilot files carry no\n";
        out += "# commitments. Load with --catalog FILE; import again to refresh (edits here are replaced).\n";
        out += "format: 2\n";
        out += fmt::format("as_of: {}\n", m_options.as_of);
        out += "providers:\n";
        out += fmt::format("  - {{id: {}, name: {}, kind: cloud, tier: {}}}\n", yaml_scalar(m_provider.id),
                           yaml_quoted(m_provider.name), to_string(m_provider.tier));
        out += "rental:\n";
        for (const ImportedOffer& offer : m_result.offers) {
            out += offer_head(offer, true);
            out += "    prices:\n";
            for (const ImportedPrice& price : offer.prices) {
                out += price_line(price);
            }
        }
        return out;
    }

    const std::string& m_file;
    const SkypilotImportOptions& m_options;
    const Catalog& m_catalog;
    CloudProvider m_provider;
    std::string m_cloud;  // the SkyPilot cloud whose conventions the file follows
    bool m_gcp = false;
    std::string m_source;                                  // the sources item, quoted
    std::unordered_map<std::string, GcpHost> m_gcp_hosts;  // by gcp_host_key
    std::vector<OfferAccumulator> m_offers;
    std::unordered_map<std::string, std::size_t> m_offer_index;
    std::set<std::string> m_unknown;  // sorted, unique, at most max_listed_unknown_accelerators
    std::size_t m_price_lines = 0;
    std::size_t m_output_nodes = 0;  // what the offers so far will at least write
    std::size_t m_output_bytes = 0;
    SkypilotImportResult m_result;
};

}  // namespace

SkypilotMappings parse_skypilot_mappings(std::string_view text, const std::string& file_name) {
    const YamlNode root = parse_yaml_text(text, file_name);
    Diagnostics diagnostics(file_name);
    MapReader top(root, "", diagnostics);
    top.require("format");
    top.format_version();
    SkypilotMappings mappings;
    read_mapping_lists(top, mappings);
    top.finish();
    diagnostics.throw_if_any();
    return mappings;
}

const SkypilotMappings& builtin_skypilot_mappings() {
    static const SkypilotMappings mappings =
        parse_skypilot_mappings(embedded::builtin_skypilot_yaml(), "data/skypilot.yaml");
    return mappings;
}

CloudProvider cloud_provider(std::string_view id) {
    for (const SkypilotProvider& entry : builtin_skypilot_mappings().providers) {
        if (entry.id == id || entry.cloud == id) {
            return CloudProvider{entry.id, entry.name, entry.tier, true};
        }
    }
    return CloudProvider{std::string(id), std::string(id), ProviderTier::neocloud, false};
}

bool valid_provider_id(std::string_view id) {
    return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

SkypilotPath skypilot_path_parts(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t slash = path.find('/', start);
        const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
        if (end > start) {
            parts.push_back(path.substr(start, end - start));
        }
        if (slash == std::string_view::npos) {
            break;
        }
        start = slash + 1;
    }
    if (parts.size() < 3 || parts.back() != "vms.csv") {
        return {};
    }
    const std::string_view version = parts[parts.size() - 3];
    const bool is_version =
        version.size() >= 2 && version[0] == 'v' &&
        std::all_of(version.begin() + 1, version.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!is_version) {
        return {};
    }
    return SkypilotPath{std::string(version), std::string(parts[parts.size() - 2])};
}

SkypilotImportResult import_skypilot_csv(std::string_view csv_text, const std::string& file_name,
                                         const SkypilotImportOptions& options, const Catalog& catalog) {
    return Importer(file_name, options, catalog).run(csv_text);
}

std::string skypilot_import_summary(const SkypilotImportResult& result, const std::string& file_name,
                                    const std::string& output_name) {
    std::string out = fmt::format(
        "gpusel: imported {} offer{} from {} rows of {} ({} GPU rows{}) into {}\n", result.offers.size(),
        result.offers.size() == 1 ? "" : "s", result.rows, file_name, result.gpu_rows,
        result.unselected_gpu_rows == 0
            ? std::string()
            : fmt::format("; {} more not selected by --regions/--instance-types", result.unselected_gpu_rows),
        output_name);
    if (result.skipped_rows > 0) {
        out += fmt::format("gpusel: skipped {} GPU row{}:\n", result.skipped_rows, result.skipped_rows == 1 ? "" : "s");
        // Groups in order of first appearance, each with its first few rows as examples.
        for (const SkipGroup& group : result.skip_groups) {
            std::vector<std::string> shown;
            for (const SkippedRow& row : group.examples) {
                shown.push_back(printable_text(fmt::format("line {} {}", row.position.line, describe(row))));
            }
            out += fmt::format("  {}: {} row{} ({}{})\n", group.reason, group.rows, group.rows == 1 ? "" : "s",
                               fmt::join(shown, "; "), group.rows > group.examples.size() ? "; …" : "");
        }
    }
    if (!result.unknown_accelerators.empty()) {
        out += printable_text(
            fmt::format("gpusel: unknown accelerator names (not guessed; add the GPU to a --catalog file or map "
                        "it by hand): {}{}",
                        fmt::join(result.unknown_accelerators, ", "), result.more_unknown_accelerators ? ", …" : ""));
        out += "\n";
    }
    return out;
}

}  // namespace gpusel
