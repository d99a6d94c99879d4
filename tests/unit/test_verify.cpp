// Acceptance checks over real nvidia-smi -q reports and copies edited to show one defect each
// (tests/data/telemetry/SOURCES.md). The expected parts are written out here, not read from
// data/gpu_catalog.yaml, so that these tests pin the checks and not the catalog.

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "verify/verify.hpp"

using namespace gpusel;

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;  // the catalog holds capacities in GiB

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/" + name, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// NVIDIA H100 SXM5 80GB: 700 W, PCIe Gen5 x16, NVLink 4 at 900 GB/s (H100 datasheet).
GpuSpec h100_sxm5() {
    GpuSpec gpu;
    gpu.id = "H100-SXM5";
    gpu.name = "NVIDIA H100 SXM5 80GB";
    gpu.vendor = "nvidia";
    gpu.architecture = "hopper";
    gpu.compute_capability = "9.0";
    gpu.form_factor = FormFactor::sxm;
    gpu.memory_bytes = 80 * gib;
    gpu.ecc = true;
    gpu.power_watts = 700;
    gpu.host_link_generation = 5;
    gpu.host_link_lanes = 16;
    gpu.interconnect = GpuInterconnect{"nvlink4", 900e9, 8};
    return gpu;
}

// NVIDIA A100 SXM4: 400 W, PCIe Gen4 x16, NVLink 3 at 600 GB/s (A100 datasheet).
GpuSpec a100_sxm4(double memory_bytes, const std::string& id) {
    GpuSpec gpu = h100_sxm5();
    gpu.id = id;
    gpu.architecture = "ampere";
    gpu.compute_capability = "8.0";
    gpu.memory_bytes = memory_bytes;
    gpu.power_watts = 400;
    gpu.host_link_generation = 4;
    gpu.interconnect = GpuInterconnect{"nvlink3", 600e9, 8};
    return gpu;
}

std::map<std::string, CheckStatus> statuses(const GpuVerification& gpu) {
    std::map<std::string, CheckStatus> result;
    for (const CheckResult& check : gpu.checks) {
        result[check.check] = check.status;
    }
    return result;
}

const CheckResult& check(const GpuVerification& gpu, const std::string& name) {
    for (const CheckResult& c : gpu.checks) {
        if (c.check == name) {
            return c;
        }
    }
    FAIL("no check " << name);
    throw std::logic_error("unreachable");
}

Verification run(const std::string& text, const GpuSpec& expected, const std::vector<NvlinkGpu>& nvlink = {}) {
    return verify_gpus(parse_nvidia_smi_q(text, "q.txt"), nvlink, expected);
}

}  // namespace

TEST_CASE("verify: a healthy H100 SXM5 passes every check it can make", "[verify]") {
    const Verification v = run(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), h100_sxm5());
    REQUIRE(v.gpus.size() == 1);
    const GpuVerification& g = v.gpus[0];
    CHECK(g.identified_as == "H100-SXM5");
    CHECK(g.pci_device_id == 0x2330u);
    using S = CheckStatus;
    CHECK(statuses(g) == std::map<std::string, S>{{"product", S::pass},
                                                  {"memory", S::pass},
                                                  {"ecc", S::pass},
                                                  {"retired-remapped", S::pass},
                                                  {"pcie-width", S::pass},
                                                  {"pcie-generation", S::pass},
                                                  {"nvlink", S::skip},
                                                  {"power-limit", S::pass},
                                                  {"driver", S::pass}});
    CHECK(v.passed());
    CHECK(check(g, "memory").message ==
          "81559 MiB usable (79.6 GiB, -0.4 % of the catalog's 80 GiB; the driver and ECC keep the rest)");
    CHECK(check(g, "driver").message == "565.57.01 is new enough for Hopper: needs >= 520.61.05 (CUDA 11.8)");
    CHECK(check(g, "nvlink").message ==
          "link states are not in nvidia-smi -q: capture nvidia-smi nvlink -s and pass it with --nvlink, or append it "
          "to the report (the report's Fabric state is Completed, status Success)");
}

TEST_CASE("verify flags an x8 link", "[verify]") {
    const Verification v = run(fixture("derived-nvidia-smi-q-H100-SXM5-x8-link.txt"), h100_sxm5());
    const GpuVerification& g = v.gpus.at(0);
    const CheckResult& width = check(g, "pcie-width");
    CHECK(width.status == CheckStatus::fail);
    CHECK(width.observed == "x8 (max x16)");
    CHECK(width.line == 81);
    CHECK(width.message ==
          "the link runs at x8, H100-SXM5 is an x16 part: reseat the card, check the slot and riser "
          "(half the lanes is half the host bandwidth)");
    CHECK(statuses(g)["pcie-generation"] == CheckStatus::pass);
    CHECK_FALSE(v.passed());
}

