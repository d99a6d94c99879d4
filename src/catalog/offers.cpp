// Reading the offer lists of a format-2 catalog (docs/catalog.md) and converting format-1
// price:/cloud: blocks into offers.

#include "catalog/offers.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "base/text.hpp"

namespace gpusel {

namespace {

constexpr std::pair<PriceKind, std::string_view> price_kind_names[] = {
    {PriceKind::list, "list"},     {PriceKind::msrp, "msrp"},         {PriceKind::quote, "quote"},
    {PriceKind::street, "street"}, {PriceKind::reported, "reported"}, {PriceKind::estimate, "estimate"}};
constexpr std::pair<ProviderKind, std::string_view> provider_kind_names[] = {{ProviderKind::cloud, "cloud"},
                                                                             {ProviderKind::vendor, "vendor"}};
constexpr std::pair<UnitForm, std::string_view> form_names[] = {{UnitForm::card, "card"},
                                                                {UnitForm::baseboard, "baseboard"},
                                                                {UnitForm::server, "server"},
                                                                {UnitForm::rack, "rack"},
                                                                {UnitForm::module, "module"}};
constexpr std::pair<UnitCondition, std::string_view> condition_names[] = {
    {UnitCondition::new_unit, "new"}, {UnitCondition::used, "used"}, {UnitCondition::refurbished, "refurbished"}};
constexpr std::pair<Availability, std::string_view> availability_names[] = {
    {Availability::on_demand, "on_demand"},
    {Availability::reservation_only, "reservation_only"},
    {Availability::capacity_block_only, "capacity_block_only"},
    {Availability::quota_gated, "quota_gated"}};

// Far beyond any unit on sale (an NVL72 rack is a few million), tight enough to catch a slip.
constexpr double max_unit_usd = 1e9;
constexpr double max_instance_hour_usd = 1e5;
constexpr int max_gpus_per_unit = 1024;
// A GB200 NVL72 rack has 72 Grace CPUs × 72 cores (5,184); the limit leaves room above it.
constexpr int max_vcpus_per_unit = 65536;
constexpr double max_system_watts = 1e7;  // a 10 MW unit: far above any rack

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::pair<Enum, std::string_view> (&table)[N]) {
    for (const auto& [entry, name] : table) {
        if (entry == value) {
            return name;
        }
    }
    return "";
}

bool valid_id(std::string_view id, bool allow_slash) {
    return !id.empty() && id.size() <= max_offer_id_length && std::all_of(id.begin(), id.end(), [&](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.' || (allow_slash && c == '/');
    });
}

// Reads `id` of a list entry; false (and a diagnostic) when it is absent or malformed.
bool read_id(MapReader& reader, std::string& id, bool allow_slash) {
    reader.require("id");
    if (!reader.text("id", id)) {
        return false;
    }
    if (!valid_id(id, allow_slash)) {
        reader.error("id", fmt::format("'{}' is not a valid id; use letters, digits, '-', '_', '.'{}", id,
                                       allow_slash ? " and '/'" : ""));
        return false;
    }
    return true;
}

void read_sources(MapReader& reader, std::vector<std::string>& sources) {
    if (reader.text_list("sources", sources) && sources.empty()) {
        reader.error("sources", "at least one source is required");
    }
}

// A price given as a number (inheriting the offer's kind, date and sources) or as a map
// {price, price_kind, as_of, source}. Where `zones_allowed` (spot), the map may give `zones`, a
// list of the prices of each availability zone, instead of `price`: the price is their median.
void read_price(MapReader& reader, std::string_view key, std::optional<PricePoint>& into, const Offer& defaults,
                UnitKind unit, double max_usd, bool zones_allowed = false) {
    const YamlNode* node = reader.node(key);
    if (node == nullptr) {
        return;
    }
    PricePoint point = into.value_or(PricePoint{0, defaults.price_kind, defaults.as_of, defaults.sources, {}});
    const std::string path = reader.child_path(key);
    if (node->kind == YamlNode::Kind::mapping) {
        MapReader price(*node, path, reader.diagnostics());
        const YamlNode* zones = zones_allowed ? price.node("zones") : nullptr;
        if (zones == nullptr) {
            price.require("price");
            price.number("price", point.usd, unit, 0, max_usd, true);
            point.zones_usd.clear();
        } else if (price.node("price") != nullptr) {
            price.error("price", "give price or zones, not both (with zones the price is their median)");
        } else if (zones->kind != YamlNode::Kind::sequence || zones->items.empty()) {
            price.error("zones", "expected a list of the zones' prices, at least one");
        } else {
            point.zones_usd.clear();
            for (std::size_t i = 0; i < zones->items.size(); ++i) {
                double usd = 0;
                if (read_number(zones->items[i], fmt::format("{}[{}]", price.child_path("zones"), i),
                                reader.diagnostics(), usd, unit, 0, max_usd, true)) {
                    point.zones_usd.push_back(usd);
                }
            }
            std::sort(point.zones_usd.begin(), point.zones_usd.end());
            point.usd = median_of(point.zones_usd);
        }
        price.choice("price_kind", point.kind, price_kind_names);
        read_year_month(price, "as_of", point.as_of);
        std::string source;
        if (price.text("source", source)) {
            point.sources = {source};
        }
        price.finish();
    } else if (!read_number(*node, path, reader.diagnostics(), point.usd, unit, 0, max_usd, true)) {
        return;
    } else {
        point.zones_usd.clear();
    }
    if (point.usd > 0) {
        into = std::move(point);
    }
}

void read_common(MapReader& reader, Offer& offer, bool is_new) {
    if (is_new) {
        for (const char* key : {"gpu", "gpus", "price_kind", "as_of", "sources"}) {
            reader.require(key);
        }
    }
    reader.text("gpu", offer.gpu);
    reader.integer("gpus", offer.gpus_per_unit, 1, max_gpus_per_unit);
    reader.integer("vcpus", offer.vcpus, 1, max_vcpus_per_unit);
    reader.choice("price_kind", offer.price_kind, price_kind_names);
    read_year_month(reader, "as_of", offer.as_of);
    read_sources(reader, offer.sources);
    reader.text("notes", offer.notes);
}

void read_purchase(MapReader& reader, Offer& offer, bool is_new) {
    if (is_new) {
        for (const char* key : {"vendor", "name", "form", "price"}) {
            reader.require(key);
        }
    }
    read_common(reader, offer, is_new);
    reader.text("vendor", offer.provider);
    reader.text("name", offer.name);
    reader.choice("form", offer.form, form_names);
    reader.text_list("includes", offer.includes);
    if (const YamlNode* node = reader.node("needs_host"); node != nullptr && node->kind != YamlNode::Kind::null) {
        reader.text("needs_host", offer.needs_host);
    }
    reader.choice("condition", offer.condition, condition_names);
    reader.number("system_power", offer.system_power_watts, UnitKind::watts, 0, max_system_watts, true);
    // A quote's delivery time: `lead_time: 6w` (d, w, mo); up to two years.
    double lead_time_seconds = 0;
    if (reader.number("lead_time", lead_time_seconds, UnitKind::seconds, 0, 2 * 365.25 * 86400)) {
        offer.lead_time_weeks = lead_time_seconds / (7 * 86400.0);
    }
    // The price inherits the offer's kind, date and sources, read above.
    if (offer.price) {
        offer.price->kind = offer.price_kind;
        offer.price->as_of = offer.as_of;
        offer.price->sources = offer.sources;
    }
    read_price(reader, "price", offer.price, offer, UnitKind::usd, max_unit_usd);
    if (const YamlNode* node = reader.node("sites")) {
        if (node->kind != YamlNode::Kind::sequence) {
            reader.error("sites", fmt::format("expected a list of sites, got {}", kind_name(node->kind)));
        } else {
            offer.sites.clear();
            for (std::size_t i = 0; i < node->items.size(); ++i) {
                const YamlNode& item = node->items[i];
                const auto found = std::find_if(std::begin(site_names), std::end(site_names),
                                                [&](const auto& entry) { return entry.second == item.scalar; });
                if (item.kind != YamlNode::Kind::scalar || found == std::end(site_names)) {
                    reader.diagnostics().error(
                        item.position, fmt::format("{}[{}]", reader.child_path("sites"), i),
                        fmt::format("'{}' is not a site; one of datacenter, office, edge", item.scalar));
                } else {
                    offer.sites.push_back(found->first);
                }
            }
        }
    }
    reader.text_list("regions", offer.regions);
    reader.integer("max_units", offer.max_units, 1, 1 << 20);
}

void read_rental(MapReader& reader, Offer& offer, bool is_new) {
    if (is_new) {
        for (const char* key : {"provider", "instance_type", "prices"}) {
            reader.require(key);
        }
    }
    read_common(reader, offer, is_new);
    reader.text("provider", offer.provider);
    reader.text("instance_type", offer.instance_type);
    offer.name = offer.instance_type;
    reader.choice("availability", offer.availability, availability_names);
    const YamlNode* prices = reader.node("prices");
    if (prices == nullptr) {
        return;
    }
    if (prices->kind != YamlNode::Kind::sequence) {
        reader.error("prices", fmt::format("expected a list of regional prices, got {}", kind_name(prices->kind)));
        return;
    }
    offer.rates.clear();
    for (std::size_t i = 0; i < prices->items.size(); ++i) {
        MapReader line(prices->items[i], fmt::format("{}[{}]", reader.child_path("prices"), i), reader.diagnostics());
        RegionalRates rates;
        line.require("region");
        line.text("region", rates.region);
        read_price(line, "on_demand", rates.on_demand, offer, UnitKind::usd_per_hour, max_instance_hour_usd);
        read_price(line, "spot", rates.spot, offer, UnitKind::usd_per_hour, max_instance_hour_usd, true);
        read_price(line, "reserved_1y", rates.reserved_1y, offer, UnitKind::usd_per_hour, max_instance_hour_usd);
        read_price(line, "reserved_3y", rates.reserved_3y, offer, UnitKind::usd_per_hour, max_instance_hour_usd);
        read_price(line, "capacity_block", rates.capacity_block, offer, UnitKind::usd_per_hour, max_instance_hour_usd);
        if (!rates.on_demand && !rates.spot && !rates.reserved_1y && !rates.reserved_3y && !rates.capacity_block &&
            offer.availability == Availability::on_demand) {
            line.error("region",
                       "no price in this region: give on_demand, spot, reserved_1y, reserved_3y or capacity_block, "
                       "or set the offer's availability");
        }
        line.finish();
        offer.rates.push_back(std::move(rates));
    }
    if (offer.rates.empty()) {
        reader.error("prices", "at least one regional price is required");
    }
}

// Reads one top-level list of `section` entries with `read`, each merged into `catalog` by id.
template <typename Read>
void read_list(MapReader& top, std::string_view section, Read&& read) {
    const YamlNode* list = top.node(section);
    if (list == nullptr) {
        return;
    }
    if (list->kind != YamlNode::Kind::sequence) {
        top.error(section, fmt::format("expected a list, got {}", kind_name(list->kind)));
        return;
    }
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < list->items.size(); ++i) {
        MapReader reader(list->items[i], fmt::format("{}[{}]", section, i), top.diagnostics());
        read(reader, seen);
        reader.finish();
    }
}

