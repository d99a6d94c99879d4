#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "base/text.hpp"
#include "catalog/catalog.hpp"
#include "support/test_support.hpp"

using gpusel::Catalog;
using gpusel::Precision;
using gpusel::test::input_errors;

namespace {
const char* minimal_entry = R"(format: 1
as_of: 2026-11
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
    price: {new: 3000USD, as_of: 2026-09}
    cloud: {on_demand: 1.2USD/h, as_of: 2026-09}
    sources: [datasheet]
)";
const char* offers_text = R"(format: 2
providers:
  - {id: acme, name: Acme Servers, kind: vendor}
  - {id: cloudy, name: Cloudy GPU, kind: cloud, tier: neocloud}
purchase:
  - id: acme-box-2024
    vendor: acme
    gpu: TEST-1
    name: Acme 4-GPU box
    gpus: 4
    form: server
    price: 20000USD
    price_kind: quote
    as_of: 2024-01
    sources: [quote 17]
rental:
  - id: cloudy/x8
    provider: cloudy
    instance_type: x8
    gpu: TEST-1
    gpus: 8
    price_kind: list
    as_of: 2026-10
    sources: [cloudy.example/pricing]
    prices:
      - {region: us-east-1, on_demand: 24, spot: 30}
      - region: eu-west-1
        on_demand: 26
        reserved_1y: {price: 15, price_kind: estimate, as_of: 2026-10, source: contract 4711}
)";
}  // namespace

TEST_CASE("catalog::merge_catalog_text reads every field with units", "[catalog]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    REQUIRE(catalog.gpus().size() == 1);
    const gpusel::GpuSpec& gpu = catalog.gpus().front();
    CHECK(gpu.memory_bytes == 24e9);
    CHECK(gpu.memory_bandwidth_bytes_per_s == 600e9);
    CHECK(gpu.peak_flops_per_s(Precision::bf16) == 120e12);
    CHECK_FALSE(gpu.supports(Precision::fp8));
    CHECK(gpu.power_watts == 150);
    CHECK(gpu.host_link_generation == 4);
    CHECK(gpu.host_link_bytes_per_s() == Approx(31.52e9));
    CHECK(catalog.find("test-1") == &gpu);
    // The format-1 price blocks become estimated offers of one GPU.
    const gpusel::Offer* bought = catalog.find_offer("TEST-1/legacy-new");
    REQUIRE(bought != nullptr);
    CHECK(bought->price->usd == 3000);
    CHECK(bought->price->kind == gpusel::PriceKind::estimate);
    CHECK(bought->gpus_per_unit == 1);
    CHECK(bought->legacy);
    const gpusel::Offer* rented = catalog.find_offer("TEST-1/legacy-cloud");
    REQUIRE(rented != nullptr);
    REQUIRE(rented->rates.size() == 1);
    CHECK(rented->rates.front().on_demand->usd == 1.2);
}

TEST_CASE("catalog::merge_catalog_text overrides an entry field by field", "[catalog]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    gpusel::merge_catalog_text(catalog, "format: 1\ngpus:\n  - id: test-1\n    price: {new: 2500USD}\n", "quote.yaml");
    REQUIRE(catalog.gpus().size() == 1);
    CHECK(catalog.gpus().front().id == "TEST-1");
    CHECK(catalog.find_offer("TEST-1/legacy-new")->price->usd == 2500);
    CHECK(catalog.gpus().front().memory_bytes == 24e9);
}

TEST_CASE("catalog::merge_catalog_text reports every problem with its position", "[catalog]") {
    Catalog catalog;
    const std::string bad = R"(format: 1
gpus:
  - id: BAD
    name: Bad
    vendor: nvidia
    architecture: ampere
    segment: server
    form_factor: pcie
    memory: 24 GB/s
    memory_bandwidth: -5GB/s
    dense_tflops: {fp32: 30, fp16: 20, bf61: 1}
    power: 150W
    host_link: pcie4x32
    sources: []
  - id: BAD
)";
    CHECK(input_errors([&] { gpusel::merge_catalog_text(catalog, bad, "c.yaml"); }) ==
          std::vector<std::string>{
              "c.yaml:7:14: gpus[0].segment: 'server' is not one of datacenter, workstation, consumer, edge",
              "c.yaml:9:13: gpus[0].memory: '24 GB/s' has an unknown unit 'GB/s'; expected a size such as 80GB, 24GiB "
              "or 512MiB (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
              "c.yaml:10:23: gpus[0].memory_bandwidth: '-5GB/s' is negative; expected a bandwidth such as 2TB/s or "
              "900GB/s",
              "c.yaml:11:36: gpus[0].dense_tflops.fp16: fp16 throughput is below fp32; dense tensor rates are at least "
              "the fp32 rate",
              "c.yaml:11:40: gpus[0].dense_tflops.bf61: unknown field 'bf61', did you mean 'bf16'?",
              "c.yaml:13:16: gpus[0].host_link: 'pcie4x32' is not a host link; write e.g. pcie4x16",
              "c.yaml:14:14: gpus[0].sources: at least one source is required",
              "c.yaml:15:9: gpus[1].id: duplicate id 'BAD' in this file",
          });
    CHECK(catalog.gpus().empty());  // nothing merged from an invalid file
}

