#pragma once
// Importing a SkyPilot catalog file (`~/.sky/catalogs/v8/<cloud>/vms.csv`) as rental offers of a
// format-2 user catalog (docs/catalog.md, "Importing a SkyPilot catalog").
//
// Contract:
//  - Pure: CSV text in, YAML text and a report out. The caller reads the file, settles the
//    provider, the schema version and the dates, and writes the output (whole or nothing).
//  - Columns are read by header name, never by position: each cloud orders them differently.
//    Required: InstanceType, AcceleratorName, AcceleratorCount, Price, SpotPrice, Region.
//    AvailabilityZone and GpuInfo are used when present; other columns are ignored.
//  - Malformed input (bad quoting, a missing required column, a row of another width than the
//    header, a cell that is not a number where one is needed) throws InputError listing every
//    problem as `file:line:col: Column: message`. A schema version other than v7 or v8 is
//    refused the same way (older schemas lack columns).
//  - A well-formed row that cannot become an offer is skipped with a reason (fractional GPU,
//    price 0, the 700.0 placeholder, a per-GPU price outside $0.01..$100/h, an accelerator name
//    with no gpusel id for its provider and instance family, ...). Nothing is guessed: unknown
//    names are listed. No offer at all is an InputError (there is nothing to write), which
//    lists the skipped rows.
//  - Prices stay USD per instance-hour, as SkyPilot stores them. One offer per instance type,
//    one `prices` line per region: on-demand is the region's value; spot keeps every zone's
//    price (`spot: {zones: [...]}`, which ranks on their median) or, with one zone, that price
//    (over 32 zones, the median alone, with a warning); spot at or above on-demand is dropped
//    with a warning.
//  - The output is deterministic: offers and regions in file order, numbers in their shortest
//    round-trip form.
//  - The output always loads: an instance type that cannot be part of an offer id (a space, a
//    line break, a NUL, an id over 96 characters) is a skipped row, and the rendered YAML is
//    read back with the catalog loader before it is returned. An output beyond what a catalog
//    file may hold (4 MiB, 200,000 values: io/yaml.hpp) is an InputError at the row that
//    crosses the limit, found while reading, with the filters to use (--regions,
//    --instance-types). Every price line is counted there as written, before regions that share
//    one price are merged into `any`: an instance type in more than ~66,000 regions is refused.
//  - Linear time, bounded memory: rows are read one at a time and dropped (only GCP's host rows
//    of the machine types in the tables are kept, to join their accelerator rows); every lookup
//    is hashed; what the result keeps per skipped row, warning and unknown name is capped (the
//    counts are not). Peak memory is the input plus a few times the input at most (GCP's host
//    index), and far less for other clouds (docs/catalog.md, "Limits").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "catalog/catalog.hpp"
#include "catalog/offer.hpp"