// A system power is a whole server's or rack's, so it holds at least its GPUs' board power.
void check_system_power(MapReader& reader, const Catalog& catalog, const Offer& offer) {
    if (offer.form != UnitForm::server && offer.form != UnitForm::rack) {
        reader.error("system_power", fmt::format("a {} has no system power of its own; give its host's power under "
                                                 "hosts: (power)",
                                                 to_string(offer.form)));
        return;
    }
    const GpuSpec* gpu = catalog.find(offer.gpu);
    const double boards_watts = gpu == nullptr ? 0.0 : gpu->power_watts * offer.gpus_per_unit;
    if (offer.system_power_watts < boards_watts) {
        reader.error("system_power",
                     fmt::format("{:.0f} W is less than its {} GPUs' board power ({} × {:.0f} W = {:.0f} W)",
                                 offer.system_power_watts, offer.gpus_per_unit, offer.gpus_per_unit, gpu->power_watts,
                                 boards_watts));
    }
}

// The GPU, provider and host an offer names must be known by the time it is read (GPUs and
// providers come first in a file, and built-in ones are always there).
void check_references(MapReader& reader, const Catalog& catalog, const Offer& offer) {
    if (!offer.gpu.empty() && catalog.find(offer.gpu) == nullptr) {
        const std::string suggestion = catalog.suggest(offer.gpu);
        reader.error("gpu",
                     fmt::format("unknown GPU '{}'{}", offer.gpu,
                                 suggestion.empty() ? std::string() : fmt::format("; did you mean '{}'?", suggestion)));
    }
    const std::string_view provider_key = offer.kind == OfferKind::purchase ? "vendor" : "provider";
    if (!offer.provider.empty()) {
        const Provider* provider = catalog.find_provider(offer.provider);
        if (provider == nullptr) {
            reader.error(provider_key, fmt::format("unknown provider '{}'; add it under providers:", offer.provider));
        } else if ((provider->kind == ProviderKind::cloud) != (offer.kind == OfferKind::rental)) {
            reader.error(provider_key,
                         fmt::format("'{}' is a {}; {} offers need a {}", offer.provider, to_string(provider->kind),
                                     to_string(offer.kind), offer.kind == OfferKind::rental ? "cloud" : "vendor"));
        }
    }
    if (!offer.needs_host.empty() && catalog.find_host(offer.needs_host) == nullptr) {
        reader.error("needs_host", fmt::format("unknown host '{}'; add it under hosts:", offer.needs_host));
    }
    if (offer.system_power_watts > 0) {
        check_system_power(reader, catalog, offer);
    }
}

