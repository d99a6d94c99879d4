#include "cost/offer_selection.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"

namespace gpusel {

namespace {

constexpr Site all_sites[] = {Site::datacenter, Site::office, Site::edge};

bool listed(const std::vector<std::string>& ids, const std::string& id) {
    return std::any_of(ids.begin(), ids.end(), [&](const std::string& entry) { return equals_ignore_case(entry, id); });
}

// The price `acquisition` takes from one region of a rental; spot at or above on-demand is no
// spot price (docs/reference/offers.md §2.4: some zones report spot = on-demand).
const std::optional<PricePoint>& rental_price(const RegionalRates& rates, Acquisition acquisition) {
    static const std::optional<PricePoint> none;
    switch (acquisition) {
        case Acquisition::cloud_on_demand:
            return rates.on_demand;
        case Acquisition::cloud_spot:
            if (rates.spot && rates.on_demand && rates.spot->usd >= rates.on_demand->usd) {
                return none;
            }
            return rates.spot;
        case Acquisition::cloud_reserved:
            return rates.reserved_1y;
        case Acquisition::cloud_reserved_3y:
            return rates.reserved_3y;
        case Acquisition::cloud_capacity_block:
            return rates.capacity_block;
        case Acquisition::buy_new:
        case Acquisition::buy_used:
            break;
    }
    return none;
}

// Why a spot price does not rank: undated, or dated longer before the catalog than
// constraints.max_spot_age allows; empty when it ranks (or the catalog has no date to age it by).
std::string spot_age_exclusion(const Workload& workload, const Catalog& catalog, const PricePoint& price) {
    if (catalog.as_of.empty()) {
        return {};
    }
    if (price.as_of.empty()) {
        return "spot price undated (constraints.max_spot_age)";
    }
    const int age = months_between(price.as_of, catalog.as_of);
    if (age > workload.constraints.max_spot_age_months) {
        return fmt::format("spot price dated {} is {} months old (constraints.max_spot_age)", price.as_of, age);
    }
    return {};
}

bool region_allowed(const Workload& workload, const std::string& region) {
    const std::vector<std::string>& patterns = workload.constraints.regions;
    return patterns.empty() || std::any_of(patterns.begin(), patterns.end(),
                                           [&](const std::string& pattern) { return region_matches(pattern, region); });
}

bool purchase_matches(const Offer& offer, Acquisition acquisition) {
    return (acquisition == Acquisition::buy_new) == (offer.condition == UnitCondition::new_unit);
}

std::optional<OfferQuote> make_quote(const Catalog& catalog, const Workload& workload, const Offer& offer,
                                     Acquisition acquisition, bool check_regions) {
    OfferQuote quote;
    quote.offer = &offer;
    quote.acquisition = acquisition;
    if (const Provider* provider = catalog.find_provider(offer.provider)) {
        quote.tier = provider->tier;
        quote.provider_name = provider->name;
    }
    if (offer.kind == OfferKind::purchase) {
        if (!is_purchase(acquisition) || !purchase_matches(offer, acquisition) || !offer.price) {
            return std::nullopt;
        }
        quote.price = *offer.price;
        if (!offer.needs_host.empty()) {
            quote.host = catalog.find_host(offer.needs_host);
        }
        return quote;
    }
    if (is_purchase(acquisition)) {
        return std::nullopt;
    }
    std::optional<OfferQuote> best;
    for (const RegionalRates& rates : offer.rates) {
        const std::optional<PricePoint>& price = rental_price(rates, acquisition);
        if (!price || (check_regions && !region_allowed(workload, rates.region))) {
            continue;
        }
        if (!workload.constraints.allow_estimates && price->kind == PriceKind::estimate) {
            continue;
        }
        if (acquisition == Acquisition::cloud_spot && !spot_age_exclusion(workload, catalog, *price).empty()) {
            continue;
        }
        if (!best || price->usd < best->price.usd) {
            quote.region = rates.region;
            quote.price = *price;
            best = quote;
        }
    }
    return best;
}

}  // namespace

int months_between(const std::string& from, const std::string& to) {
    const auto months = [](const std::string& text) {
        if (text.size() != 7) {
            return -1;
        }
        return std::atoi(text.substr(0, 4).c_str()) * 12 + std::atoi(text.substr(5, 2).c_str());
    };
    const int a = months(from);
    const int b = months(to);
    return a < 0 || b < 0 ? 0 : b - a;
}

bool workload_may_run_at(const Workload& workload, Site site) {
    if (workload.deployment.site) {
        return *workload.deployment.site == site;
    }
    if (workload.deployment.target == DeploymentTarget::edge) {
        return site == Site::edge;
    }
    if (workload.role == Role::inference) {
        return site == Site::datacenter;
    }
    return site == Site::datacenter || site == Site::office;
}

std::string offer_exclusion(const Workload& workload, const Catalog& catalog, const Offer& offer,
                            Acquisition acquisition) {
    const ConstraintSpec& constraints = workload.constraints;
    if (!constraints.acquisitions.empty() && std::find(constraints.acquisitions.begin(), constraints.acquisitions.end(),
                                                       acquisition) == constraints.acquisitions.end()) {
        return fmt::format("{} not in constraints.acquisitions", to_string(acquisition));
    }
    if (!constraints.providers.empty() && !listed(constraints.providers, offer.provider)) {
        return fmt::format("provider {} not in constraints.providers", offer.provider);
    }
    if (listed(constraints.exclude_providers, offer.provider)) {
        return fmt::format("provider {} in constraints.exclude_providers", offer.provider);
    }
    const Provider* provider = catalog.find_provider(offer.provider);
    if (offer.kind == OfferKind::rental && !constraints.tiers.empty() && provider != nullptr &&
        std::find(constraints.tiers.begin(), constraints.tiers.end(), provider->tier) == constraints.tiers.end()) {
        return fmt::format("{} is a {} (constraints.tiers)", offer.provider, to_string(provider->tier));
    }
    const bool runs_here = std::any_of(std::begin(all_sites), std::end(all_sites), [&](Site site) {
        return offer.may_run_at(site) && workload_may_run_at(workload, site);
    });
    if (!runs_here) {
        if (offer.sites.size() == 1 && offer.sites.front() == Site::office) {
            return "GeForce licence: not for data-centre deployment (deployment.site: office for a desk-side box)";
        }
        if (offer.sites.size() == 1 && offer.sites.front() == Site::edge) {
            return "an edge module: for edge deployments only";
        }
        return "not for this deployment's site (deployment.site)";
    }
    if (offer.kind == OfferKind::purchase && !offer.regions.empty()) {
        const bool sold_here = std::any_of(offer.regions.begin(), offer.regions.end(), [&](const std::string& region) {
            return std::any_of(constraints.regions.begin(), constraints.regions.end(),
                               [&](const std::string& pattern) { return region_matches(pattern, region); });
        });
        if (!sold_here) {
            return fmt::format("sold only in {} (constraints.regions)", fmt::join(offer.regions, ", "));
        }
    }
    // Capacity-block-only and reservation-only instances are had through a commitment: a
    // reservation of either term, or a capacity block.
    const bool committed = acquisition == Acquisition::cloud_reserved ||
                           acquisition == Acquisition::cloud_reserved_3y ||
                           acquisition == Acquisition::cloud_capacity_block;
    if (offer.kind == OfferKind::rental && offer.availability != Availability::on_demand &&
        offer.availability != Availability::quota_gated && !committed) {
        return fmt::format(
            "{}: {}", offer.instance_type,
            offer.availability == Availability::capacity_block_only ? "capacity blocks only" : "reservations only");
    }
    if (offer.kind == OfferKind::rental && acquisition == Acquisition::cloud_spot) {
        if (offer.availability == Availability::quota_gated) {
            return fmt::format("{}: quota-gated (on-demand after a quota grant); its spot price does not rank",
                               offer.instance_type);
        }
        // Every spot price the regions allow is too old: say so, rather than "no price".
        std::string why;
        for (const RegionalRates& rates : offer.rates) {
            const std::optional<PricePoint>& price = rental_price(rates, acquisition);
            if (!price || !region_allowed(workload, rates.region)) {
                continue;
            }
            const std::string age = spot_age_exclusion(workload, catalog, *price);
            if (age.empty()) {
                why.clear();
                break;
            }
            if (why.empty()) {
                why = age;
            }
        }
        if (!why.empty()) {
            return why;
        }
    }
    const HostOffer* host = offer.needs_host.empty() ? nullptr : catalog.find_host(offer.needs_host);
    if (!constraints.allow_estimates && offer.kind == OfferKind::purchase &&
        (offer.price_kind == PriceKind::estimate || (host != nullptr && host->price.kind == PriceKind::estimate))) {
        return "estimated price (constraints.allow_estimates: false)";
    }
    if (!catalog.as_of.empty() && !offer.as_of.empty()) {
        const int age = months_between(offer.as_of, catalog.as_of);
        if (age > constraints.max_offer_age_months) {
            return fmt::format("price dated {} is {} months old (constraints.max_offer_age)", offer.as_of, age);
        }
    }
    return {};
}

std::vector<OfferQuote> quotes_for(const Catalog& catalog, const Workload& workload, const GpuSpec& gpu,
                                   Acquisition acquisition, std::vector<std::string>* excluded) {
    std::vector<OfferQuote> quotes;
    for (const Offer* offer : catalog.offers_for(gpu.id)) {
        if ((offer->kind == OfferKind::purchase) != is_purchase(acquisition)) {
            continue;
        }
        if (offer->kind == OfferKind::purchase && !purchase_matches(*offer, acquisition)) {
            continue;
        }
        const std::string why = offer_exclusion(workload, catalog, *offer, acquisition);
        if (!why.empty()) {
            if (excluded != nullptr) {
                excluded->push_back(fmt::format("{}: {}", offer->id, why));
            }
            continue;
        }
        if (std::optional<OfferQuote> quote = make_quote(catalog, workload, *offer, acquisition, true)) {
            quotes.push_back(std::move(*quote));
        } else if (excluded != nullptr && offer->kind == OfferKind::rental) {
            excluded->push_back(fmt::format("{}: no {} price{}", offer->id, to_string(acquisition),
                                            workload.constraints.regions.empty() ? "" : " in constraints.regions"));
        }
    }
    const auto per_gpu = [](const OfferQuote& quote) { return quote.price.usd / quote.offer->gpus_per_unit; };
    std::stable_sort(quotes.begin(), quotes.end(), [&](const OfferQuote& a, const OfferQuote& b) {
        if (per_gpu(a) != per_gpu(b)) {
            return per_gpu(a) < per_gpu(b);
        }
        return a.offer->gpus_per_unit < b.offer->gpus_per_unit;
    });
    return quotes;
}

std::optional<OfferQuote> quote_offer(const Catalog& catalog, const Workload& workload, const Offer& offer,
                                      Acquisition acquisition) {
    return make_quote(catalog, workload, offer, acquisition, false);
}

int units_for(const Offer& offer, int gpus) {
    return std::max(1, (gpus + offer.gpus_per_unit - 1) / offer.gpus_per_unit);
}

int hosts_for(const Offer& offer, const HostOffer& host, int units) {
    const int gpus = units * offer.gpus_per_unit;
    return std::max(1, (gpus + host.slots - 1) / host.slots);
}

std::optional<double> reference_rent_usd_per_gpu_hour(const Catalog& catalog, const Workload& workload,
                                                      const GpuSpec& gpu) {
    std::optional<double> best;
    for (const OfferQuote& quote : quotes_for(catalog, workload, gpu, Acquisition::cloud_on_demand)) {
        const double per_gpu = quote.price.usd / quote.offer->gpus_per_unit;
        if (!best || per_gpu < *best) {
            best = per_gpu;
        }
    }
    return best;
}

std::string price_text(const PricePoint& price, OfferKind kind) {
    const std::string marker = price.kind == PriceKind::estimate ? "~" : "";
    if (kind == OfferKind::rental) {
        return fmt::format("{}${:.2f}/h", marker, price.usd);
    }
    return marker + format_usd(price.usd);
}

std::string zone_range_text(const PricePoint& price) {
    if (price.zones_usd.size() < 2) {
        return {};
    }
    return fmt::format(" median of {} zones, ${:.2f}–{:.2f}", price.zones_usd.size(), price.zones_usd.front(),
                       price.zones_usd.back());
}

std::string order_text(const OfferQuote& quote, int units) {
    const Offer& offer = *quote.offer;
    const std::string provider = quote.provider_name.empty() ? offer.provider : quote.provider_name;
    if (offer.kind == OfferKind::rental) {
        std::string where = provider;
        if (!quote.region.empty() && quote.region != "any") {
            where += " " + quote.region;
        }
        const char* term = quote.acquisition == Acquisition::cloud_spot             ? "spot"
                           : quote.acquisition == Acquisition::cloud_reserved       ? "reserved 1y"
                           : quote.acquisition == Acquisition::cloud_reserved_3y    ? "reserved 3y"
                           : quote.acquisition == Acquisition::cloud_capacity_block ? "capacity block"
                                                                                    : "on-demand";
        return fmt::format("{} × {} ({} × {}), {}, {} {}{}", units, offer.instance_type, units * offer.gpus_per_unit,
                           offer.gpu, where, term, price_text(quote.price, offer.kind), zone_range_text(quote.price));
    }
    return fmt::format("{} × {} ({}, {} {}{})", units, offer.name, provider, to_string(quote.price.kind),
                       quote.price.as_of,
                       offer.gpus_per_unit > 1 ? fmt::format(", {} GPUs each", offer.gpus_per_unit) : "");
}

}  // namespace gpusel
