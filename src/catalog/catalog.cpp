#include "catalog/catalog.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "catalog/offers.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_catalog_yaml();
std::string_view builtin_offers_yaml();
}  // namespace gpusel::embedded

namespace gpusel {

namespace {

// Sanity bounds: far beyond any part on sale, tight enough to catch unit slips (TB for GB).
constexpr double max_memory_bytes = 4e12;
constexpr double max_bandwidth_bytes_per_s = 1e14;
constexpr double max_tflops = 1e6;
constexpr double max_watts = 1e5;
constexpr double max_price_usd = 1e8;
constexpr double max_hourly_usd = 1e4;
constexpr const char* catalog_lists[] = {"gpus", "providers", "hosts", "purchase", "rental"};

bool parse_host_link(const std::string& text, int& generation, int& lanes) {
    // "pcie4x16"
    if (text.size() < 7 || text.substr(0, 4) != "pcie") {
        return false;
    }
    const std::size_t x = text.find('x', 4);
    if (x == std::string::npos) {
        return false;
    }
    const auto generation_text = std::string_view(text).substr(4, x - 4);
    const auto lanes_text = std::string_view(text).substr(x + 1);
    const auto [p1, e1] =
        std::from_chars(generation_text.data(), generation_text.data() + generation_text.size(), generation);
    const auto [p2, e2] = std::from_chars(lanes_text.data(), lanes_text.data() + lanes_text.size(), lanes);
    return e1 == std::errc{} && e2 == std::errc{} && p1 == generation_text.data() + generation_text.size() &&
           p2 == lanes_text.data() + lanes_text.size() && generation >= 1 && generation <= 7 &&
           (lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16);
}

void read_gpu(MapReader& reader, GpuSpec& gpu, bool is_new, LegacyPrices& legacy) {
    if (is_new) {
        for (const char* key : {"name", "vendor", "architecture", "segment", "form_factor", "memory",
                                "memory_bandwidth", "dense_tflops", "power", "host_link", "sources"}) {
            reader.require(key);
        }
    }
    reader.node("id");
    reader.text("name", gpu.name);
    reader.text("vendor", gpu.vendor);
    reader.text("architecture", gpu.architecture);
    reader.text("compute_capability", gpu.compute_capability);
    reader.choice("segment", gpu.segment, segment_names);
    reader.choice("form_factor", gpu.form_factor, form_factor_names);
    read_year_month(reader, "released", gpu.released);
    reader.number("memory", gpu.memory_bytes, UnitKind::bytes, 0, max_memory_bytes, true);
    reader.text("memory_type", gpu.memory_type);
    reader.number("memory_bandwidth", gpu.memory_bandwidth_bytes_per_s, UnitKind::bytes_per_second, 0,
                  max_bandwidth_bytes_per_s, true);
    reader.boolean("ecc", gpu.ecc);
    if (const YamlNode* node = reader.node("dense_tflops")) {
        MapReader rates(*node, reader.child_path("dense_tflops"), reader.diagnostics());
        for (const Precision precision : all_precisions) {
            double tflops = 0;
            if (rates.number(to_string(precision), tflops, UnitKind::plain, 0, max_tflops, true)) {
                gpu.dense_flops_per_s[static_cast<std::size_t>(precision)] = tflops * flops_per_tflop;
            }
        }
        rates.finish();
        if (is_new && !rates.has("fp32") && node->kind == YamlNode::Kind::mapping) {
            rates.require("fp32");
        }
        const double fp32 = gpu.peak_flops_per_s(Precision::fp32);
        const double fp16 = gpu.peak_flops_per_s(Precision::fp16);
        if (fp32 > 0 && fp16 > 0 && fp16 < fp32) {
            rates.error("fp16", "fp16 throughput is below fp32; dense tensor rates are at least the fp32 rate");
        }
    }
    reader.number("power", gpu.power_watts, UnitKind::watts, 0, max_watts, true);
    std::string host_link;
    if (reader.text("host_link", host_link)) {
        if (!parse_host_link(host_link, gpu.host_link_generation, gpu.host_link_lanes)) {
            reader.error("host_link", fmt::format("'{}' is not a host link; write e.g. pcie4x16", host_link));
        }
    }
    if (const YamlNode* node = reader.node("interconnect")) {
        MapReader link(*node, reader.child_path("interconnect"), reader.diagnostics());
        if (gpu.interconnect.kind.empty()) {
            link.require("kind");
            link.require("bandwidth");
        }
        link.text("kind", gpu.interconnect.kind);
        link.number("bandwidth", gpu.interconnect.bidirectional_bytes_per_s, UnitKind::bytes_per_second, 0,
                    max_bandwidth_bytes_per_s, true);
        link.integer("domain", gpu.interconnect.domain_size, 1, 1 << 20);
        link.finish();
    }
    if (const YamlNode* node = reader.node("price")) {
        MapReader price(*node, reader.child_path("price"), reader.diagnostics());
        double value = 0;
        if (price.number("new", value, UnitKind::usd, 0, max_price_usd, true)) {
            legacy.new_usd = value;
        }
        if (price.number("used", value, UnitKind::usd, 0, max_price_usd, true)) {
            legacy.used_usd = value;
        }
        if (price.number("server_share", value, UnitKind::usd, 0, max_price_usd)) {
            legacy.server_share_usd = value;
        }
        read_year_month(price, "as_of", legacy.price_as_of);
        price.finish();
    }
    if (const YamlNode* node = reader.node("cloud")) {
        MapReader cloud(*node, reader.child_path("cloud"), reader.diagnostics());
        double value = 0;
        if (cloud.number("on_demand", value, UnitKind::usd_per_hour, 0, max_hourly_usd, true)) {
            legacy.on_demand_usd_per_hour = value;
        }
        if (cloud.number("spot", value, UnitKind::usd_per_hour, 0, max_hourly_usd, true)) {
            legacy.spot_usd_per_hour = value;
        }
        if (cloud.number("reserved_1y", value, UnitKind::usd_per_hour, 0, max_hourly_usd, true)) {
            legacy.reserved_1y_usd_per_hour = value;
        }
        cloud.text("provider", legacy.cloud_provider);
        read_year_month(cloud, "as_of", legacy.cloud_as_of);
        cloud.finish();
    }
    if (reader.text_list("sources", gpu.sources) && gpu.sources.empty()) {
        reader.error("sources", "at least one source is required");
    }
    reader.text("notes", gpu.notes);
    reader.finish();
}

}  // namespace

std::string_view to_string(Segment segment) {
    for (const auto& [value, name] : segment_names) {
        if (value == segment) {
            return name;
        }
    }
    return "?";
}

std::string_view to_string(FormFactor form_factor) {
    for (const auto& [value, name] : form_factor_names) {
        if (value == form_factor) {
            return name;
        }
    }
    return "?";
}

double GpuSpec::host_link_bytes_per_s() const {
    // PCIe 3.0 carries ≈0.985 GB/s per lane per direction; each later generation doubles it.
    double per_lane = 0.985e9;
    for (int generation = 3; generation < host_link_generation; ++generation) {
        per_lane *= 2;
    }
    for (int generation = 3; generation > host_link_generation; --generation) {
        per_lane /= 2;
    }
    return per_lane * host_link_lanes;
}

const GpuSpec* Catalog::find(std::string_view id) const {
    const auto found = m_index.find(to_lower(id));
    return found == m_index.end() ? nullptr : &m_gpus[found->second];
}

GpuSpec* Catalog::find_mutable(std::string_view id) {
    const auto found = m_index.find(to_lower(id));
    return found == m_index.end() ? nullptr : &m_gpus[found->second];
}

std::string Catalog::suggest(std::string_view id) const {
    std::vector<std::string> ids;
    ids.reserve(m_gpus.size());
    for (const GpuSpec& gpu : m_gpus) {
        ids.push_back(gpu.id);
    }
    return closest_match(id, ids);
}

void Catalog::upsert(GpuSpec gpu) {
    const auto [position, inserted] = m_index.emplace(to_lower(gpu.id), m_gpus.size());
    if (inserted) {
        m_gpus.push_back(std::move(gpu));
    } else {
        m_gpus[position->second] = std::move(gpu);
    }
}

namespace {

template <typename Entry>
Entry* find_by_id(std::vector<Entry>& entries, std::string_view id) {
    const auto found = std::find_if(entries.begin(), entries.end(),
                                    [&](const Entry& entry) { return equals_ignore_case(entry.id, id); });
    return found == entries.end() ? nullptr : &*found;
}

template <typename Entry>
void upsert_by_id(std::vector<Entry>& entries, Entry entry) {
    if (Entry* existing = find_by_id(entries, entry.id)) {
        *existing = std::move(entry);
    } else {
        entries.push_back(std::move(entry));
    }
}

}  // namespace

const Offer* Catalog::find_offer(std::string_view id) const {
    const auto found = m_offer_index.find(to_lower(id));
    return found == m_offer_index.end() ? nullptr : &m_offers[found->second];
}
Offer* Catalog::find_offer_mutable(std::string_view id) {
    const auto found = m_offer_index.find(to_lower(id));
    return found == m_offer_index.end() ? nullptr : &m_offers[found->second];
}
const Provider* Catalog::find_provider(std::string_view id) const {
    return find_by_id(const_cast<std::vector<Provider>&>(m_providers), id);
}
Provider* Catalog::find_provider_mutable(std::string_view id) {
    return find_by_id(m_providers, id);
}
const HostOffer* Catalog::find_host(std::string_view id) const {
    return find_by_id(const_cast<std::vector<HostOffer>&>(m_hosts), id);
}
HostOffer* Catalog::find_host_mutable(std::string_view id) {
    return find_by_id(m_hosts, id);
}

std::vector<const Offer*> Catalog::offers_for(std::string_view gpu_id) const {
    std::vector<const Offer*> found;
    for (const Offer& offer : m_offers) {
        if (equals_ignore_case(offer.gpu, gpu_id)) {
            found.push_back(&offer);
        }
    }
    return found;
}

std::string Catalog::suggest_offer(std::string_view id) const {
    std::vector<std::string> ids;
    ids.reserve(m_offers.size());
    for (const Offer& offer : m_offers) {
        ids.push_back(offer.id);
    }
    return closest_match(id, ids);
}

void Catalog::upsert(Offer offer) {
    const auto [position, inserted] = m_offer_index.emplace(to_lower(offer.id), m_offers.size());
    if (inserted) {
        m_offers.push_back(std::move(offer));
    } else {
        m_offers[position->second] = std::move(offer);
    }
}
void Catalog::upsert(Provider provider) {
    upsert_by_id(m_providers, std::move(provider));
}
void Catalog::upsert(HostOffer host) {
    upsert_by_id(m_hosts, std::move(host));
}

namespace {
void derive_host_vcpus(Catalog& catalog) {
    std::unordered_map<std::string, std::vector<double>> per_gpu;
    for (const Offer& offer : catalog.offers()) {
        double vcpus_per_gpu = 0;
        if (offer.vcpus > 0) {
            vcpus_per_gpu = static_cast<double>(offer.vcpus) / offer.gpus_per_unit;
        } else if (const HostOffer* host = offer.needs_host.empty() ? nullptr : catalog.find_host(offer.needs_host);
                   host != nullptr && host->vcpus > 0) {
            vcpus_per_gpu = static_cast<double>(host->vcpus) / host->slots;
        }
        if (vcpus_per_gpu > 0) {
            per_gpu[to_lower(offer.gpu)].push_back(vcpus_per_gpu);
        }
    }
    for (const GpuSpec& gpu : catalog.gpus()) {
        GpuSpec* spec = catalog.find_mutable(gpu.id);
        std::vector<double>& values = per_gpu[to_lower(gpu.id)];
        spec->host_vcpus_offers = static_cast<int>(values.size());
        spec->host_vcpus_per_gpu = 0;
        if (!values.empty()) {
            std::sort(values.begin(), values.end());
            const std::size_t middle = values.size() / 2;
            spec->host_vcpus_per_gpu =
                values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
        }
    }
}
}  // namespace

void merge_catalog_text(Catalog& catalog, std::string_view text, const std::string& file_name) {
    Diagnostics diagnostics(file_name);
    const YamlNode root = parse_yaml_text(text, file_name, &diagnostics);
    MapReader top(root, "", diagnostics);
    top.require("format");
    int format = 0;
    if (top.integer("format", format, 1, 1000) && format != 1 && format != 2) {
        top.error("format", fmt::format("format {} is not supported; this gpusel reads formats 1 and 2", format));
    }
    if (format == 1) {
        top.require("gpus");
    } else if (format == 2 && !std::any_of(std::begin(catalog_lists), std::end(catalog_lists),
                                           [&](const char* key) { return top.has(key); })) {
        top.error("format", "a format-2 catalog needs at least one of gpus, providers, hosts, purchase, rental");
    }
    std::string as_of;
    read_year_month(top, "as_of", as_of);
    Catalog merged = catalog;
    if (!as_of.empty()) {
        merged.as_of = std::max(merged.as_of, as_of);
    }
    std::vector<LegacyPrices> legacy_prices;
    if (const YamlNode* gpus = top.node("gpus")) {
        if (gpus->kind != YamlNode::Kind::sequence) {
            top.error("gpus", fmt::format("expected a list of GPU entries, got {}", kind_name(gpus->kind)));
        } else {
            std::unordered_set<std::string> seen;  // lower-case ids
            for (std::size_t i = 0; i < gpus->items.size(); ++i) {
                const YamlNode& entry = gpus->items[i];
                MapReader reader(entry, fmt::format("gpus[{}]", i), diagnostics);
                std::string id;
                reader.require("id");
                if (!reader.text("id", id)) {
                    reader.finish();
                    continue;
                }
                if (id.empty() || id.size() > 64 || !std::all_of(id.begin(), id.end(), [](char c) {
                        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                               c == '_' || c == '.';
                    })) {
                    reader.error("id",
                                 fmt::format("'{}' is not a valid id; use letters, digits, '-', '_' and '.'", id));
                    reader.finish();
                    continue;
                }
                if (!seen.insert(to_lower(id)).second) {
                    reader.error("id", fmt::format("duplicate id '{}' in this file", id));
                }
                GpuSpec* existing = merged.find_mutable(id);
                GpuSpec gpu = existing != nullptr ? *existing : GpuSpec{};
                gpu.id = existing != nullptr ? existing->id : id;
                LegacyPrices legacy;
                legacy.gpu = gpu.id;
                read_gpu(reader, gpu, existing == nullptr, legacy);
                merged.upsert(std::move(gpu));
                if (legacy.any()) {
                    legacy_prices.push_back(std::move(legacy));
                }
            }
        }
    }
    for (const LegacyPrices& legacy : legacy_prices) {
        add_legacy_offers(merged, legacy);
    }
    read_offer_lists(top, merged);
    top.finish();
    diagnostics.throw_if_any();
    derive_host_vcpus(merged);
    catalog = std::move(merged);
}

void merge_catalog_file(Catalog& catalog, const std::string& path) {
    const std::string text = read_input_file(path);
    merge_catalog_text(catalog, text, path);
}

std::string_view builtin_catalog_text() {
    return embedded::builtin_catalog_yaml();
}
std::string_view builtin_offers_text() {
    return embedded::builtin_offers_yaml();
}

Catalog builtin_catalog() {
    Catalog catalog;
    merge_catalog_text(catalog, builtin_catalog_text(), "data/gpu_catalog.yaml");
    merge_catalog_text(catalog, builtin_offers_text(), "data/offers.yaml");
    return catalog;
}

std::vector<CatalogWarning> audit_catalog(const Catalog& catalog) {
    std::vector<CatalogWarning> warnings;
    const auto months = [](const std::string& year_month) {
        return std::stoi(year_month.substr(0, 4)) * 12 + std::stoi(year_month.substr(5, 2));
    };
    for (const GpuSpec& gpu : catalog.gpus()) {
        const std::vector<const Offer*> offers = catalog.offers_for(gpu.id);
        const auto has = [&](OfferKind kind) {
            return std::any_of(offers.begin(), offers.end(), [&](const Offer* offer) { return offer->kind == kind; });
        };
        if (!has(OfferKind::purchase)) {
            warnings.push_back({gpu.id, "no purchase offer; buying it cannot be costed"});
        }
        if (!has(OfferKind::rental) && gpu.segment != Segment::edge) {
            warnings.push_back({gpu.id, "no rental offer; renting it cannot be costed"});
        }
    }
    for (const Offer& offer : catalog.offers()) {
        if (offer.legacy) {
            warnings.push_back({offer.id,
                                "format-1 price converted to an estimated offer of one GPU; describe the "
                                "real unit under purchase: or rental: (docs/catalog.md)"});
        }
        if (!catalog.as_of.empty() && !offer.as_of.empty() && months(catalog.as_of) - months(offer.as_of) > 12) {
            warnings.push_back({offer.id, fmt::format("price dated {} is more than a year older than the catalog ({})",
                                                      offer.as_of, catalog.as_of)});
        }
        for (const RegionalRates& rates : offer.rates) {
            if (rates.spot && rates.on_demand && rates.spot->usd >= rates.on_demand->usd) {
                warnings.push_back({offer.id, fmt::format("spot ${:.2f}/h in {} is not below on-demand ${:.2f}/h; "
                                                          "the spot price is ignored",
                                                          rates.spot->usd, rates.region, rates.on_demand->usd)});
            }
        }
    }
    return warnings;
}

}  // namespace gpusel
