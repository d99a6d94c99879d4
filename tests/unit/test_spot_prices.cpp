#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cost/offer_selection.hpp"
#include "inputs/workload.hpp"
#include "support/test_support.hpp"

using gpusel::Acquisition;
using gpusel::Catalog;
using gpusel::OfferQuote;
using gpusel::Workload;
using gpusel::test::catalog;
using gpusel::test::input_errors;

namespace {

Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", gpusel::LoadContext{&catalog(), &gpusel::test::models()});
}

const gpusel::GpuSpec& gpu(const std::string& id) {
    const gpusel::GpuSpec* spec = catalog().find(id);
    REQUIRE(spec != nullptr);
    return *spec;
}

const OfferQuote* quote_of(const std::vector<OfferQuote>& quotes, const std::string& offer_id) {
    for (const OfferQuote& quote : quotes) {
        if (quote.offer->id == offer_id) {
            return &quote;
        }
    }
    return nullptr;
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// A training job on AWS us-east-1 that may rent spot, with spot prices up to `age` old ("" =
// the default).
std::string aws_training(const std::string& age) {
    return R"(name: pretrain
kind: training
model: {preset: llama-3.2-3b}
training: {micro_batch: 4, seq_len: 2048, dataset_tokens: 300B, deadline: 60d}
deployment: {target: cloud}
constraints: {providers: [aws], regions: [us-east-1])" +
           (age.empty() ? std::string() : ", max_spot_age: " + age) + "}\n";
}

const char* gpu_entry = R"(format: 1
as_of: 2026-12
gpus:
  - id: TEST-1
    name: Test GPU
    vendor: nvidia
    architecture: ampere
    segment: datacenter
    form_factor: pcie
    memory: 24GB
    memory_bandwidth: 600GB/s
    dense_tflops: {fp32: 30, bf16: 120, fp16: 120}
    power: 150W
    host_link: pcie4x16
    sources: [x]
)";

std::string rental_with_spot(const std::string& spot) {
    return R"(format: 2
providers:
  - {id: cloudy, name: Cloudy, kind: cloud, tier: hyperscaler}
rental:
  - id: cloudy/x1
    provider: cloudy
    instance_type: x1
    gpu: TEST-1
    gpus: 1
    price_kind: list
    as_of: 2026-10
    sources: [x]
    prices:
      - {region: r1, on_demand: 10, spot: )" +
           spot + "}\n";
}

}  // namespace

TEST_CASE("offer: median_of the zone prices", "[catalog][offers][spot]") {
    CHECK(gpusel::median_of({}) == 0);
    CHECK(gpusel::median_of({3}) == 3);
    CHECK(gpusel::median_of({9, 1, 5}) == 5);
    // Even count: the mean of the middle two; AWS p4d.24xlarge us-east-1 (docs/reference/offers.md §2.4).
    CHECK(gpusel::median_of({8.1915, 2.4655, 8.1203, 7.8799}) == Approx((7.8799 + 8.1203) / 2));
}

TEST_CASE("catalog: a spot price given per zone ranks on their median and keeps them all", "[catalog][offers][spot]") {
    Catalog loaded;
    gpusel::merge_catalog_text(loaded, gpu_entry, "c.yaml");
    gpusel::merge_catalog_text(loaded, rental_with_spot("{zones: [4, 1, 3, 2.5]}"), "o.yaml");
    const gpusel::Offer* offer = loaded.find_offer("cloudy/x1");
    REQUIRE(offer != nullptr);
    REQUIRE(offer->rates.front().spot);
    const gpusel::PricePoint& spot = *offer->rates.front().spot;
    CHECK(spot.zones_usd == std::vector<double>{1, 2.5, 3, 4});
    CHECK(spot.usd == 2.75);
    CHECK(spot.as_of == "2026-10");  // inherited from the offer, as a bare price would be
    CHECK(gpusel::zone_range_text(spot) == " median of 4 zones, $1.00–4.00");
    // One price: no range.
    Catalog single;
    gpusel::merge_catalog_text(single, gpu_entry, "c.yaml");
    gpusel::merge_catalog_text(single, rental_with_spot("2"), "o.yaml");
    CHECK(single.find_offer("cloudy/x1")->rates.front().spot->zones_usd.empty());
    CHECK(gpusel::zone_range_text(*single.find_offer("cloudy/x1")->rates.front().spot).empty());
}

