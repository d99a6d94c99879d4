#pragma once
// Offers for hand-made GPUs in tests: one card sold new and used (each needing a one-slot host
// of `host_usd`) and one 1-GPU rental with on-demand, spot, 1- and 3-year reserved and
// capacity-block rates, so that a cost test reads like the per-GPU arithmetic it checks. Prices
// are illustrative, not catalog data.

#include <deque>
#include <optional>
#include <string>

#include "cost/cost.hpp"

namespace gpusel::test {

struct TestPrices {
    std::optional<double> new_usd;
    std::optional<double> used_usd;
    std::optional<double> host_usd;
    std::optional<double> on_demand_usd_per_hour;
    std::optional<double> spot_usd_per_hour;
    std::optional<double> reserved_1y_usd_per_hour;
    std::optional<double> reserved_3y_usd_per_hour;
    std::optional<double> capacity_block_usd_per_hour;
};

// The quote for `acquisition` of a GPU priced by `prices`, or none when that price is absent.
// The offers live as long as the test program (a deque never moves its elements).
inline std::optional<OfferQuote> test_quote(const GpuSpec& gpu, const TestPrices& prices, Acquisition acquisition,
                                            int gpus_per_unit = 1) {
    static std::deque<Offer> offers;
    static std::deque<HostOffer> hosts;
    Offer offer;
    offer.id = gpu.id + "/test";
    offer.gpu = gpu.id;
    offer.provider = "test";
    offer.name = gpu.id + " test unit";
    offer.gpus_per_unit = gpus_per_unit;
    offer.price_kind = PriceKind::list;
    offer.as_of = "2026-09";
    OfferQuote quote;
    quote.acquisition = acquisition;
    quote.provider_name = "Test";
    const auto point = [](double usd) { return PricePoint{usd, PriceKind::list, "2026-09", {"test"}, {}}; };
    if (is_purchase(acquisition)) {
        const std::optional<double>& price = acquisition == Acquisition::buy_new ? prices.new_usd : prices.used_usd;
        if (!price) {
            return std::nullopt;
        }
        offer.kind = OfferKind::purchase;
        offer.condition = acquisition == Acquisition::buy_new ? UnitCondition::new_unit : UnitCondition::used;
        offer.price = point(*price);
        quote.price = point(*price);
        if (prices.host_usd) {
            hosts.push_back(
                HostOffer{gpu.id + "-host", "test host", gpus_per_unit, point(*prices.host_usd * gpus_per_unit), ""});
            offer.needs_host = hosts.back().id;
            quote.host = &hosts.back();
        }
    } else {
        const std::optional<double>& price =
            acquisition == Acquisition::cloud_on_demand        ? prices.on_demand_usd_per_hour
            : acquisition == Acquisition::cloud_spot           ? prices.spot_usd_per_hour
            : acquisition == Acquisition::cloud_reserved_3y    ? prices.reserved_3y_usd_per_hour
            : acquisition == Acquisition::cloud_capacity_block ? prices.capacity_block_usd_per_hour
                                                               : prices.reserved_1y_usd_per_hour;
        if (!price) {
            return std::nullopt;
        }
        offer.kind = OfferKind::rental;
        offer.instance_type = "test.1gpu";
        offer.name = offer.instance_type;
        quote.region = "any";
        quote.price = point(*price);
        quote.tier = ProviderTier::neocloud;
    }
    offers.push_back(std::move(offer));
    quote.offer = &offers.back();
    return quote;
}

// estimate_cost through test_quote, with renting on demand as the break-even reference.
inline CostEstimate test_cost(const Workload& workload, const GpuSpec& gpu, const TestPrices& prices,
                              Acquisition acquisition, UsageProfile usage,
                              std::optional<double> unit_price_usd = std::nullopt) {
    const std::optional<OfferQuote> quote = test_quote(gpu, prices, acquisition);
    if (!quote) {
        CostEstimate none;
        none.acquisition = acquisition;
        none.unavailable_reason = "no offer";
        return none;
    }
    usage.reference_rent_usd_per_gpu_hour = prices.on_demand_usd_per_hour.value_or(0);
    return estimate_cost(workload, gpu, *quote, usage, unit_price_usd);
}

}  // namespace gpusel::test