TEST_CASE("verify flags ECC error counts and pending remapped rows", "[verify]") {
    const Verification derived = run(fixture("derived-nvidia-smi-q-H100-SXM5-ecc-errors.txt"), h100_sxm5());
    const CheckResult& ecc = check(derived.gpus.at(0), "ecc");
    CHECK(ecc.status == CheckStatus::fail);
    CHECK(ecc.observed == "12 corr / 1 uncorr");
    CHECK(ecc.line == 141);
    CHECK(statuses(derived.gpus.at(0))["retired-remapped"] == CheckStatus::pass);
    CHECK_FALSE(derived.passed());

    // A real excerpt: 177 corrected DRAM errors and a row remapping pending.
    const Verification real = run(fixture("nvidia-smi-q-A100-SXM4-80GB-510-ecc-remapped-rows-excerpt.txt"),
                                  a100_sxm4(80 * gib, "A100-80GB-SXM4"));
    const GpuVerification& g = real.gpus.at(0);
    CHECK(g.identified_as == "A100-80GB-SXM4");  // by product name: the excerpt has no Device Id
    CHECK(check(g, "ecc").status == CheckStatus::fail);
    CHECK(check(g, "ecc").observed == "177 corr / 0 uncorr");
    CHECK(check(g, "retired-remapped").status == CheckStatus::fail);
    CHECK(check(g, "retired-remapped").message ==
          "a row remapping is pending (rows remapped: 1, pages retired: 0): reset the GPU to apply it and re-check; a "
          "new part should have none");
    CHECK(check(g, "memory").status == CheckStatus::skip);

    const Verification sram =
        run(fixture("nvidia-smi-q-ecc-sram-uncorrectable-excerpt.txt"), a100_sxm4(80 * gib, "A100-80GB-SXM4"));
    CHECK(check(sram.gpus.at(0), "ecc").observed == "0 corr / 5 uncorr");
    CHECK(check(sram.gpus.at(0), "product").status == CheckStatus::warn);
}

TEST_CASE("verify flags a PCIe card sold as SXM", "[verify]") {
    const Verification v = run(fixture("derived-nvidia-smi-q-H100-PCIe-as-SXM5.txt"), h100_sxm5());
    const GpuVerification& g = v.gpus.at(0);
    CHECK(g.identified_as == "H100-PCIE");
    CHECK(check(g, "product").status == CheckStatus::fail);
    CHECK(check(g, "product").message ==
          "this is H100-PCIE (device 0x2331, pci.ids 'GH100 [H100 PCIe]'), not H100-SXM5 "
          "(NVIDIA H100 SXM5 80GB, sxm)");
    CHECK(check(g, "power-limit").status == CheckStatus::fail);
    CHECK(check(g, "power-limit").observed == "350 W (default 350 W)");
    CHECK(check(g, "memory").status == CheckStatus::pass);  // same 80 GB: memory alone would not tell
    CHECK_FALSE(v.passed());

    GpuSpec pcie = h100_sxm5();
    pcie.id = "H100-PCIE";
    pcie.form_factor = FormFactor::pcie;
    pcie.power_watts = 350;
    pcie.interconnect = GpuInterconnect{"nvlink-bridge", 600e9, 2};
    const Verification as_pcie = run(fixture("derived-nvidia-smi-q-H100-PCIe-as-SXM5.txt"), pcie);
    CHECK(as_pcie.passed());
    CHECK(check(as_pcie.gpus.at(0), "nvlink").message == "H100-PCIE takes an optional NVLink bridge; not checked");
}

TEST_CASE("verify: a link generation below max is a note at idle and a failure under load", "[verify]") {
    const Verification idle = run(fixture("derived-nvidia-smi-q-H100-SXM5-gen1-idle.txt"), h100_sxm5());
    const CheckResult& generation = check(idle.gpus.at(0), "pcie-generation");
    CHECK(generation.status == CheckStatus::note);
    CHECK(generation.observed == "Gen1 (max Gen5)");
    CHECK(idle.passed());

    std::string load = fixture("nvidia-smi-q-H100-80GB-590-load.txt");
    const std::string current = "                Current                                : 5\n";
    REQUIRE(load.find(current) != std::string::npos);
    load.replace(load.find(current), current.size(), "                Current                                : 3\n");
    const Verification busy = run(load, h100_sxm5());
    CHECK(check(busy.gpus.at(0), "pcie-generation").status == CheckStatus::fail);
    CHECK(check(busy.gpus.at(0), "pcie-generation").message ==
          "the link runs at Gen3 under load, Gen5 is possible: check BIOS PCIe settings, risers and retimers");

    // The A100 report's host side says Gen3 while the card does Gen4.
    const Verification a100 =
        run(fixture("nvidia-smi-q-A100-SXM4-40GB-535.txt"), a100_sxm4(40 * gib, "A100-40GB-SXM4"));
    CHECK(check(a100.gpus.at(0), "pcie-generation").status == CheckStatus::warn);
    CHECK(a100.passed());
}