bool first_time(MapReader& reader, std::unordered_set<std::string>& seen, const std::string& id) {
    if (!seen.insert(to_lower(id)).second) {
        reader.error("id", fmt::format("duplicate id '{}' in this file", id));
        return false;
    }
    return true;
}

}  // namespace

bool valid_offer_id(std::string_view id) {
    return valid_id(id, true);
}

std::string_view to_string(OfferKind kind) {
    return kind == OfferKind::purchase ? "purchase" : "rental";
}
std::string_view to_string(PriceKind kind) {
    return name_of(kind, price_kind_names);
}
std::string_view to_string(ProviderKind kind) {
    return name_of(kind, provider_kind_names);
}
std::string_view to_string(ProviderTier tier) {
    return name_of(tier, tier_names);
}
std::string_view to_string(UnitForm form) {
    return name_of(form, form_names);
}
std::string_view to_string(UnitCondition condition) {
    return name_of(condition, condition_names);
}
std::string_view to_string(Availability availability) {
    return name_of(availability, availability_names);
}
std::string_view to_string(Site site) {
    return name_of(site, site_names);
}

bool Offer::may_run_at(Site site) const {
    if (kind == OfferKind::rental) {
        return site == Site::datacenter;
    }
    return sites.empty() ? site == Site::datacenter : std::find(sites.begin(), sites.end(), site) != sites.end();
}

