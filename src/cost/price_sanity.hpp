#pragma once
// Price sanity rules over a catalog's purchase offers (docs/cost-model.md, "Price sanity
// rules"): prices that cannot be right, found before they rank. The same rules run in
// scripts/check_offers.py over data/offers.yaml.

#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/cost_assumptions.hpp"

namespace gpusel {

struct PriceFinding {
    std::string offer_id;  // the purchase offer flagged
    std::string rule;      // "new >= used", "band", "system >= cards", "rent x 5 years >= purchase"
    std::string message;   // the figures, per GPU, in USD
};

// Every rule broken by a purchase offer of `catalog`, in offer order, then rule order. An offer
// whose notes mention "sanity" (case-insensitive) has said why its price stands and is skipped.
// Rules, per GPU (price / GPUs per unit):
//  - new >= used: a new unit costs at least any used or refurbished unit of the same GPU, form and
//    GPUs per unit;
//  - band: a new unit of a banded family (an id starting with the band's family) costs within
//    [low, high]; a server or rack within [low, high × server_over_card_ratio];
//  - system >= cards: a new server or rack costs at least the lowest new card or module of its GPU;
//  - rent x N years >= purchase: a new unit costs at most N × 8,760 hours of the cheapest on-demand
//    hour of its GPU over the catalog's rental offers.
// Never throws.
std::vector<PriceFinding> price_sanity_findings(const Catalog& catalog, const PriceSanityRules& rules);

}  // namespace gpusel
