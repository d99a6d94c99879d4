#include <catch2/catch.hpp>

#include <set>

#include "gpusel/catalog.hpp"
#include "gpusel/text.hpp"
#include "test_support.hpp"

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
              "c.yaml:10:23: gpus[0].memory_bandwidth: '-5GB/s' is negative; expected a bandwidth such as 2TB/s or 900GB/s",
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
    const std::vector<std::string> ids = {
        "V100-SXM2-16GB", "V100-SXM2-32GB", "V100-PCIE-16GB", "V100-PCIE-32GB", "T4", "A10", "A10G", "A30", "A40",
        "A100-40GB-SXM4", "A100-80GB-SXM4", "A100-40GB-PCIE", "A100-80GB-PCIE", "H100-SXM5", "H100-PCIE", "H100-NVL",
        "H200-SXM", "H200-NVL", "H20", "L4", "L40", "L40S", "B200", "GB200", "RTX-A6000", "RTX-6000-ADA",
        "RTX-PRO-6000", "RTX-3090", "RTX-3090-TI", "RTX-4080", "RTX-4080-SUPER", "RTX-4090", "RTX-5090",
        "JETSON-AGX-ORIN-32GB", "JETSON-AGX-ORIN-64GB", "JETSON-ORIN-NX-16GB", "JETSON-ORIN-NANO-8GB", "MI210",
        "MI250X", "MI300X", "MI325X", "GAUDI2", "GAUDI3"};
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
    // GeForce BF16 is the FP32-accumulate rate: RTX 4090 165.2 dense (Ada whitepaper, appendix A).
    CHECK(catalog.find("RTX-4090")->peak_flops_per_s(Precision::bf16) == Approx(165.2e12));
    CHECK(catalog.find("H100-SXM5")->peak_flops_per_s(Precision::bf16) == Approx(989.5e12).epsilon(0.001));
}

TEST_CASE("catalog::audit_catalog warns about stale and missing prices", "[catalog]") {
    Catalog catalog;
    gpusel::merge_catalog_text(catalog, minimal_entry, "c.yaml");
    gpusel::merge_catalog_text(catalog, "format: 1\ngpus:\n  - id: TEST-1\n    price: {as_of: 2024-01}\n", "old.yaml");
    const auto warnings = gpusel::audit_catalog(catalog);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].message == "price dated 2024-01 is more than a year older than the catalog (2026-11)");
}