TEST_CASE("verify: NVLink links up at full speed", "[verify]") {
    const std::string report = fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt");
    const Verification up =
        run(report, h100_sxm5(), parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-H100-590-tab.txt"), "n"));
    const CheckResult& all = check(up.gpus.at(0), "nvlink");
    CHECK(all.status == CheckStatus::pass);
    CHECK(all.observed == "956 GB/s, 18 of 18 links");  // 18 x 26.562 GB/s x 2

    const Verification down =
        run(report, h100_sxm5(),
            parse_nvidia_smi_nvlink(fixture("derived-nvidia-smi-nvlink-s-H100-two-inactive.txt"), "n"));
    const CheckResult& two = check(down.gpus.at(0), "nvlink");
    CHECK(two.status == CheckStatus::fail);
    CHECK(two.observed == "850 GB/s, 16 of 18 links");
    CHECK(two.message ==
          "links 5, 11 inactive (nvidia-smi nvlink -s, GPU 0): check the NVSwitch/fabric manager and the "
          "baseboard");

    // Twice the expected bandwidth: a GB200's file checked against an H100.
    const Verification other =
        run(report, h100_sxm5(), parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-GB200-excerpt.txt"), "n"));
    CHECK(check(other.gpus.at(0), "nvlink").status == CheckStatus::warn);
    CHECK(check(other.gpus.at(0), "nvlink").observed == "1912 GB/s, 18 of 18 links");  // 18 x 53.125 x 2

    // nvlink -s appended to the -q report is read from the same text by the CLI; here the parse.
    CHECK(parse_nvidia_smi_nvlink(report + fixture("nvidia-smi-nvlink-s-H100-590-tab.txt"), "n").size() == 1);

    // A GPU index with no -q section is noted, not matched.
    const Verification v100 =
        run(report, h100_sxm5(),
            parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-V100-inactive-links-excerpt.txt"), "n"));
    CHECK(check(v100.gpus.at(0), "nvlink").status == CheckStatus::skip);
    CHECK(v100.notes.back() ==
          "nvlink -s GPU 3 has no matching GPU section in the -q report (GPU N is matched with the "
          "N-th section)");
}

TEST_CASE("verify: wrong memory size, old driver", "[verify]") {
    const std::string report = fixture("nvidia-smi-q-A100-SXM4-40GB-535.txt");
    const Verification wrong = run(report, a100_sxm4(80 * gib, "A100-80GB-SXM4"));
    CHECK(check(wrong.gpus.at(0), "product").status == CheckStatus::fail);
    CHECK(check(wrong.gpus.at(0), "memory").status == CheckStatus::fail);
    CHECK(check(wrong.gpus.at(0), "memory").message ==
          "40960 MiB (40 GiB) is not the 80 GiB of A100-80GB-SXM4: a different memory size");

    // An H100 NVL (94 GiB) ordered, an 80 GB board delivered: 81559 MiB is 84.7 % of 94 GiB.
    GpuSpec nvl = h100_sxm5();
    nvl.id = "H100-NVL";
    nvl.memory_bytes = 94 * gib;
    CHECK(check(run(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), nvl).gpus.at(0), "memory").status ==
          CheckStatus::fail);
    // ECC on a GDDR part keeps up to ~6 % back: 81559 MiB of 86 GiB (92.6 %) still passes.
    GpuSpec roomy = h100_sxm5();
    roomy.memory_bytes = 86 * gib;
    CHECK(check(run(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), roomy).gpus.at(0), "memory").status ==
          CheckStatus::pass);

    std::string old = fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt");
    const std::string driver = "Driver Version                            : 565.57.01";
    REQUIRE(old.find(driver) != std::string::npos);
    old.replace(old.find(driver), driver.size(), "Driver Version                            : 515.65.01");
    const Verification stale = run(old, h100_sxm5());
    const CheckResult& d = check(stale.gpus.at(0), "driver");
    CHECK(d.status == CheckStatus::fail);
    CHECK(d.line == 4);
    CHECK(d.message ==
          "driver 515.65.01 is older than 520.61.05, the first driver of CUDA 11.8, which added Hopper "
          "(compute capability 9.0)");
}

TEST_CASE("verify: device and driver tables are consistent", "[verify]") {
    // The fixed catalog ids (docs/spec/names.md) that are NVIDIA discrete parts.
    const std::set<std::string> fixed = {"V100-SXM2-16GB",
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
                                         "RTX-5090"};
    std::set<std::uint32_t> ids;
    std::set<std::string> covered;
    for (const KnownDevice& device : known_devices()) {
        CHECK(ids.insert(device.device_id).second);
        CHECK(fixed.count(std::string(device.catalog_id)) == 1);
        covered.insert(std::string(device.catalog_id));
    }
    CHECK(covered == fixed);
    std::set<std::string> capabilities;
    for (const DriverRequirement& requirement : driver_requirements()) {
        CHECK(capabilities.insert(std::string(requirement.compute_capability)).second);
    }
    GpuSpec jetson;
    jetson.compute_capability = "8.7";
    CHECK(driver_requirement(jetson) == nullptr);
}