bool region_matches(std::string_view pattern, std::string_view region) {
    if (equals_ignore_case(region, "any")) {
        return true;
    }
    // Iterative glob with one backtrack point: '*' retried at each later position.
    std::size_t p = 0;
    std::size_t r = 0;
    std::size_t star = std::string_view::npos;
    std::size_t retry = 0;
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    while (r < region.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(region[r]))) {
            ++p;
            ++r;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            retry = r;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            r = ++retry;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

double median_of(std::vector<double> values) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

bool valid_year_month(std::string_view text) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (text.size() != 7 || text[4] != '-' || !std::all_of(text.begin(), text.begin() + 4, digit) || !digit(text[5]) ||
        !digit(text[6])) {
        return false;
    }
    const int month = (text[5] - '0') * 10 + (text[6] - '0');
    return month >= 1 && month <= 12;
}

void read_year_month(MapReader& reader, std::string_view key, std::string& into) {
    std::string value;
    if (!reader.text(key, value)) {
        return;
    }
    if (valid_year_month(value)) {
        into = value;
    } else {
        reader.error(key, fmt::format("'{}' is not a month; write YYYY-MM, e.g. 2026-09", value));
    }
}

void read_offer_lists(MapReader& top, Catalog& catalog) {
    read_list(top, "providers", [&](MapReader& reader, std::unordered_set<std::string>& seen) {
        std::string id;
        const bool usable = read_id(reader, id, false) && first_time(reader, seen, id);
        Provider* existing = usable ? catalog.find_provider_mutable(id) : nullptr;
        Provider provider = existing != nullptr ? *existing : Provider{};
        provider.id = existing != nullptr ? existing->id : to_lower(id);
        if (usable && existing == nullptr) {
            reader.require("name");
            reader.require("kind");
        }
        reader.text("name", provider.name);
        reader.choice("kind", provider.kind, provider_kind_names);
        reader.choice("tier", provider.tier, tier_names);
        if (usable && provider.kind == ProviderKind::cloud && provider.tier == ProviderTier::none) {
            reader.error(reader.has("tier") ? "tier" : "kind",
                         "a cloud needs a tier: hyperscaler, neocloud or marketplace");
        }
        if (usable) {
            catalog.upsert(std::move(provider));
        }
    });
    read_list(top, "hosts", [&](MapReader& reader, std::unordered_set<std::string>& seen) {
        std::string id;
        const bool usable = read_id(reader, id, false) && first_time(reader, seen, id);
        HostOffer* existing = usable ? catalog.find_host_mutable(id) : nullptr;
        HostOffer host = existing != nullptr ? *existing : HostOffer{};
        host.id = existing != nullptr ? existing->id : id;
        if (usable && existing == nullptr) {
            for (const char* key : {"name", "slots", "price", "price_kind", "as_of", "sources"}) {
                reader.require(key);
            }
        }
        reader.text("name", host.name);
        reader.integer("slots", host.slots, 1, 64);
        reader.integer("vcpus", host.vcpus, 1, max_vcpus_per_unit);
        reader.number("power", host.power_watts, UnitKind::watts, 0, max_system_watts, true);
        reader.number("price", host.price.usd, UnitKind::usd, 0, max_unit_usd, true);
        reader.choice("price_kind", host.price.kind, price_kind_names);
        read_year_month(reader, "as_of", host.price.as_of);
        read_sources(reader, host.price.sources);
        reader.text("notes", host.notes);
        if (usable) {
            catalog.upsert(std::move(host));
        }
    });
    for (const OfferKind kind : {OfferKind::purchase, OfferKind::rental}) {
        read_list(top, kind == OfferKind::purchase ? "purchase" : "rental",
                  [&](MapReader& reader, std::unordered_set<std::string>& seen) {
                      std::string id;
                      bool usable = read_id(reader, id, true) && first_time(reader, seen, id);
                      Offer* existing = usable ? catalog.find_offer_mutable(id) : nullptr;
                      if (existing != nullptr && existing->kind != kind) {
                          reader.error("id", fmt::format("'{}' is a {} offer; it cannot be redefined as a {} offer", id,
                                                         to_string(existing->kind), to_string(kind)));
                          usable = false;
                          existing = nullptr;
                      }
                      Offer offer = existing != nullptr ? *existing : Offer{};
                      offer.id = existing != nullptr ? existing->id : id;
                      offer.kind = kind;
                      // An entry whose id was refused is still read field by field (its other
                      // fields are not "unknown"), but neither required fields nor references are
                      // asked of it and it is not merged: the id problem is its one report.
                      const bool is_new = usable && existing == nullptr;
                      if (kind == OfferKind::purchase) {
                          read_purchase(reader, offer, is_new);
                      } else {
                          read_rental(reader, offer, is_new);
                      }
                      if (!usable) {
                          return;
                      }
                      offer.legacy = false;
                      check_references(reader, catalog, offer);
                      catalog.upsert(std::move(offer));
                  });
    }
}

