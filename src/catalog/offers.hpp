#pragma once
// Internal to the catalog loader: the offer lists of a format-2 file and the conversion of
// format-1 price blocks (docs/catalog.md).

#include <optional>
#include <string>
#include <string_view>

#include "catalog/catalog.hpp"
#include "io/yaml.hpp"

namespace gpusel {

// A format-1 entry's price: and cloud: blocks, as read.
struct LegacyPrices {
    std::string gpu;
    std::optional<double> new_usd;
    std::optional<double> used_usd;
    std::optional<double> server_share_usd;  // per GPU
    std::string price_as_of;
    std::optional<double> on_demand_usd_per_hour;  // per GPU-hour
    std::optional<double> spot_usd_per_hour;
    std::optional<double> reserved_1y_usd_per_hour;
    std::string cloud_provider;
    std::string cloud_as_of;
    bool any() const {
        return new_usd || used_usd || on_demand_usd_per_hour || spot_usd_per_hour || reserved_1y_usd_per_hour;
    }
};

// An offer id as the loader accepts it: letters, digits, '-', '_', '.' and '/', at most
// max_offer_id_length bytes. Importers check what they write with it.
inline constexpr std::size_t max_offer_id_length = 96;
bool valid_offer_id(std::string_view id);

// Reads `key` as YYYY-MM into `into`; a diagnostic otherwise.
void read_year_month(MapReader& reader, std::string_view key, std::string& into);

// Reads providers:, hosts:, purchase: and rental: of `top` into `catalog` (merged by id, field by
// field; references to GPUs, providers and hosts checked with positions).
void read_offer_lists(MapReader& top, Catalog& catalog);

// Offers of one GPU from a format-1 entry, priced as estimates (ids <gpu>/legacy-new, -used,
// -cloud).
void add_legacy_offers(Catalog& catalog, const LegacyPrices& legacy);

}  // namespace gpusel