namespace gpusel {

// The import's mapping tables, data/skypilot.yaml (compiled in; docs/catalog.md, "Importing a
// SkyPilot catalog", rules 7 and 9). Every entry of the file carries a `source` and an `as_of`
// month (YYYY-MM); the loader requires both and keeps neither. Names are compared
// case-insensitively, cloud names exactly.
enum class SkypilotRuleKind { gpu, no_entry, ambiguous };
struct SkypilotProvider {
    std::string cloud;  // SkyPilot's cloud folder, e.g. "do"
    std::string id;     // gpusel's provider id, e.g. "digitalocean" (the cloud's name when not given)
    std::string name;
    ProviderTier tier = ProviderTier::neocloud;  // hyperscaler, neocloud or marketplace
};
struct SkypilotGpuRule {
    std::string accelerator;  // AcceleratorName
    std::string cloud;        // "" = any
    std::string prefix;       // of the instance type; "" = any
    std::string contains;     // in the instance type; "" = anything
    SkypilotRuleKind kind = SkypilotRuleKind::gpu;
    std::string gpu_or_reason;  // a catalog id (gpu), else why the row is skipped
};
// An instance type whose GPU count the file gets wrong.
struct SkypilotKnownCount {
    std::string cloud;
    std::string instance_type;
    int gpus = 0;  // >= 1
};
// The GCP machine type that runs `gpus` accelerators of one name.
struct SkypilotGcpMachine {
    std::string accelerator;
    int gpus = 0;  // >= 1
    std::string machine_type;
};
struct SkypilotMappings {
    std::vector<SkypilotProvider> providers;
    std::vector<SkypilotGpuRule> gpu_rules;  // in file order: the first match wins
    std::vector<SkypilotKnownCount> known_counts;
    std::vector<SkypilotGcpMachine> gcp_machines;
    std::vector<std::string> gcp_attachable;  // accelerators GCP attaches to any N1 machine type
};
// Parses mapping tables in the format of data/skypilot.yaml; `file_name` names them in
// diagnostics. Throws InputError with every problem at file:line:col.
SkypilotMappings parse_skypilot_mappings(std::string_view text, const std::string& file_name);
// The built-in tables (data/skypilot.yaml), parsed once.
const SkypilotMappings& builtin_skypilot_mappings();

// A cloud as the `providers:` list names it. `id` may be SkyPilot's cloud name or gpusel's
// provider id; the result has gpusel's (cloud_provider("do").id == "digitalocean"). `known` is
// false for an id outside the tables: it gets tier neocloud and its id as name, and the import
// warns.
struct CloudProvider {
    std::string id;
    std::string name;
    ProviderTier tier = ProviderTier::neocloud;
    bool known = false;
};
CloudProvider cloud_provider(std::string_view id);

// What a path like `~/.sky/catalogs/v8/aws/vms.csv` says: schema "v8", cloud "aws". Both are
// empty when the path does not end in `<vN>/<cloud>/vms.csv`.
struct SkypilotPath {
    std::string schema_version;
    std::string cloud;
};
SkypilotPath skypilot_path_parts(std::string_view path);

// True for a provider id as catalogs spell it: lower-case letters, digits and '-'.
bool valid_provider_id(std::string_view id);

struct SkypilotImportOptions {
    std::string provider;        // provider of the offers (required): gpusel's id or SkyPilot's cloud name
    std::string schema_version;  // "v7", "v8", or "" when the path does not name it
    std::string cloud;           // the SkyPilot cloud folder ("" = provider), for the sources line
    std::string as_of;           // YYYY-MM of the prices (required)
    std::string imported_on;     // YYYY-MM-DD, for the sources line
    std::string source_path;     // the file as the user named it, for the sources line
    std::string md5;             // optional checksum of the file, for the sources line
    // Rows to import, as globs ('*', '?', case-insensitive; see region_matches). Empty = all.
    // A GCP accelerator row is matched by the machine type it is priced as.
    std::vector<std::string> regions;
    std::vector<std::string> instance_types;
};

// One price line of an offer: one region.
struct ImportedPrice {
    std::string region;  // "any" when collapsed
    std::optional<double> on_demand_usd_per_hour;
    std::optional<double> spot_usd_per_hour;  // the median over the zones that have one
    int zones = 0;                            // rows (availability zones) of this region
    int spot_zones = 0;                       // of which with a usable spot price
    std::vector<double> spot_zones_usd;       // their spot prices, ascending
};

struct ImportedOffer {
    std::string id;  // provider/instance_type
    std::string instance_type;
    std::string gpu;                // a catalog id
    int gpus = 0;                   // per instance
    bool reservation_only = false;  // no on-demand price anywhere
    std::vector<ImportedPrice> prices;
    std::vector<std::string> notes;
    int line = 0;  // first row
};

struct SkippedRow {
    Position position;   // the cell that decided it (the row start when none did)
    std::string column;  // its column name, "" for the row
    std::string instance_type;
    std::string accelerator;  // "A100 × 8"
    std::string reason;       // the group it is reported under, e.g. "fractional GPU count (whole units only)"
    std::string detail;       // what about this row, e.g. "0.125"
};

// Skipped rows of one reason: how many, and the first few.
struct SkipGroup {
    std::string reason;
    std::size_t rows = 0;
    std::vector<SkippedRow> examples;  // the first max_skip_examples
};

struct ImportWarning {
    int line = 0;  // 0 when about a whole offer
    std::string offer_id;
    std::string message;
};

// What the result keeps of a file with millions of problem rows: the counts are exact, the
// lists stop here (a 64 MiB file must not need gigabytes to report on).
inline constexpr std::size_t max_kept_skipped_rows = 100;  // = max_reported_diagnostics
inline constexpr std::size_t max_skip_examples = 3;
inline constexpr std::size_t max_kept_warnings = 1000;
inline constexpr std::size_t max_listed_unknown_accelerators = 100;

struct SkypilotImportResult {
    std::string yaml;
    std::vector<ImportedOffer> offers;
    std::size_t rows = 0;                           // data rows in the file
    std::size_t gpu_rows = 0;                       // rows naming an accelerator (GCP: accelerator rows), selected ones
    std::size_t unselected_gpu_rows = 0;            // GPU rows outside --regions / --instance-types
    std::vector<SkippedRow> skipped;                // the first max_kept_skipped_rows, file order
    std::size_t skipped_rows = 0;                   // all of them
    std::vector<SkipGroup> skip_groups;             // by reason, in order of first appearance
    std::vector<std::string> unknown_accelerators;  // sorted, unique: "Foo", or "A100 on vast 1x-A100"
    bool more_unknown_accelerators = false;         // beyond max_listed_unknown_accelerators
    std::vector<ImportWarning> warnings;            // the first max_kept_warnings
    std::size_t warnings_not_kept = 0;
};

// Imports `csv_text` (the content of `file_name`). Throws InputError as described above.
SkypilotImportResult import_skypilot_csv(std::string_view csv_text, const std::string& file_name,
                                         const SkypilotImportOptions& options, const Catalog& catalog);

// The summary `catalog import` prints to standard error: offers and rows, skipped rows grouped
// by reason (a few examples each), unknown names. One line per item, each ending in '\n'.
std::string skypilot_import_summary(const SkypilotImportResult& result, const std::string& file_name,
                                    const std::string& output_name);

}  // namespace gpusel