void add_legacy_offers(Catalog& catalog, const LegacyPrices& legacy) {
    const GpuSpec* gpu = catalog.find(legacy.gpu);
    if (gpu == nullptr) {
        return;
    }
    const std::string note =
        "format-1 price block converted to an offer of one GPU; move it to a purchase: or "
        "rental: offer (docs/catalog.md)";
    const auto purchase = [&](const std::string& suffix, double usd, UnitCondition condition) {
        Offer offer;
        offer.id = fmt::format("{}/legacy-{}", gpu->id, suffix);
        offer.kind = OfferKind::purchase;
        offer.gpu = gpu->id;
        offer.provider = "legacy-vendor";
        offer.name = fmt::format("{} ({}, per GPU)", gpu->name, suffix);
        offer.form = UnitForm::card;
        offer.condition = condition;
        offer.price_kind = PriceKind::estimate;
        offer.as_of = legacy.price_as_of;
        offer.sources = gpu->sources;
        offer.price = PricePoint{usd, PriceKind::estimate, legacy.price_as_of, gpu->sources, {}};
        offer.notes = note;
        offer.legacy = true;
        if (gpu->segment == Segment::consumer) {
            offer.sites = {Site::office};
        } else if (gpu->segment == Segment::edge) {
            offer.sites = {Site::edge};
        } else if (gpu->segment == Segment::workstation) {
            offer.sites = {Site::datacenter, Site::office};
        }
        if (legacy.server_share_usd) {
            HostOffer host;
            host.id = fmt::format("{}-legacy-host", to_lower(gpu->id));
            host.name = fmt::format("host share of one {}", gpu->id);
            host.slots = 1;
            host.price =
                PricePoint{*legacy.server_share_usd, PriceKind::estimate, legacy.price_as_of, gpu->sources, {}};
            host.notes = note;
            offer.needs_host = host.id;
            catalog.upsert(std::move(host));
        }
        catalog.upsert(std::move(offer));
    };
    if (legacy.new_usd) {
        purchase("new", *legacy.new_usd, UnitCondition::new_unit);
    }
    if (legacy.used_usd) {
        purchase("used", *legacy.used_usd, UnitCondition::used);
    }
    if (legacy.on_demand_usd_per_hour || legacy.spot_usd_per_hour || legacy.reserved_1y_usd_per_hour) {
        Offer offer;
        offer.id = fmt::format("{}/legacy-cloud", gpu->id);
        offer.kind = OfferKind::rental;
        offer.gpu = gpu->id;
        offer.provider = "legacy";
        offer.instance_type = legacy.cloud_provider.empty() ? "1 GPU" : legacy.cloud_provider;
        offer.name = offer.instance_type;
        offer.price_kind = PriceKind::estimate;
        offer.as_of = legacy.cloud_as_of;
        offer.sources = gpu->sources;
        offer.notes = note;
        offer.legacy = true;
        RegionalRates rates;
        rates.region = "any";
        const auto point = [&](const std::optional<double>& usd) -> std::optional<PricePoint> {
            if (!usd) {
                return std::nullopt;
            }
            return PricePoint{*usd, PriceKind::estimate, legacy.cloud_as_of, gpu->sources, {}};
        };
        rates.on_demand = point(legacy.on_demand_usd_per_hour);
        rates.spot = point(legacy.spot_usd_per_hour);
        rates.reserved_1y = point(legacy.reserved_1y_usd_per_hour);
        offer.rates.push_back(std::move(rates));
        catalog.upsert(std::move(offer));
    }
    if (catalog.find_provider("legacy") == nullptr) {
        catalog.upsert(Provider{"legacy", "format-1 catalog price", ProviderKind::cloud, ProviderTier::neocloud});
    }
    if (catalog.find_provider("legacy-vendor") == nullptr) {
        catalog.upsert(Provider{"legacy-vendor", "format-1 catalog price", ProviderKind::vendor, ProviderTier::none});
    }
}

}  // namespace gpusel