TEST_CASE("catalog::builtin_catalog has every fixed id, sources and sane figures", "[catalog]") {
    const Catalog catalog = gpusel::builtin_catalog();
    const std::vector<std::string> ids = {"V100-SXM2-16GB",
                                          "V100-SXM2-32GB",
                                          "V100-PCIE-16GB",
                                          "V100-PCIE-32GB",
                                          "T4",
                                          "A10",
                                          "A10G",
                                          "A30",
                                          "A40",
                                          "A100-40GB-SXM4",
                                          "A100-80GB-SXM4",
                                          "A100-40GB-PCIE",
                                          "A100-80GB-PCIE",
                                          "H100-SXM5",
                                          "H100-PCIE",
                                          "H100-NVL",
                                          "H200-SXM",
                                          "H200-NVL",
                                          "H20",
                                          "L4",
                                          "L40",
                                          "L40S",
                                          "B200",
                                          "GB200",
                                          "RTX-A6000",
                                          "RTX-6000-ADA",
                                          "RTX-PRO-6000",
                                          "RTX-3090",
                                          "RTX-3090-TI",
                                          "RTX-4080",
                                          "RTX-4080-SUPER",
                                          "RTX-4090",
                                          "RTX-5090",
                                          "JETSON-AGX-ORIN-32GB",
                                          "JETSON-AGX-ORIN-64GB",
                                          "JETSON-ORIN-NX-16GB",
                                          "JETSON-ORIN-NANO-8GB",
                                          "MI210",
                                          "MI250X",
                                          "MI300X",
                                          "MI325X",
                                          "MI350X",
                                          "MI355X",
                                          "B300",
                                          "GB300",
                                          "RTX-PRO-6000-SE",
                                          "GAUDI2",
                                          "GAUDI3"};
    CHECK(catalog.gpus().size() >= ids.size());
    for (const std::string& id : ids) {
        INFO(id);
        const gpusel::GpuSpec* gpu = catalog.find(id);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->id == id);
        CHECK_FALSE(gpu->sources.empty());
        CHECK(gpu->memory_bytes > 0);
        CHECK(gpu->memory_bandwidth_bytes_per_s > 0);
        CHECK(gpu->supports(Precision::fp32));
    }
}

