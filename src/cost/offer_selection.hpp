#pragma once
// Which offers a workload may use, and at what price: the bridge from the catalog's offers to
// the cost model. Pure.

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// One way to acquire GPUs of one offer: the offer and the one price of it that `acquisition`
// uses (a rental's cheapest allowed region).
struct OfferQuote {
    const Offer* offer = nullptr;
    Acquisition acquisition = Acquisition::buy_new;
    std::string region;               // rental: where the price holds ("any" when everywhere); purchase: ""
    PricePoint price;                 // USD per unit (purchase) or per unit-hour (rental)
    const HostOffer* host = nullptr;  // the host a card or baseboard needs; nullptr when none
    ProviderTier tier = ProviderTier::none;
    std::string provider_name;
    bool estimated() const {
        return price.kind == PriceKind::estimate || (host != nullptr && host->price.kind == PriceKind::estimate);
    }
};

// Months between two YYYY-MM dates (to − from); 0 when either is malformed.
int months_between(const std::string& from, const std::string& to);

// Whether owned hardware of the workload may run at `site`: deployment.site when given; else
// edge deployments at the edge, production serving (inference roles) in a data centre, and
// development and training in a data centre or an office (a desk-side card).
bool workload_may_run_at(const Workload& workload, Site site);

// Why the workload's constraints exclude `offer` for `acquisition` (provider and tier lists,
// regions, site, estimates, age against the catalog's as_of; for spot also the offer's
// availability and constraints.max_spot_age); empty when they do not.
std::string offer_exclusion(const Workload& workload, const Catalog& catalog, const Offer& offer,
                            Acquisition acquisition);

// Every quote for acquiring `gpu` as `acquisition` within the workload's constraints, one per
// offer, cheapest per GPU first (ties: fewer GPUs per unit, then file order). `excluded`, when
// given, receives one reason per offer of the GPU that was left out.
std::vector<OfferQuote> quotes_for(const Catalog& catalog, const Workload& workload, const GpuSpec& gpu,
                                   Acquisition acquisition, std::vector<std::string>* excluded = nullptr);

// The quote of one named offer for `acquisition`, ignoring the workload's provider lists (a
// proposal that names its offer); absent when the offer has no such price.
std::optional<OfferQuote> quote_offer(const Catalog& catalog, const Workload& workload, const Offer& offer,
                                      Acquisition acquisition);

// Units of `offer` that hold `gpus` GPUs: ⌈gpus / gpus_per_unit⌉.
int units_for(const Offer& offer, int gpus);

// Hosts needed for `units` units of `offer` with `host`: ⌈units × gpus_per_unit / slots⌉.
int hosts_for(const Offer& offer, const HostOffer& host, int units);

// The lowest on-demand price per GPU-hour of `gpu` among the rentals the workload may use, for
// "what would renting the same GPU-hours cost"; absent when none is offered.
std::optional<double> reference_rent_usd_per_gpu_hour(const Catalog& catalog, const Workload& workload,
                                                      const GpuSpec& gpu);

// "$55.04/h" or "~$3,000,000": a price with its unit, marked as estimated when it is.
std::string price_text(const PricePoint& price, OfferKind kind);

// " median of 4 zones, $2.47–8.19" for a price given per zone (zones_usd); "" for one price.
std::string zone_range_text(const PricePoint& price);

// An order line: "2 × p5.48xlarge (16 × H100-SXM5), AWS us-east-1, on-demand $55.04/h" or
// "1 × HGX H100 8-GPU server (Thinkmate, quote 2024-08)".
std::string order_text(const OfferQuote& quote, int units);

}  // namespace gpusel