TEST_CASE("catalog: spot zones errors name the field", "[catalog][offers][spot]") {
    const auto errors = [](const std::string& spot) {
        Catalog loaded;
        gpusel::merge_catalog_text(loaded, gpu_entry, "c.yaml");
        return input_errors([&] { gpusel::merge_catalog_text(loaded, rental_with_spot(spot), "o.yaml"); });
    };
    CHECK(errors("{price: 2, zones: [1, 3]}") ==
          std::vector<std::string>{"o.yaml:14:51: rental[0].prices[0].spot.price: give price or zones, not both "
                                   "(with zones the price is their median)"});
    CHECK(errors("{zones: 2}") == std::vector<std::string>{"o.yaml:14:51: rental[0].prices[0].spot.zones: expected a "
                                                           "list of the zones' prices, at least one"});
    CHECK(errors("{zones: [1, 0]}") ==
          std::vector<std::string>{"o.yaml:14:55: rental[0].prices[0].spot.zones[1]: '0' must be greater than zero"});
}

TEST_CASE("offers: p4d.24xlarge spot ranks on the median of its four us-east-1 zones, not the lowest",
          "[offers][spot]") {
    // data/offers.yaml, from skypilot-catalog aws/vms.csv @00148f2 (docs/reference/offers.md §2.4):
    // use1-az1 2.4655, az6 7.8799, az4 8.1203, az2 8.1915; median (7.8799 + 8.1203) / 2 = 8.0001.
    const Workload workload = load(aws_training("24mo"));
    const std::vector<OfferQuote> quotes =
        gpusel::quotes_for(catalog(), workload, gpu("A100-40GB-SXM4"), Acquisition::cloud_spot);
    const OfferQuote* p4d = quote_of(quotes, "aws/p4d.24xlarge");
    REQUIRE(p4d != nullptr);
    CHECK(p4d->region == "us-east-1");
    CHECK(p4d->price.usd == Approx(8.0001));
    CHECK(p4d->price.zones_usd == std::vector<double>{2.4655, 7.8799, 8.1203, 8.1915});
    CHECK(gpusel::order_text(*p4d, 2) ==
          "2 × p4d.24xlarge (16 × A100-40GB-SXM4), Amazon Web Services us-east-1, spot $8.00/h median of 4 zones, "
          "$2.47–8.19");
}

TEST_CASE("offers: spot prices older than constraints.max_spot_age do not rank, and say why", "[offers][spot]") {
    // The built-in catalog is dated 2026-12; AWS spot figures 2025-12: 12 months, over the default 3.
    const Workload workload = load(aws_training(""));
    CHECK(workload.constraints.max_spot_age_months == 3);
    std::vector<std::string> excluded;
    const std::vector<OfferQuote> quotes =
        gpusel::quotes_for(catalog(), workload, gpu("A100-40GB-SXM4"), Acquisition::cloud_spot, &excluded);
    CHECK(quote_of(quotes, "aws/p4d.24xlarge") == nullptr);
    CHECK(has(excluded, "aws/p4d.24xlarge: spot price dated 2025-12 is 12 months old (constraints.max_spot_age)"));
    // On-demand is not a market price: max_offer_age (36 months) still governs it.
    CHECK(quote_of(gpusel::quotes_for(catalog(), workload, gpu("A100-40GB-SXM4"), Acquisition::cloud_on_demand),
                   "aws/p4d.24xlarge") != nullptr);
    // 12 months allowed: it ranks; 11 months: it does not.
    CHECK(quote_of(
              gpusel::quotes_for(catalog(), load(aws_training("12mo")), gpu("A100-40GB-SXM4"), Acquisition::cloud_spot),
              "aws/p4d.24xlarge") != nullptr);
    CHECK(quote_of(
              gpusel::quotes_for(catalog(), load(aws_training("11mo")), gpu("A100-40GB-SXM4"), Acquisition::cloud_spot),
              "aws/p4d.24xlarge") == nullptr);
}

TEST_CASE("offers: a quota-gated instance rents on demand but never ranks as spot", "[offers][spot]") {
    // p6-b200.48xlarge launched as Capacity Blocks only (gpueconomics.com); its one spot figure is
    // one AZ of an undated snapshot at 0.18 of on-demand.
    const gpusel::Offer* p6 = catalog().find_offer("aws/p6-b200.48xlarge");
    REQUIRE(p6 != nullptr);
    CHECK(p6->availability == gpusel::Availability::quota_gated);
    const Workload workload = load(aws_training("36mo"));
    std::vector<std::string> excluded;
    CHECK(quote_of(gpusel::quotes_for(catalog(), workload, gpu("B200"), Acquisition::cloud_spot, &excluded),
                   "aws/p6-b200.48xlarge") == nullptr);
    CHECK(has(excluded,
              "aws/p6-b200.48xlarge: p6-b200.48xlarge: quota-gated (on-demand after a quota grant); its spot price "
              "does not rank"));
    const std::vector<OfferQuote> on_demand =
        gpusel::quotes_for(catalog(), workload, gpu("B200"), Acquisition::cloud_on_demand);
    const OfferQuote* rented = quote_of(on_demand, "aws/p6-b200.48xlarge");
    REQUIRE(rented != nullptr);
    CHECK(rented->price.usd == Approx(113.9328));
}