TEST_CASE("catalog::builtin_catalog encodes native precision support per architecture", "[catalog]") {
    const Catalog catalog = gpusel::builtin_catalog();
    const auto supports = [&](const char* id, Precision precision) { return catalog.find(id)->supports(precision); };
    // Volta and Turing: no BF16, no TF32 (A100 whitepaper; TensorRT support matrix).
    for (const char* id : {"V100-SXM2-16GB", "V100-PCIE-32GB", "T4"}) {
        INFO(id);
        CHECK_FALSE(supports(id, Precision::bf16));
        CHECK_FALSE(supports(id, Precision::tf32));
        CHECK_FALSE(supports(id, Precision::fp8));
    }
    // Ampere: BF16 and TF32, no FP8.
    for (const char* id : {"A100-40GB-SXM4", "A100-80GB-PCIE", "A10", "RTX-3090"}) {
        INFO(id);
        CHECK(supports(id, Precision::bf16));
        CHECK_FALSE(supports(id, Precision::fp8));
    }
    // Ada has BF16, TF32 and FP8.
    for (const char* id : {"RTX-4090", "L4", "L40S", "RTX-6000-ADA"}) {
        INFO(id);
        CHECK(supports(id, Precision::bf16));
        CHECK(supports(id, Precision::tf32));
        CHECK(supports(id, Precision::fp8));
    }
    // Hopper and Blackwell: no INT4 tensor path.
    for (const char* id : {"H100-SXM5", "H200-SXM", "B200", "RTX-5090"}) {
        INFO(id);
        CHECK(supports(id, Precision::fp8));
        CHECK_FALSE(supports(id, Precision::int4));
    }
    // Blackwell Ultra keeps INT8 only at a sliver of its FP8 rate (data/gpu_catalog.yaml B300 and
    // GB300 notes: about 1/30), and its FP4 is NVIDIA's dense figure, not half the sparse one.
    for (const char* id : {"B300", "GB300"}) {
        INFO(id);
        const gpusel::GpuSpec& gpu = *catalog.find(id);
        CHECK(gpu.compute_capability == "10.3");
        CHECK(gpu.peak_flops_per_s(Precision::int8) * 25 < gpu.peak_flops_per_s(Precision::fp8));
        CHECK(gpu.peak_flops_per_s(Precision::fp4) == Approx(3 * gpu.peak_flops_per_s(Precision::fp8)));
        CHECK_FALSE(supports(id, Precision::int4));
    }
    // CDNA 4: FP4/FP6 at twice FP8, no TF32 matrix type; 256 CUs × 8,192 FP8 FLOP/clock × 2.4 GHz.
    for (const char* id : {"MI350X", "MI355X"}) {
        INFO(id);
        CHECK(supports(id, Precision::fp4));
        CHECK_FALSE(supports(id, Precision::tf32));
        CHECK(catalog.find(id)->peak_flops_per_s(Precision::fp4) ==
              Approx(2 * catalog.find(id)->peak_flops_per_s(Precision::fp8)).epsilon(1e-4));
    }
    CHECK(catalog.find("MI355X")->peak_flops_per_s(Precision::fp8) == Approx(256.0 * 8192 * 2.4e9).epsilon(1e-4));
    // GeForce BF16 is the FP32-accumulate rate: RTX 4090 165.2 dense (Ada whitepaper, appendix A).
    CHECK(catalog.find("RTX-4090")->peak_flops_per_s(Precision::bf16) == Approx(165.2e12));
    CHECK(catalog.find("H100-SXM5")->peak_flops_per_s(Precision::bf16) == Approx(989.5e12).epsilon(0.001));
}

TEST_CASE("catalog::audit_catalog warns about stale, converted and dubious prices", "[catalog]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    gpusel::merge_catalog_text(catalog, offers_text, "offers.yaml");
    std::vector<std::string> messages;
    for (const gpusel::CatalogWarning& warning : gpusel::audit_catalog(catalog)) {
        messages.push_back(warning.id + ": " + warning.message);
    }
    CHECK(messages ==
          std::vector<std::string>{
              "TEST-1/legacy-new: format-1 price converted to an estimated offer of one GPU; describe the "
              "real unit under purchase: or rental: (docs/catalog.md)",
              "TEST-1/legacy-cloud: format-1 price converted to an estimated offer of one GPU; describe the "
              "real unit under purchase: or rental: (docs/catalog.md)",
              "acme-box-2024: price dated 2024-01 is more than a year older than the catalog (2026-11)",
              "cloudy/x8: spot $30.00/h in us-east-1 is not below on-demand $24.00/h; the spot price is "
              "ignored"});
}

TEST_CASE("catalog: format-2 offers load with their units, prices and provenance", "[catalog][offers]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    gpusel::merge_catalog_text(catalog, offers_text, "offers.yaml");
    const gpusel::Offer* box = catalog.find_offer("ACME-BOX-2024");
    REQUIRE(box != nullptr);
    CHECK(box->kind == gpusel::OfferKind::purchase);
    CHECK(box->gpus_per_unit == 4);
    CHECK(box->form == gpusel::UnitForm::server);
    CHECK(box->price->usd == 20000);
    CHECK(box->price->kind == gpusel::PriceKind::quote);
    CHECK(box->price->as_of == "2024-01");
    CHECK(box->price->sources == std::vector<std::string>{"quote 17"});
    const gpusel::Offer* rental = catalog.find_offer("cloudy/x8");
    REQUIRE(rental != nullptr);
    CHECK(rental->instance_type == "x8");
    REQUIRE(rental->rates.size() == 2);
    CHECK(rental->rates[0].on_demand->usd == 24);
    CHECK(rental->rates[0].on_demand->kind == gpusel::PriceKind::list);
    // A price of its own: kind, date and source.
    CHECK(rental->rates[1].reserved_1y->usd == 15);
    CHECK(rental->rates[1].reserved_1y->kind == gpusel::PriceKind::estimate);
    CHECK(rental->rates[1].reserved_1y->as_of == "2026-10");
    CHECK(rental->rates[1].reserved_1y->sources == std::vector<std::string>{"contract 4711"});
    CHECK(catalog.find_provider("cloudy")->tier == gpusel::ProviderTier::neocloud);
    CHECK(catalog.offers_for("test-1").size() == 4);  // two converted, two above
}

