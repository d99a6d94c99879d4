#pragma once
// Offers: what can actually be bought or rented, each one unit in one place (docs/catalog.md,
// format 2). A purchase offer is priced per unit (a card, an 8-GPU server, a 72-GPU rack); a
// rental offer per instance-hour, by region. A price that no source publishes is absent, never
// zero and never a ratio of another price.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusel {

enum class OfferKind { purchase, rental };
// How much a price can be trusted, best first. `estimate`: no seller published it.
enum class PriceKind { list, msrp, quote, street, reported, estimate };
enum class ProviderKind { cloud, vendor };
enum class ProviderTier { none, hyperscaler, neocloud, marketplace };
enum class UnitForm { card, baseboard, server, rack, module };
enum class UnitCondition { new_unit, used, refurbished };
// How a rental can be had. `quota_gated`: on-demand only after a quota grant or a capacity
// request; its spot market is not one to plan on, so spot is not ranked.
enum class Availability { on_demand, reservation_only, capacity_block_only, quota_gated };
// Where a unit may run: a data centre, an office or desk (GeForce cards, by their EULA), the edge.
enum class Site { datacenter, office, edge };

// The names of the enums files spell, one table each: catalogs, offers and workloads read them.
inline constexpr std::pair<ProviderTier, std::string_view> tier_names[] = {{ProviderTier::hyperscaler, "hyperscaler"},
                                                                           {ProviderTier::neocloud, "neocloud"},
                                                                           {ProviderTier::marketplace, "marketplace"}};
inline constexpr std::pair<Site, std::string_view> site_names[] = {
    {Site::datacenter, "datacenter"}, {Site::office, "office"}, {Site::edge, "edge"}};

std::string_view to_string(OfferKind kind);             // "purchase" | "rental"
std::string_view to_string(PriceKind kind);             // "list" ... "estimate"
std::string_view to_string(ProviderKind kind);          // "cloud" | "vendor"
std::string_view to_string(ProviderTier tier);          // "" | "hyperscaler" | "neocloud" | "marketplace"
std::string_view to_string(UnitForm form);              // "card" ... "module"
std::string_view to_string(UnitCondition condition);    // "new" | "used" | "refurbished"
std::string_view to_string(Availability availability);  // "on_demand" | ... | "quota_gated"
std::string_view to_string(Site site);                  // "datacenter" | "office" | "edge"

struct Provider {
    std::string id;  // lower-case; what constraints.providers names
    std::string name;
    ProviderKind kind = ProviderKind::cloud;
    ProviderTier tier = ProviderTier::none;  // clouds only
};

// One price with its provenance.
struct PricePoint {
    double usd = 0;  // per unit (purchase) or per unit-hour (rental); > 0
    PriceKind kind = PriceKind::estimate;
    std::string as_of;  // YYYY-MM
    std::vector<std::string> sources;
    // A market price seen in several places (a spot price per availability zone of the region):
    // every price seen, ascending. `usd` is then their median, the figure that ranks; empty =
    // one price.
    std::vector<double> zones_usd;
};

// The median of `values` (the mean of the middle two when their count is even); 0 when empty.
double median_of(std::vector<double> values);

// A rental offer's prices in one region (or "any"), USD per instance-hour.
struct RegionalRates {
    std::string region;
    std::optional<PricePoint> on_demand;
    std::optional<PricePoint> spot;
    std::optional<PricePoint> reserved_1y;
    std::optional<PricePoint> reserved_3y;
    // An AWS Capacity Block for ML: per instance-hour, booked in whole days and paid up front at
    // booking (docs/catalog.md); a rate the user's catalog states (the built-in one has none).
    std::optional<PricePoint> capacity_block;
};

// A server that cards or baseboards need to run in; holds `slots` GPUs.
struct HostOffer {
    std::string id;
    std::string name;
    int slots = 1;
    PricePoint price;  // per host
    std::string notes;
    int vcpus = 0;  // host CPU threads; 0 = not published
    // What the host draws at full load besides the GPUs it holds (CPUs, memory, NICs, fans,
    // drives, conversion losses); 0 = not published (cost model: a ratio of the GPUs' power).
    double power_watts = 0;
};

struct Offer {
    std::string id;  // unique over purchase and rental offers
    OfferKind kind = OfferKind::purchase;
    std::string gpu;       // GPU id
    std::string provider;  // provider id: the vendor (purchase) or the cloud (rental)
    std::string name;      // the unit as an order line names it; rentals: the instance type
    int gpus_per_unit = 1;
    // Host CPU threads of one unit: a rental instance's vCPUs, a complete system's threads
    // (servers, racks); 0 = not published (cards and baseboards: their host's).
    int vcpus = 0;
    // Purchase.
    UnitForm form = UnitForm::card;
    std::vector<std::string> includes;  // what the price covers, in words
    std::string needs_host;             // host id; empty = self-contained (server, rack) or none needed
    UnitCondition condition = UnitCondition::new_unit;
    std::optional<PricePoint> price;   // per unit
    std::vector<Site> sites;           // where it may run; empty = datacenter
    std::vector<std::string> regions;  // region globs where it is sold; empty = worldwide
    int max_units = 0;                 // most units in one order; 0 = no limit
    // Servers and racks: the maker's maximum system power, GPUs included; 0 = not published.
    double system_power_watts = 0;
    // Weeks from order to delivery (a quote's `lead_time`); 0 = not given (the cost model takes
    // data/cost.yaml's lead_time by unit form).
    double lead_time_weeks = 0;
    // Rental.
    std::string instance_type;
    Availability availability = Availability::on_demand;
    std::vector<RegionalRates> rates;
    // Both: the defaults of the offer's prices.
    PriceKind price_kind = PriceKind::estimate;
    std::string as_of;
    std::vector<std::string> sources;
    std::string notes;
    bool legacy = false;  // converted from a format-1 price:/cloud: block

    bool may_run_at(Site site) const;
};

// True for a month written YYYY-MM (01-12), as every date in a catalog is.
bool valid_year_month(std::string_view text);

// Glob match of a region pattern ('*' matches any run, '?' one character), case-insensitive.
// "any" as a region matches every pattern.
bool region_matches(std::string_view pattern, std::string_view region);

}  // namespace gpusel
