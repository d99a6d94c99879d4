// Acceptance checks over real nvidia-smi -q reports and copies edited to show one defect each
// (tests/data/telemetry/SOURCES.md). The expected parts are written out here, not read from
// data/gpu_catalog.yaml, so that these tests pin the checks and not the catalog.

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/error.hpp"
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

// ---------------------------------------------------------------------------------------------
// verify --plan: acceptance against what a plan assumed. The plan documents are written out
// here (the fields read_plan_assumption reads, as gpusel plan --format json names them) so that
// the expectations are hand-checked, not the planner's output.

namespace {

// One serving role: 8 x H100 SXM5 in one 8-GPU unit, TP 8, 64 clients, 2000 output tokens/s
// with a band of 1700-2500.
std::string serving_plan(int replicas = 1, int count = 8, int tensor_parallel = 8,
                         const std::string& gpu = "H100-SXM5") {
    return R"({"format_version": 1, "roles": [{"role": "inference", "workload": "chat-70b",
      "model_hf_id": "meta-llama/Llama-3.1-70B-Instruct",
      "winner": {"gpu": ")" +
           gpu + R"(", "count": )" + std::to_string(count) + R"(,
        "layout": {"tensor_parallel": )" +
           std::to_string(tensor_parallel) + R"(, "pipeline_parallel": 1, "data_parallel": 1},
        "precision": "bf16", "offer": {"gpus_per_unit": 8},
        "perf": {"training": null,
          "inference": {"batch": 48, "replicas": )" +
           std::to_string(replicas) + R"(, "concurrency": 64, "input_tokens": 1024, "output_tokens": 256,
                        "output_tokens_per_s": 2000.0, "requests_per_s": 7.8},
          "band": {"group": "decode", "figures": {"inference.output_tokens_per_s": {"low": 1700.0, "high": 2500.0}}}}}}]})";
}

const CheckResult& node_check(const Acceptance& acceptance, const std::string& name) {
    for (const CheckResult& c : acceptance.checks) {
        if (c.check == name) {
            return c;
        }
    }
    FAIL("no check " << name);
    throw std::logic_error("unreachable");
}

GpuSpec pcie_card() {
    GpuSpec gpu = h100_sxm5();
    gpu.id = "L40S";
    gpu.form_factor = FormFactor::pcie;
    gpu.interconnect = GpuInterconnect{};
    return gpu;
}

}  // namespace

TEST_CASE("verify --plan reads the pick of a plan JSON", "[verify][plan]") {
    const PlanAssumption plan = read_plan_assumption(serving_plan(), "plan.json", "");
    CHECK(plan.role == "inference");
    CHECK(plan.workload == "chat-70b");
    CHECK(plan.model == "meta-llama/Llama-3.1-70B-Instruct");
    CHECK(plan.gpu == "H100-SXM5");
    CHECK(plan.count == 8);
    CHECK(plan.gpus_per_node == 8);
    CHECK(plan.tensor_parallel == 8);
    CHECK(plan.precision == "bf16");
    CHECK(plan.serving);
    CHECK(plan.batch == 48);
    CHECK(plan.concurrency == 64);
    CHECK(plan.input_tokens == 1024);
    CHECK(plan.output_tokens == 256);
    CHECK(plan.figure == "inference.output_tokens_per_s");
    CHECK(plan.predicted == 2000.0);
    CHECK(plan.band_low == 1700.0);
    CHECK(plan.band_high == 2500.0);

    // A pick of 2 GPUs from an 8-GPU unit puts 2 on the node.
    CHECK(read_plan_assumption(serving_plan(1, 2, 2), "plan.json", "").gpus_per_node == 2);
}

TEST_CASE("verify --plan: bad plan documents and role choice", "[verify][plan]") {
    const auto input_message = [](const std::string& text, const std::string& role) {
        try {
            read_plan_assumption(text, "plan.json", role);
        } catch (const InputError& error) {
            return format_diagnostic(error.diagnostics().front());
        }
        return std::string("no error");
    };
    CHECK(input_message("{\"roles\": [}", "") ==
          "plan.json:1:12: not JSON; expected the output of gpusel plan --format json");
    CHECK(input_message("{\"projects\": []}", "") ==
          "plan.json: roles: missing; expected the output of gpusel plan --format json");
    std::string no_layout = serving_plan();
    no_layout.replace(no_layout.find("\"layout\""), 8, "\"layouts\"");
    CHECK(input_message(no_layout, "") ==
          "plan.json: roles[0].winner.layout: missing; expected the output of gpusel plan --format json");

    const std::string two = R"({"roles": [{"role": "training", "workload": "t", "winner": {}},
                                          {"role": "inference", "workload": "i", "winner": {}}]})";
    CHECK_THROWS_WITH(read_plan_assumption(two, "plan.json", ""),
                      "--role: plan.json plans 2 roles (training, inference); name the one this node is for");
    CHECK_THROWS_WITH(read_plan_assumption(two, "plan.json", "serving"),
                      "--role: plan.json has no role 'serving'; it plans: training, inference");
    CHECK(input_message(two, "training") ==
          "plan.json: roles[0].winner.gpu: missing; expected the output of gpusel plan --format json");
}