TEST_CASE("catalog: offer errors name the field and its position", "[catalog][offers]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    const std::string bad = R"(format: 2
providers:
  - {id: acme, name: Acme, kind: vendor}
  - {id: cloudy, name: Cloudy, kind: cloud}
purchase:
  - id: box
    vendor: acme
    gpu: TEST-2
    name: Box
    gpus: 0
    form: crate
    price: 0USD
    price_kind: guess
    as_of: 2026-13
    sources: [x]
rental:
  - id: r1
    provider: acme
    instance_type: r1
    gpu: TEST-1
    gpus: 1
    price_kind: list
    as_of: 2026-10
    sources: [x]
    prices: [{region: any}]
)";
    CHECK(input_errors([&] { gpusel::merge_catalog_text(catalog, bad, "bad.yaml"); }) ==
          std::vector<std::string>{
              "bad.yaml:4:38: providers[1].kind: a cloud needs a tier: hyperscaler, neocloud or marketplace",
              "bad.yaml:8:10: purchase[0].gpu: unknown GPU 'TEST-2'; did you mean 'TEST-1'?",
              "bad.yaml:10:11: purchase[0].gpus: '0' is out of range; expected 1 to 1024",
              "bad.yaml:11:11: purchase[0].form: 'crate' is not one of card, baseboard, server, rack, module",
              "bad.yaml:12:12: purchase[0].price: '0USD' must be greater than zero",
              "bad.yaml:13:17: purchase[0].price_kind: 'guess' is not one of list, msrp, quote, street, reported, "
              "estimate",
              "bad.yaml:14:12: purchase[0].as_of: '2026-13' is not a month; write YYYY-MM, e.g. 2026-09",
              "bad.yaml:18:15: rental[0].provider: 'acme' is a vendor; rental offers need a cloud",
              "bad.yaml:25:23: rental[0].prices[0].region: no price in this region: give on_demand, spot, "
              "reserved_1y, reserved_3y or capacity_block, or set the offer's availability"});
    CHECK(catalog.offers().size() == 2);  // the failed merge changed nothing
}

TEST_CASE("catalog: a duplicate or invalid offer id is one error and the entry's fields are still read",
          "[catalog][offers]") {
    // Returning at the id made every later field of the entry an "unknown field" (issue 38).
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    const std::string bad = R"(format: 2
providers:
  - {id: cloudy, name: Cloudy, kind: cloud, tier: neocloud}
  - {id: cloudy, name: Again, kind: cloud, tier: neocloud}
rental:
  - id: cloudy/r1
    provider: cloudy
    instance_type: r1
    gpu: TEST-1
    gpus: 1
    price_kind: list
    as_of: 2026-10
    sources: [x]
    prices: [{region: any, on_demand: 2}]
  - id: CLOUDY/R1
    provider: cloudy
    instance_type: r1
    gpu: TEST-1
    gpus: 0
    price_kind: list
    as_of: 2026-10
    sources: [x]
    prices: [{region: any, on_demand: 2}]
  - id: cloudy/r 2
    provider: cloudy
    instance_type: r 2
    gpu: TEST-1
    gpus: 1
    price_kind: list
    as_of: 2026-10
    sources: [x]
    prices: [{region: any, on_demand: 2}]
)";
    CHECK(
        input_errors([&] { gpusel::merge_catalog_text(catalog, bad, "bad.yaml"); }) ==
        std::vector<std::string>{
            "bad.yaml:4:10: providers[1].id: duplicate id 'cloudy' in this file",
            "bad.yaml:15:9: rental[1].id: duplicate id 'CLOUDY/R1' in this file",
            "bad.yaml:19:11: rental[1].gpus: '0' is out of range; expected 1 to 1024",  // read, not unknown
            "bad.yaml:24:9: rental[2].id: 'cloudy/r 2' is not a valid id; use letters, digits, '-', '_', '.' and '/'"});
}

