#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cost/price_sanity.hpp"
#include "inputs/cost_assumptions.hpp"

using gpusel::Catalog;
using gpusel::PriceFinding;
using gpusel::PriceSanityRules;

namespace {

// A GPU of a banded family (its id starts with H100), one of no family, a vendor and a cloud.
constexpr const char* base_catalog = R"(format: 2
as_of: 2026-11
gpus:
  - {id: H100-TEST, name: H100 test, vendor: nvidia, architecture: hopper, segment: datacenter, form_factor: pcie,
     memory: 80GiB, memory_bandwidth: 3350GB/s, dense_tflops: {fp32: 67, fp16: 990}, power: 700W,
     released: 2023-03, host_link: pcie5x16, sources: [https://example.invalid/h100]}
  - {id: CARD-TEST, name: Card test, vendor: nvidia, architecture: ada, segment: datacenter, form_factor: pcie,
     memory: 48GiB, memory_bandwidth: 864GB/s, dense_tflops: {fp32: 91, fp16: 362}, power: 350W,
     released: 2023-08, host_link: pcie4x16, sources: [https://example.invalid/card]}
providers:
  - {id: acme, name: Acme, kind: vendor}
  - {id: cloud, name: Cloud, kind: cloud, tier: neocloud}
)";

// Bands as in data/cost.yaml for H100 (25,000..41,250), ratio 1.64, five years.
PriceSanityRules rules() {
    return PriceSanityRules{1.64, 5, {{"H100", 25000, 41250}}};
}

std::string purchase(const std::string& id, const std::string& gpu, int gpus, const std::string& form, int usd,
                     const std::string& condition = "new", const std::string& notes = "") {
    return "  - {id: " + id + ", vendor: acme, gpu: " + gpu + ", name: " + id + ", gpus: " + std::to_string(gpus) +
           ", form: " + form + (form == "card" ? ", needs_host: null, sites: [office]" : "") +
           ", condition: " + condition + ", price: " + std::to_string(usd) +
           "USD, price_kind: quote, as_of: 2026-11, sources: [a quote]" + (notes.empty() ? "" : ", notes: " + notes) +
           "}\n";
}

std::vector<PriceFinding> findings(const std::string& purchases, const std::string& rentals = "") {
    Catalog catalog;
    gpusel::merge_catalog_text(
        catalog, std::string(base_catalog) + "purchase:\n" + purchases + (rentals.empty() ? "" : "rental:\n" + rentals),
        "test.yaml");
    return gpusel::price_sanity_findings(catalog, rules());
}

}  // namespace

TEST_CASE("price sanity: a new unit below a used one of the same unit, and outside its band", "[cost]") {
    // $199,000 / 8 = $24,875 per GPU against a used $288,000 / 8 = $36,000; the band's bottom is
    // $25,000 and a server's top 41,250 x 1.64 = $67,650.
    const std::vector<PriceFinding> found = findings(purchase("dgx", "H100-TEST", 8, "server", 199000) +
                                                     purchase("used-hgx", "H100-TEST", 8, "server", 288000, "used"));
    REQUIRE(found.size() == 2);
    CHECK(found[0].offer_id == "dgx");
    CHECK(found[0].rule == "new >= used");
    CHECK(found[0].message == "new $24,875 per GPU is below used used-hgx at $36,000");
    CHECK(found[1].rule == "band");
    CHECK(found[1].message == "$24,875 per GPU outside the H100 band $25,000..$67,650");
    // $329,736 / 8 = $41,217: above used, inside the band.
    CHECK(findings(purchase("dgx", "H100-TEST", 8, "server", 329736) +
                   purchase("used-hgx", "H100-TEST", 8, "server", 288000, "used"))
              .empty());
    // Another form or size is another unit: a used card does not bound a new server.
    CHECK(findings(purchase("dgx", "H100-TEST", 8, "server", 300000) +
                   purchase("used-card", "H100-TEST", 1, "card", 40000, "used"))
              .empty());
}

TEST_CASE("price sanity: a card's band has no server allowance, and notes that say why are heard", "[cost]") {
    CHECK(findings(purchase("card", "H100-TEST", 1, "card", 41250)).empty());
    const std::vector<PriceFinding> over = findings(purchase("card", "H100-TEST", 1, "card", 41251));
    REQUIRE(over.size() == 1);
    CHECK(over[0].message == "$41,251 per GPU outside the H100 band $25,000..$41,250");
    CHECK(
        findings(purchase("card", "H100-TEST", 1, "card", 41251, "new", "\"Sanity: a gold-plated edition\"")).empty());
    // No band for a GPU outside the banded families.
    CHECK(findings(purchase("card", "CARD-TEST", 1, "card", 1)).empty());
}

TEST_CASE("price sanity: a system below its cards, a purchase above five years of rent", "[cost]") {
    // 4 GPUs in a $30,000 server = $7,500 per GPU, below the $8,000 card.
    const std::vector<PriceFinding> system =
        findings(purchase("card", "CARD-TEST", 1, "card", 8000) + purchase("server", "CARD-TEST", 4, "server", 30000));
    REQUIRE(system.size() == 1);
    CHECK(system[0].offer_id == "server");
    CHECK(system[0].rule == "system >= cards");
    CHECK(system[0].message == "$7,500 per GPU is below the lowest new card, $8,000");
    // $1.60 per 8-GPU hour = $0.20 per GPU-hour; x 8,760 x 5 = $8,760 < a $9,000 card. The
    // cheapest region counts ($0.20, not $0.40).
    const std::string rental =
        "  - {id: cloud/x, provider: cloud, instance_type: x, gpu: CARD-TEST, gpus: 8, "
        "price_kind: list, as_of: 2026-11, sources: [a page], prices: [{region: a, "
        "on_demand: 3.2}, {region: b, on_demand: 1.6}]}\n";
    const std::vector<PriceFinding> rent = findings(purchase("card", "CARD-TEST", 1, "card", 9000), rental);
    REQUIRE(rent.size() == 1);
    CHECK(rent[0].rule == "rent x 5 years >= purchase");
    CHECK(rent[0].message == "$9,000 per GPU is more than 5 years of cloud/x on demand ($0.20 per GPU-hour = $8,760)");
    CHECK(findings(purchase("card", "CARD-TEST", 1, "card", 8760), rental).empty());
}