TEST_CASE("verify --plan: a matching 8 x H100 node passes, 4 of 8 GPUs with NVLink down fails", "[verify][plan]") {
    const PlanAssumption plan = read_plan_assumption(serving_plan(), "plan.json", "");
    const SmiReport report = parse_nvidia_smi_q(fixture("derived-nvidia-smi-q-H100-SXM5-8gpu.txt"), "q.txt");
    REQUIRE(report.gpus.size() == 8);
    const Topology topology = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-8xH100-nv18-nonic.txt"), "topo.txt");

    const auto up = parse_nvidia_smi_nvlink(fixture("derived-nvidia-smi-nvlink-s-H100-8gpu.txt"), "nvlink.txt");
    const Acceptance good = accept_node(plan, h100_sxm5(), report, up, &topology);
    CHECK(node_check(good, "gpu-count").status == CheckStatus::pass);
    CHECK(node_check(good, "gpu-count").observed == "8");
    CHECK(node_check(good, "plan-nvlink").status == CheckStatus::pass);
    CHECK(node_check(good, "plan-nvlink").expected == "8 GPUs, every link");
    // GPUs 0-3 on NUMA node 0, 4-7 on 1: the TP group spans both, fine on NVLink.
    CHECK(node_check(good, "numa-placement").status == CheckStatus::pass);
    CHECK(node_check(good, "numa-placement").observed == "NUMA 0, 1");
    CHECK(good.passed());
    CHECK(verify_gpus(report, up, h100_sxm5()).passed());

    const auto down =
        parse_nvidia_smi_nvlink(fixture("derived-nvidia-smi-nvlink-s-H100-8gpu-4-down.txt"), "nvlink.txt");
    const Acceptance bad = accept_node(plan, h100_sxm5(), report, down, &topology);
    const CheckResult& nvlink = node_check(bad, "plan-nvlink");
    CHECK(nvlink.status == CheckStatus::fail);
    CHECK(nvlink.observed == "4 of 8 GPUs with links down");
    CHECK(nvlink.message.rfind("GPUs 4, 5, 6, 7 have inactive links (nvidia-smi nvlink -s): the plan's tensor-parallel "
                               "group (TP 8)",
                               0) == 0);
    CHECK_FALSE(bad.passed());

    // Without link states or topology the NVLink check cannot run: a skip, not a pass.
    const Acceptance blind = accept_node(plan, h100_sxm5(), report, {}, nullptr);
    CHECK(node_check(blind, "plan-nvlink").status == CheckStatus::skip);
    CHECK(node_check(blind, "numa-placement").status == CheckStatus::skip);

    // TP 1 on an NVLink part: nothing of the plan runs on NVLink.
    const PlanAssumption tp1 = read_plan_assumption(serving_plan(8, 8, 1), "plan.json", "");
    CHECK(node_check(accept_node(tp1, h100_sxm5(), report, down, &topology), "plan-nvlink").status ==
          CheckStatus::skip);
}

TEST_CASE("verify --plan: GPU count of the node", "[verify][plan]") {
    const PlanAssumption plan = read_plan_assumption(serving_plan(), "plan.json", "");
    SmiReport report = parse_nvidia_smi_q(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), "q.txt");
    CHECK(node_check(accept_node(plan, h100_sxm5(), report, {}, nullptr), "gpu-count").status == CheckStatus::pass);
    report.attached_gpus = 4;
    const CheckResult fewer = node_check(accept_node(plan, h100_sxm5(), report, {}, nullptr), "gpu-count");
    CHECK(fewer.status == CheckStatus::fail);
    CHECK(fewer.message == "the node has 4 GPUs, the plan's 8 × H100-SXM5 needs 8 on it");
    const PlanAssumption two_gpus = read_plan_assumption(serving_plan(1, 2, 2), "plan.json", "");
    CHECK(node_check(accept_node(two_gpus, h100_sxm5(), report, {}, nullptr), "gpu-count").status == CheckStatus::note);
}