TEST_CASE("catalog: host vCPUs per GPU are the median over the offers that publish them", "[catalog][offers]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    CHECK(catalog.find("TEST-1")->host_vcpus_per_gpu == 0);  // the legacy offers publish none
    CHECK(catalog.find("TEST-1")->host_vcpus_offers == 0);
    gpusel::merge_catalog_text(catalog, R"(format: 2
providers:
  - {id: acme, name: Acme, kind: vendor}
  - {id: cloudy, name: Cloudy, kind: cloud, tier: neocloud}
hosts:
  - {id: box8, name: 8-slot box, slots: 8, vcpus: 64, price: 40000USD, price_kind: estimate, as_of: 2026-11,
     sources: [vCPUs from the box datasheet]}
purchase:
  - {id: card, vendor: acme, gpu: TEST-1, name: Card, gpus: 1, form: card, needs_host: box8, price: 3000USD,
     price_kind: msrp, as_of: 2026-01, sources: [list]}
rental:
  - {id: cloudy/x8, provider: cloudy, instance_type: x8, gpu: TEST-1, gpus: 8, vcpus: 96, price_kind: list,
     as_of: 2026-10, sources: [pricing page with vCPUs], prices: [{region: any, on_demand: 24}]}
  - {id: cloudy/x1, provider: cloudy, instance_type: x1, gpu: TEST-1, gpus: 1, vcpus: 16, price_kind: list,
     as_of: 2026-10, sources: [pricing page with vCPUs], prices: [{region: any, on_demand: 3}]}
)",
                               "offers.yaml");
    // 64 / 8 (the card's host), 96 / 8 and 16 / 1: the median of 8, 12 and 16.
    const gpusel::GpuSpec& gpu = *catalog.find("TEST-1");
    CHECK(gpu.host_vcpus_per_gpu == 12);
    CHECK(gpu.host_vcpus_offers == 3);
    CHECK(catalog.find_host("box8")->vcpus == 64);
    CHECK(catalog.find_offer("cloudy/x8")->vcpus == 96);
    // Out of range: a position and the range.
    CHECK(input_errors([&] {
              gpusel::merge_catalog_text(catalog, R"(format: 2
rental:
  - {id: cloudy/x0, provider: cloudy, instance_type: x0, gpu: TEST-1, gpus: 1, vcpus: 0, price_kind: list,
     as_of: 2026-10, sources: [x], prices: [{region: any, on_demand: 3}]}
)",
                                         "bad.yaml");
          }) == std::vector<std::string>{"bad.yaml:3:87: rental[0].vcpus: '0' is out of range; expected 1 to 65536"});
}

TEST_CASE("catalog: a host's power and a system's power load in watts and are checked", "[catalog][offers]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");  // TEST-1: 150 W boards
    gpusel::merge_catalog_text(catalog, R"(format: 2
providers:
  - {id: acme, name: Acme, kind: vendor}
hosts:
  - {id: box8, name: 8-slot box, slots: 8, power: 1.1kW, price: 40000USD, price_kind: estimate, as_of: 2026-11,
     sources: [parts list]}
purchase:
  - {id: server, vendor: acme, gpu: TEST-1, name: Server, gpus: 8, form: server, system_power: 3000W,
     price: 90000USD, price_kind: list, as_of: 2026-01, sources: [datasheet]}
)",
                               "offers.yaml");
    CHECK(catalog.find_host("box8")->power_watts == 1100);
    CHECK(catalog.find_offer("server")->system_power_watts == 3000);
    // A card has no system power; a system draws at least its boards (8 x 150 W = 1,200 W).
    CHECK(input_errors([&] {
              gpusel::merge_catalog_text(catalog, R"(format: 2
purchase:
  - {id: card, vendor: acme, gpu: TEST-1, name: Card, gpus: 1, form: card, system_power: 500W, price: 3000USD,
     price_kind: msrp, as_of: 2026-01, sources: [list]}
  - {id: small, vendor: acme, gpu: TEST-1, name: Small, gpus: 8, form: server, system_power: 1000W,
     price: 90000USD, price_kind: list, as_of: 2026-01, sources: [datasheet]}
)",
                                         "bad.yaml");
          }) == std::vector<std::string>{
                    "bad.yaml:3:90: purchase[0].system_power: a card has no system power of its own; give its "
                    "host's power under hosts: (power)",
                    "bad.yaml:5:94: purchase[1].system_power: 1000 W is less than its 8 GPUs' board power (8 × "
                    "150 W = 1200 W)"});
}

