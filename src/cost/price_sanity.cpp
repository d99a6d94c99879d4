#include "cost/price_sanity.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"

namespace gpusel {

namespace {

constexpr double hours_per_year = 8760;

bool mentions_sanity(const std::string& notes) {
    return to_lower(notes).find("sanity") != std::string::npos;
}

std::optional<double> price_per_gpu(const Offer& offer) {
    if (offer.kind != OfferKind::purchase || !offer.price || offer.gpus_per_unit < 1) {
        return std::nullopt;
    }
    return offer.price->usd / offer.gpus_per_unit;
}

bool is_system(const Offer& offer) {
    return offer.form == UnitForm::server || offer.form == UnitForm::rack;
}

const PriceBand* band_of(const std::string& gpu, const PriceSanityRules& rules) {
    const std::string id = to_lower(gpu);
    for (const PriceBand& band : rules.bands) {
        if (id.rfind(to_lower(band.family), 0) == 0) {
            return &band;
        }
    }
    return nullptr;
}

struct CheapestHour {
    double usd_per_gpu_hour = std::numeric_limits<double>::infinity();
    std::string offer_id;
};

// The cheapest on-demand GPU-hour of each GPU, over every region of every rental offer.
std::map<std::string, CheapestHour> cheapest_on_demand(const Catalog& catalog) {
    std::map<std::string, CheapestHour> cheapest;
    for (const Offer& offer : catalog.offers()) {
        if (offer.kind != OfferKind::rental || offer.gpus_per_unit < 1) {
            continue;
        }
        for (const RegionalRates& rates : offer.rates) {
            if (!rates.on_demand) {
                continue;
            }
            const double hour = rates.on_demand->usd / offer.gpus_per_unit;
            CheapestHour& best = cheapest[to_lower(offer.gpu)];
            if (hour < best.usd_per_gpu_hour) {
                best = {hour, offer.id};
            }
        }
    }
    return cheapest;
}

}  // namespace

std::vector<PriceFinding> price_sanity_findings(const Catalog& catalog, const PriceSanityRules& rules) {
    const std::map<std::string, CheapestHour> cheapest_hour = cheapest_on_demand(catalog);
    std::map<std::string, double> cheapest_card;  // by GPU: the lowest new card or module, per GPU
    for (const Offer& offer : catalog.offers()) {
        const std::optional<double> price = price_per_gpu(offer);
        if (price && offer.condition == UnitCondition::new_unit &&
            (offer.form == UnitForm::card || offer.form == UnitForm::module)) {
            const auto [entry, inserted] = cheapest_card.emplace(to_lower(offer.gpu), *price);
            entry->second = std::min(entry->second, *price);
        }
    }
    std::vector<PriceFinding> findings;
    for (const Offer& offer : catalog.offers()) {
        const std::optional<double> price = price_per_gpu(offer);
        if (!price || offer.condition != UnitCondition::new_unit || mentions_sanity(offer.notes)) {
            continue;
        }
        const std::string gpu = to_lower(offer.gpu);
        for (const Offer& used : catalog.offers()) {
            const std::optional<double> used_price = price_per_gpu(used);
            if (used_price && used.condition != UnitCondition::new_unit && to_lower(used.gpu) == gpu &&
                used.form == offer.form && used.gpus_per_unit == offer.gpus_per_unit && *price < *used_price) {
                findings.push_back({offer.id, "new >= used",
                                    fmt::format("new {} per GPU is below used {} at {}", format_usd(*price), used.id,
                                                format_usd(*used_price))});
            }
        }
        if (const PriceBand* band = band_of(offer.gpu, rules)) {
            const double top = is_system(offer) ? band->high_usd * rules.server_over_card_ratio : band->high_usd;
            if (*price < band->low_usd || *price > top) {
                findings.push_back({offer.id, "band",
                                    fmt::format("{} per GPU outside the {} band {}..{}", format_usd(*price),
                                                band->family, format_usd(band->low_usd), format_usd(top))});
            }
        }
        if (const auto card = cheapest_card.find(gpu);
            is_system(offer) && card != cheapest_card.end() && *price < card->second) {
            findings.push_back({offer.id, "system >= cards",
                                fmt::format("{} per GPU is below the lowest new card, {}", format_usd(*price),
                                            format_usd(card->second))});
        }
        if (const auto hour = cheapest_hour.find(gpu); hour != cheapest_hour.end()) {
            const double rent = hour->second.usd_per_gpu_hour * hours_per_year * rules.rent_years;
            if (rent < *price) {
                findings.push_back(
                    {offer.id, fmt::format("rent x {:g} years >= purchase", rules.rent_years),
                     fmt::format("{} per GPU is more than {:g} years of {} on demand ({} per GPU-hour = {})",
                                 format_usd(*price), rules.rent_years, hour->second.offer_id,
                                 format_usd_cents(hour->second.usd_per_gpu_hour), format_usd(rent))});
            }
        }
    }
    return findings;
}

}  // namespace gpusel