TEST_CASE("verify --plan: tensor parallel over PCIe needs its group inside one NUMA node", "[verify][plan]") {
    // 8 PCIe GPUs, 0-3 on NUMA node 0 and 4-7 on 1, every pair SYS in this capture.
    const Topology split = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-8gpu-pcie-sys-2numa-tabs.txt"), "topo.txt");
    const SmiReport report = parse_nvidia_smi_q(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), "q.txt");
    const PlanAssumption tp8 = read_plan_assumption(serving_plan(1, 8, 8, "L40S"), "plan.json", "");
    const CheckResult spans = node_check(accept_node(tp8, pcie_card(), report, {}, &split), "numa-placement");
    CHECK(spans.status == CheckStatus::fail);
    CHECK(spans.message.rfind("GPUs 0-7 span NUMA nodes 0, 1: the plan's tensor-parallel group (TP 8)", 0) == 0);
    CHECK(node_check(accept_node(tp8, pcie_card(), report, {}, &split), "plan-nvlink").status == CheckStatus::skip);
    // Two GPUs behind one host bridge (PHB): inside one NUMA node.
    const Topology phb = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-2x1080ti-phb.txt"), "topo.txt");
    const PlanAssumption tp2 = read_plan_assumption(serving_plan(1, 2, 2, "L40S"), "plan.json", "");
    CHECK(node_check(accept_node(tp2, pcie_card(), report, {}, &phb), "numa-placement").status == CheckStatus::pass);
}

TEST_CASE("verify --plan: the serving smoke test and its band", "[verify][plan]") {
    // Two replicas of 64 clients: 32 clients each, 10 requests per client; the band halved.
    const PlanAssumption plan = read_plan_assumption(serving_plan(2, 16, 8), "plan.json", "");
    const SmokeTest smoke = smoke_test(plan, h100_sxm5());
    CHECK(smoke.kind == "vllm-bench-serve");
    CHECK(smoke.command ==
          "vllm bench serve --model meta-llama/Llama-3.1-70B-Instruct --dataset-name random --random-input-len 1024 "
          "--random-output-len 256 --ignore-eos --max-concurrency 32 --request-rate inf --num-prompts 320 "
          "--save-result --result-filename smoke.json");
    CHECK(smoke.predicted == 1000.0);
    CHECK(smoke.low == 850.0);
    CHECK(smoke.high == 1250.0);

    const CheckResult below = judge_smoke_result(smoke, 700.0, "smoke.json");
    CHECK(below.status == CheckStatus::fail);
    CHECK(below.expected == "850-1250");
    CHECK(below.observed == "700.0");
    CHECK(below.message.rfind("smoke.json: 700.0 output tokens/s of one replica is below the plan's band (850-1250, "
                              "predicted 1000): 70 % of the prediction",
                              0) == 0);
    CHECK(judge_smoke_result(smoke, 850.0, "smoke.json").status == CheckStatus::pass);
    CHECK(judge_smoke_result(smoke, 1250.0, "smoke.json").status == CheckStatus::pass);
    CHECK(judge_smoke_result(smoke, 1400.0, "smoke.json").status == CheckStatus::note);

    // A replica wider than a node has no single-node smoke test.
    const PlanAssumption wide = read_plan_assumption(serving_plan(1, 16, 16), "plan.json", "");
    CHECK(smoke_test(wide, h100_sxm5()).kind.empty());
}

TEST_CASE("verify --plan: the training smoke test is a GEMM probe at the plan's MFU", "[verify][plan]") {
    const std::string text = R"({"roles": [{"role": "training", "workload": "pretrain",
      "winner": {"gpu": "H100-SXM5", "count": 16, "precision": "bf16", "offer": {"gpus_per_unit": 8},
        "layout": {"tensor_parallel": 2, "pipeline_parallel": 1, "data_parallel": 8},
        "perf": {"inference": null, "training": {"tokens_per_s": 90000.0, "mfu": 0.4},
                 "band": {"figures": {"training.tokens_per_s": {"low": 77400.0, "high": 106200.0}}}}}}]})";
    const PlanAssumption plan = read_plan_assumption(text, "plan.json", "");
    CHECK_FALSE(plan.serving);
    CHECK(plan.gpus_per_node == 8);
    CHECK(plan.mfu == 0.4);
    GpuSpec gpu = h100_sxm5();
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 989e12;  // H100 SXM5 dense BF16
    const SmokeTest smoke = smoke_test(plan, gpu);
    CHECK(smoke.kind == "gemm-probe");
    CHECK(smoke.low == Approx(395.6).epsilon(1e-12));
    CHECK(smoke.high == Approx(989.0).epsilon(1e-12));
    CHECK(smoke.result_key.empty());  // verify does not read the probe's output
    // The data-parallel all-reduce of the node's 8 GPUs runs on NVLink: one group of 8.
    const SmiReport report = parse_nvidia_smi_q(fixture("derived-nvidia-smi-q-H100-SXM5-8gpu.txt"), "q.txt");
    const auto down =
        parse_nvidia_smi_nvlink(fixture("derived-nvidia-smi-nvlink-s-H100-8gpu-4-down.txt"), "nvlink.txt");
    const CheckResult nvlink = node_check(accept_node(plan, gpu, report, down, nullptr), "plan-nvlink");
    CHECK(nvlink.status == CheckStatus::fail);
    CHECK(nvlink.expected == "8 GPUs, every link");
}