TEST_CASE("catalog: the built-in offers' host vCPUs per GPU", "[catalog][offers]") {
    // Independent of the loader: the median, over an A100-80GB-SXM4's offers with vcpus, of
    // vCPUs / GPUs, as data/offers.yaml gives them (p4de.24xlarge 96/8, Lambda and Azure 8-GPU
    // instances, ...): every value is checked to come from an offer of that GPU.
    const Catalog catalog = gpusel::builtin_catalog();
    for (const char* id : {"A100-80GB-SXM4", "H100-SXM5", "T4", "L4"}) {
        std::vector<double> ratios;
        for (const gpusel::Offer* offer : catalog.offers_for(id)) {
            if (offer->vcpus > 0) {
                ratios.push_back(static_cast<double>(offer->vcpus) / offer->gpus_per_unit);
            }
        }
        INFO(id);
        REQUIRE_FALSE(ratios.empty());
        std::sort(ratios.begin(), ratios.end());
        const std::size_t middle = ratios.size() / 2;
        const double median = ratios.size() % 2 == 1 ? ratios[middle] : (ratios[middle - 1] + ratios[middle]) / 2;
        CHECK(catalog.find(id)->host_vcpus_per_gpu == median);
        CHECK(catalog.find(id)->host_vcpus_offers == static_cast<int>(ratios.size()));
        CHECK(median >= 4);
        CHECK(median <= 40);
    }
}

TEST_CASE("offer: region globs", "[catalog][offers]") {
    CHECK(gpusel::region_matches("us-*", "us-east-1"));
    CHECK(gpusel::region_matches("US-*", "us-west-2"));
    CHECK_FALSE(gpusel::region_matches("us-*", "eu-west-1"));
    CHECK(gpusel::region_matches("europe-west?", "europe-west4"));
    CHECK_FALSE(gpusel::region_matches("europe-west?", "europe-west10"));
    CHECK(gpusel::region_matches("eu-west-1", "any"));
    CHECK(gpusel::region_matches("*-central*", "us-central1"));
}

TEST_CASE("precision: weight formats round-trip and count their scales in bits per weight", "[catalog][fp4]") {
    using gpusel::WeightFormat;
    for (const char* name : {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "nf4", "nf4-dq", "q4_0", "q4_k_m", "q8_0",
                             "awq", "gptq", "fp8-block", "nvfp4", "mxfp4"}) {
        const auto format = gpusel::parse_weight_format(name);
        REQUIRE(format.has_value());
        CHECK(gpusel::to_string(*format) == name);
    }
    CHECK_FALSE(gpusel::parse_weight_format("fp4").has_value());
    // NVFP4: 16 E2M1 values (64 bits) + one E4M3 scale (8 bits) = 72 bits per 16 weights.
    CHECK(gpusel::bits_per_weight(WeightFormat::nvfp4) == 4.5);
    // MXFP4: 32 E2M1 values (128 bits) + one E8M0 scale (8 bits) = 136 bits per 32 weights.
    CHECK(gpusel::bits_per_weight(WeightFormat::mxfp4) == 4.25);
    // DeepSeek-V3 FP8: 128 × 128 E4M3 values + one FP32 scale = 131,104 bits per 16,384 weights.
    CHECK(gpusel::bits_per_weight(WeightFormat::fp8_block) == 131104.0 / 16384.0);
    CHECK(gpusel::bits_per_weight(WeightFormat::fp8) == 8);
    CHECK(gpusel::is_quantized(WeightFormat::nvfp4));
    CHECK(gpusel::is_quantized(WeightFormat::mxfp4));
    CHECK_FALSE(gpusel::is_quantized(WeightFormat::fp8_block));
    CHECK(gpusel::is_fp8_format(WeightFormat::fp8_block));
    CHECK_FALSE(gpusel::is_fp8_format(WeightFormat::nvfp4));
    CHECK(gpusel::is_fp4_format(WeightFormat::mxfp4));
    CHECK_FALSE(gpusel::is_fp4_format(WeightFormat::int4));
}
