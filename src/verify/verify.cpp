// Hardware acceptance checks. Every tolerance below is stated with its reason.

#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"

namespace gpusel {

std::string_view to_string(CheckStatus status) {
    switch (status) {
        case CheckStatus::pass:
            return "pass";
        case CheckStatus::note:
            return "note";
        case CheckStatus::warn:
            return "warn";
        case CheckStatus::fail:
            return "fail";
        case CheckStatus::skip:
            return "skip";
    }
    return "?";
}

bool GpuVerification::passed() const {
    return std::none_of(checks.begin(), checks.end(),
                        [](const CheckResult& c) { return c.status == CheckStatus::fail; });
}

bool Verification::passed() const {
    return std::all_of(gpus.begin(), gpus.end(), [](const GpuVerification& g) { return g.passed(); }) &&
           (!acceptance || acceptance->passed());
}

// NVIDIA device ids from the PCI ID Repository, pciutils/pciids pci.ids @ 006181e2c5d5b9a3b57d252aa5b3d827971d41a9
// (vendor 10de), names quoted as pci.ids prints them. Only parts with a catalog id are listed.
// RTX PRO 6000 Blackwell has three boards (Workstation 600 W, Max-Q 300 W, Server) under one
// catalog id; the power-limit check tells them apart.
const std::vector<KnownDevice>& known_devices() {
    static const std::vector<KnownDevice> devices = {
        {0x1db1, "V100-SXM2-16GB", "GV100GL [Tesla V100 SXM2 16GB]"},
        {0x1db4, "V100-PCIE-16GB", "GV100GL [Tesla V100 PCIe 16GB]"},
        {0x1db5, "V100-SXM2-32GB", "GV100GL [Tesla V100 SXM2 32GB]"},
        {0x1db6, "V100-PCIE-32GB", "GV100GL [Tesla V100 PCIe 32GB]"},
        {0x1eb8, "T4", "TU104GL [Tesla T4]"},
        {0x20b0, "A100-40GB-SXM4", "GA100 [A100 SXM4 40GB]"},
        {0x20b1, "A100-40GB-PCIE", "GA100 [A100 PCIe 40GB]"},
        {0x20f1, "A100-40GB-PCIE", "GA100 [A100 PCIe 40GB]"},
        {0x20b2, "A100-80GB-SXM4", "GA100 [A100 SXM4 80GB]"},
        {0x20b5, "A100-80GB-PCIE", "GA100 [A100 PCIe 80GB]"},
        {0x20b7, "A30", "GA100GL [A30 PCIe]"},
        {0x2203, "RTX-3090-TI", "GA102 [GeForce RTX 3090 Ti]"},
        {0x2204, "RTX-3090", "GA102 [GeForce RTX 3090]"},
        {0x2230, "RTX-A6000", "GA102GL [RTX A6000]"},
        {0x2235, "A40", "GA102GL [A40]"},
        {0x2236, "A10", "GA102GL [A10]"},
        {0x2237, "A10G", "GA102GL [A10G]"},
        {0x2321, "H100-NVL", "GH100 [H100L 94GB]"},
        {0x2329, "H20", "GH100 [H20]"},
        {0x2330, "H100-SXM5", "GH100 [H100 SXM5 80GB]"},
        {0x2331, "H100-PCIE", "GH100 [H100 PCIe]"},
        {0x2335, "H200-SXM", "GH100 [H200 SXM 141GB]"},
        {0x233b, "H200-NVL", "GH100 [H200 NVL]"},
        {0x2684, "RTX-4090", "AD102 [GeForce RTX 4090]"},
        {0x26b1, "RTX-6000-ADA", "AD102GL [RTX 6000 Ada Generation]"},
        {0x26b5, "L40", "AD102GL [L40]"},
        {0x26b9, "L40S", "AD102GL [L40S]"},
        {0x2702, "RTX-4080-SUPER", "AD103 [GeForce RTX 4080 SUPER]"},
        {0x2704, "RTX-4080", "AD103 [GeForce RTX 4080]"},
        {0x27b8, "L4", "AD104GL [L4]"},
        {0x2901, "B200", "GB100 [B200]"},
        {0x2941, "GB200", "GB100 [HGX GB200]"},
        {0x2b85, "RTX-5090", "GB202 [GeForce RTX 5090]"},
        {0x2bb1, "RTX-PRO-6000", "GB202GL [RTX PRO 6000 Blackwell Workstation Edition]"},
        {0x2bb4, "RTX-PRO-6000", "GB202GL [RTX PRO 6000 Blackwell Max-Q Workstation Edition]"},
        {0x2bb5, "RTX-PRO-6000", "GB202GL [RTX PRO 6000 Blackwell Server Edition]"},
    };
    return devices;
}

namespace {

// Product names as nvidia-smi printed them in the captures under tests/data/telemetry (and the
// part each capture's device id or context shows), for excerpts that carry no Device Id.
constexpr std::pair<std::string_view, std::string_view> known_product_names[] = {
    {"NVIDIA A100-SXM4-40GB", "A100-40GB-SXM4"},                                  // -q, device 0x20B0
    {"NVIDIA A100-SXM4-80GB", "A100-80GB-SXM4"},                                  // -q excerpt
    {"NVIDIA H100 80GB HBM3", "H100-SXM5"},                                       // -q, device 0x2330
    {"NVIDIA H200", "H200-SXM"},                                                  // --query-gpu, 8x H200 HGX with NV18
    {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},                                   // nvlink -s
    {"NVIDIA GB200", "GB200"},                                                    // nvlink -s
    {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000"},  // --query-gpu
};

const KnownDevice* device_by_id(std::uint32_t id) {
    for (const KnownDevice& device : known_devices()) {
        if (device.device_id == id) {
            return &device;
        }
    }
    return nullptr;
}

int line_of(const SmiGpu& gpu, const std::string& path) {
    const SmiField* field = gpu.field(path);
    return field == nullptr ? 0 : field->line;
}

int first_line(const SmiGpu& gpu, std::initializer_list<const char*> paths) {
    for (const char* path : paths) {
        if (const int line = line_of(gpu, path); line > 0) {
            return line;
        }
    }
    return 0;
}

std::string gib_text(double bytes) {
    const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
    return gib == std::round(gib) ? fmt::format("{:.0f} GiB", gib) : fmt::format("{:.1f} GiB", gib);
}
std::string mib_text(double bytes) {
    return fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024.0));
}
std::string count_text(std::optional<double> value) {
    return value ? fmt::format("{:.0f}", *value) : "n/a";
}

CheckResult check_product(const SmiGpu& gpu, const GpuSpec& expected, const std::string& identified) {
    CheckResult result{
        "product", CheckStatus::skip, expected.id, "", "", first_line(gpu, {"PCI / Device Id", "Product Name"})};
    const KnownDevice* device = gpu.pci_device_id ? device_by_id(*gpu.pci_device_id) : nullptr;
    const std::string by = device != nullptr
                               ? fmt::format("device 0x{:04X}, pci.ids '{}'", device->device_id, device->pci_ids_name)
                               : fmt::format("product name '{}'", gpu.product_name);
    if (identified.empty()) {
        result.status = CheckStatus::warn;
        result.observed = gpu.product_name.empty() ? "unknown" : gpu.product_name;
        result.message = gpu.pci_device_id
                             ? fmt::format(
                                   "device 0x{:04X} ('{}') is not in gpusel's table of known parts; compare it "
                                   "with the part you ordered by hand",
                                   *gpu.pci_device_id, gpu.product_name)
                         : gpu.product_name.empty()
                             ? std::string(
                                   "the report shows neither a PCI Device Id nor a Product Name; compare the part "
                                   "with what you ordered by hand")
                             : fmt::format(
                                   "the report has no PCI Device Id and the product name '{}' is not one gpusel "
                                   "knows; compare it with the part you ordered by hand",
                                   gpu.product_name);
        return result;
    }
    result.observed = identified;
    if (equals_ignore_case(identified, expected.id)) {
        result.status = CheckStatus::pass;
        result.message = fmt::format("{} ({})", identified, by);
        return result;
    }
    result.status = CheckStatus::fail;
    result.message = fmt::format("this is {} ({}), not {} ({}, {})", identified, by, expected.id, expected.name,
                                 to_string(expected.form_factor));
    return result;
}

// nvidia-smi reports the usable framebuffer in MiB; the catalog holds the vendor's capacity in
// GiB (vendors' "80 GB" is binary). The report lands at or a little below it: H100 81559 MiB of
// 80 GiB is -0.4 %, A100 40960 MiB of 40 GiB 0 %, H200 143771 MiB of 141 GiB -0.4 %
// (tests/data/telemetry); GDDR parts with ECC on give up more, A40 46068 MiB of 48 GiB is -6.3 %
// (thamada/nvidia-smi nvsim/A40x10_smi.py). Another memory size of the same chip is off by 15 %
// or more (H100 80 vs 94 GiB, A100 40 vs 80 GiB), so the window [-10 %, +5 %] separates them.
CheckResult check_memory(const SmiGpu& gpu, const GpuSpec& expected) {
    CheckResult result{
        "memory", CheckStatus::skip, gib_text(expected.memory_bytes), "", "", line_of(gpu, "FB Memory Usage / Total")};
    if (!gpu.fb_total_bytes || expected.memory_bytes <= 0) {
        result.message = "the report has no FB Memory Usage / Total";
        return result;
    }
    const double ratio = *gpu.fb_total_bytes / expected.memory_bytes;
    result.observed = mib_text(*gpu.fb_total_bytes);
    if (ratio >= 0.90 && ratio <= 1.05) {
        result.status = CheckStatus::pass;
        result.message =
            fmt::format("{} usable ({}, {:+.1f} % of the catalog's {}; the driver and ECC keep the rest)",
                        result.observed, gib_text(*gpu.fb_total_bytes), (ratio - 1) * 100, result.expected);
        return result;
    }
    result.status = CheckStatus::fail;
    result.message = fmt::format("{} ({}) is not the {} of {}: a different memory size", result.observed,
                                 gib_text(*gpu.fb_total_bytes), result.expected, expected.id);
    return result;
}

CheckResult check_ecc(const SmiGpu& gpu, const GpuSpec& expected) {
    CheckResult result{
        "ecc", CheckStatus::skip, "0 errors", "", "", line_of(gpu, "ECC Errors / Volatile / DRAM Correctable")};
    if (result.line == 0) {
        result.line = first_line(gpu, {"ECC Errors / Volatile / Single Bit / Total", "ECC Mode / Current"});
    }
    const EccCounts& v = gpu.ecc_volatile;
    const EccCounts& a = gpu.ecc_aggregate;
    const bool counted = v.correctable || v.uncorrectable || a.correctable || a.uncorrectable;
    const double total = v.correctable.value_or(0) + v.uncorrectable.value_or(0) + a.correctable.value_or(0) +
                         a.uncorrectable.value_or(0);
    if (!counted && gpu.ecc_flags.empty()) {
        if (gpu.ecc_mode == "Disabled" && expected.ecc) {
            result.status = CheckStatus::warn;
            result.observed = "ECC off";
            result.line = line_of(gpu, "ECC Mode / Current");
            result.message = fmt::format(
                "ECC is disabled on a part that supports it ({}); enable it with nvidia-smi -e 1 "
                "and reboot, then re-check",
                expected.id);
        } else {
            result.message = "the report carries no ECC error counts";
        }
        return result;
    }
    result.observed = fmt::format("{} corr / {} uncorr", count_text(a.correctable), count_text(a.uncorrectable));
    if (total > 0 || !gpu.ecc_flags.empty()) {
        result.status = CheckStatus::fail;
        std::string flags;
        for (const std::string& flag : gpu.ecc_flags) {
            flags += fmt::format("; {}: Yes", flag);
        }
        result.message = fmt::format(
            "ECC errors: volatile {} correctable, {} uncorrectable; aggregate (lifetime) {} "
            "correctable, {} uncorrectable{}. A new part should show none; a used one "
            "shows its history: ask for a replacement or a field diagnostic (dcgmi diag -r 3)",
            count_text(v.correctable), count_text(v.uncorrectable), count_text(a.correctable),
            count_text(a.uncorrectable), flags);
        return result;
    }
    if (gpu.ecc_mode == "Disabled" && expected.ecc) {
        result.status = CheckStatus::warn;
        result.message = "no errors counted, but ECC is disabled; enable it with nvidia-smi -e 1 and reboot";
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = "no volatile or aggregate ECC errors";
    return result;
}

// Pending retirement or remapping means the part needs a reset to take a bad row out of use; a
// remapping failure means it ran out of spare rows (NVIDIA's guidance: replace). Rows already
// remapped are within the part's reserve: shown, not failed.
CheckResult check_rows(const SmiGpu& gpu) {
    CheckResult result{"retired-remapped",
                       CheckStatus::skip,
                       "none pending",
                       "",
                       "",
                       first_line(gpu, {"Remapped Rows / Pending", "Retired Pages / Pending Page Blacklist",
                                        "Retired Pages / Pending"})};
    const bool known = gpu.remapped_pending || gpu.remapped_failure || gpu.retired_pending ||
                       gpu.remapped_correctable || gpu.remapped_uncorrectable || gpu.retired_single_bit ||
                       gpu.retired_double_bit;
    if (!known) {
        result.message = "the report shows neither retired pages nor remapped rows";
        return result;
    }
    const double remapped = gpu.remapped_correctable.value_or(0) + gpu.remapped_uncorrectable.value_or(0);
    const double retired = gpu.retired_single_bit.value_or(0) + gpu.retired_double_bit.value_or(0);
    result.observed = fmt::format("remapped {}, retired {}", remapped, retired);
    if (gpu.remapped_failure.value_or(false)) {
        result.status = CheckStatus::fail;
        result.observed = "remap failure";
        result.line = line_of(gpu, "Remapped Rows / Remapping Failure Occurred");
        result.message = "a row remapping failed: the part has run out of spare rows; ask for a replacement";
        return result;
    }
    if (gpu.remapped_pending.value_or(false) || gpu.retired_pending.value_or(false)) {
        result.status = CheckStatus::fail;
        result.observed = "pending";
        result.message = fmt::format(
            "a {} is pending (rows remapped: {}, pages retired: {}): reset the GPU to apply it "
            "and re-check; a new part should have none",
            gpu.remapped_pending.value_or(false) ? "row remapping" : "page retirement", remapped, retired);
        return result;
    }
    if (remapped > 0 || retired > 0) {
        result.status = CheckStatus::warn;
        result.message = fmt::format(
            "rows remapped: {}, pages retired: {}, in the past: within the spare reserve, but a "
            "new part should have none",
            remapped, retired);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = "nothing retired, remapped or pending";
    return result;
}

CheckResult check_pcie_width(const SmiGpu& gpu, const GpuSpec& expected) {
    CheckResult result{"pcie-width",
                       CheckStatus::skip,
                       fmt::format("x{}", expected.host_link_lanes),
                       "",
                       "",
                       line_of(gpu, "PCI / GPU Link Info / Link Width / Current")};
    if (!gpu.pcie_width_current) {
        result.message = "the report has no PCIe link width";
        return result;
    }
    result.observed = gpu.pcie_width_max ? fmt::format("x{} (max x{})", *gpu.pcie_width_current, *gpu.pcie_width_max)
                                         : fmt::format("x{}", *gpu.pcie_width_current);
    // Link width does not drop at idle (unlike the generation): fewer lanes means a slot, riser or
    // seating problem, and halves host bandwidth.
    if (*gpu.pcie_width_current < expected.host_link_lanes) {
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "the link runs at x{}, {} is an x{} part: reseat the card, check the slot and riser "
            "(half the lanes is half the host bandwidth)",
            *gpu.pcie_width_current, expected.id, expected.host_link_lanes);
        return result;
    }
    if (gpu.pcie_width_max && *gpu.pcie_width_current < *gpu.pcie_width_max) {
        result.status = CheckStatus::fail;
        result.message = fmt::format("the link runs at x{} of x{}", *gpu.pcie_width_current, *gpu.pcie_width_max);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = fmt::format("x{}", *gpu.pcie_width_current);
    return result;
}

bool looks_idle(const SmiGpu& gpu) {
    if (gpu.clocks_idle.value_or(false)) {
        return true;
    }
    if (gpu.gpu_util_pct && *gpu.gpu_util_pct == 0) {
        return true;
    }
    // P8 and deeper are the idle performance states.
    return gpu.performance_state.size() >= 2 && gpu.performance_state[0] == 'P' &&
           std::atoi(gpu.performance_state.c_str() + 1) >= 8;
}

CheckResult check_pcie_generation(const SmiGpu& gpu, const GpuSpec& expected) {
    CheckResult result{"pcie-generation",
                       CheckStatus::skip,
                       fmt::format("Gen{}", expected.host_link_generation),
                       "",
                       "",
                       line_of(gpu, "PCI / GPU Link Info / PCIe Generation / Current")};
    const std::optional<int> device_max = gpu.pcie_gen_device_max ? gpu.pcie_gen_device_max : gpu.pcie_gen_max;
    if (!gpu.pcie_gen_current || !device_max) {
        result.message = "the report has no PCIe generation";
        return result;
    }
    const int link_max = gpu.pcie_gen_max.value_or(*device_max);
    result.observed = fmt::format("Gen{} (max Gen{})", *gpu.pcie_gen_current, link_max);
    if (*device_max < expected.host_link_generation) {
        result.status = CheckStatus::fail;
        result.line = first_line(
            gpu, {"PCI / GPU Link Info / PCIe Generation / Device Max", "PCI / GPU Link Info / PCIe Generation / Max"});
        result.message = fmt::format("the card supports Gen{} at most; {} is a Gen{} part: a different model or board",
                                     *device_max, expected.id, expected.host_link_generation);
        return result;
    }
    if (*gpu.pcie_gen_current < link_max) {
        if (looks_idle(gpu)) {
            result.status = CheckStatus::note;
            result.message = fmt::format(
                "Gen{} now, Gen{} possible: GPUs lower the link generation when idle to save "
                "power; re-check under load (nvidia-smi -q -d PCI while a job runs)",
                *gpu.pcie_gen_current, link_max);
        } else {
            result.status = CheckStatus::fail;
            result.message = fmt::format(
                "the link runs at Gen{} under load, Gen{} is possible: check BIOS PCIe settings, "
                "risers and retimers",
                *gpu.pcie_gen_current, link_max);
        }
        return result;
    }
    if (gpu.pcie_gen_host_max && *gpu.pcie_gen_host_max < *device_max) {
        result.status = CheckStatus::warn;
        result.line = line_of(gpu, "PCI / GPU Link Info / PCIe Generation / Host Max");
        result.message = fmt::format(
            "the host side reports Gen{} at most, the card Gen{}: the slot or platform limits "
            "the link",
            *gpu.pcie_gen_host_max, *device_max);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = fmt::format("Gen{}", *gpu.pcie_gen_current);
    return result;
}

// The per-link rate nvidia-smi prints, doubled for both directions and summed over links, runs
// a few percent above the vendor's bidirectional figure in the captures (H100: 18 x 26.562 GB/s
// x 2 = 956 GB/s vs 900; V100: 6 x 25.781 x 2 = 309 vs 300; GB200: 18 x 53.125 x 2 = 1912 vs
// 1800). One link missing of 18 is -5.6 %, so 95 % of the catalog figure is the floor; more
// than 125 % is not a faster link but another part's file.
CheckResult check_nvlink(const SmiGpu& gpu, const NvlinkGpu* links, const GpuSpec& expected) {
    const bool required =
        expected.interconnect.kind.rfind("nvlink", 0) == 0 && expected.interconnect.kind != "nvlink-bridge";
    CheckResult result{
        "nvlink",
        CheckStatus::skip,
        required ? fmt::format("{:.0f} GB/s", expected.interconnect.bidirectional_bytes_per_s / 1e9) : "none",
        "",
        "",
        0};
    if (!required) {
        result.message = expected.interconnect.kind == "nvlink-bridge"
                             ? fmt::format("{} takes an optional NVLink bridge; not checked", expected.id)
                             : fmt::format("{} has no NVLink", expected.id);
        return result;
    }
    if (links == nullptr) {
        std::string fabric;
        if (!gpu.fabric_state.empty()) {
            fabric = fmt::format(" (the report's Fabric state is {}, status {})", gpu.fabric_state,
                                 gpu.fabric_status.empty() ? "n/a" : gpu.fabric_status);
            result.line = line_of(gpu, "Fabric / State");
        }
        result.message =
            "link states are not in nvidia-smi -q: capture nvidia-smi nvlink -s and pass it with --nvlink, "
            "or append it to the report" +
            fabric;
        return result;
    }
    if (links->links.empty()) {
        result.message = fmt::format(
            "the NVLink file lists no link states for GPU {} (nvidia-smi nvlink -e prints error "
            "counters; capture nvidia-smi nvlink -s)",
            links->index);
        return result;
    }
    std::vector<int> inactive;
    double per_direction = 0;
    for (const NvlinkLink& link : links->links) {
        if (link.active) {
            per_direction += link.bytes_per_s;
        } else {
            inactive.push_back(link.link);
        }
    }
    const double bidirectional = 2 * per_direction;
    result.observed = fmt::format("{:.0f} GB/s, {} of {} links", bidirectional / 1e9,
                                  links->links.size() - inactive.size(), links->links.size());
    if (!inactive.empty()) {
        std::string list;
        for (std::size_t i = 0; i < inactive.size(); ++i) {
            list += (i == 0 ? "" : ", ") + std::to_string(inactive[i]);
        }
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "link{} {} inactive (nvidia-smi nvlink -s, GPU {}): check the NVSwitch/fabric "
            "manager and the baseboard",
            inactive.size() == 1 ? "" : "s", list, links->index);
        return result;
    }
    if (bidirectional < 0.95 * expected.interconnect.bidirectional_bytes_per_s) {
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "{} active links give {:.0f} GB/s both ways, below the {:.0f} GB/s of {}: links are "
            "missing or slow",
            links->links.size(), bidirectional / 1e9, expected.interconnect.bidirectional_bytes_per_s / 1e9,
            expected.id);
        return result;
    }
    if (bidirectional > 1.25 * expected.interconnect.bidirectional_bytes_per_s) {
        // The printed rates run at most ~6 % above the vendor figure (above); far more means the
        // file is of another part or machine.
        result.status = CheckStatus::warn;
        result.message = fmt::format(
            "{} links give {:.0f} GB/s both ways, far above the {:.0f} GB/s of {}: is the "
            "nvlink file from this machine?",
            links->links.size(), bidirectional / 1e9, expected.interconnect.bidirectional_bytes_per_s / 1e9,
            expected.id);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = fmt::format("{} links up, {:.0f} GB/s both ways (catalog {:.0f} GB/s)", links->links.size(),
                                 bidirectional / 1e9, expected.interconnect.bidirectional_bytes_per_s / 1e9);
    return result;
}

// Default power limit equals the board's TDP (the catalog's `power`); 2 % absorbs rounding in
// the catalog. A lower current limit is a setting (nvidia-smi -pl), not the part.
CheckResult check_power(const SmiGpu& gpu, const GpuSpec& expected) {
    CheckResult result{
        "power-limit",
        CheckStatus::skip,
        fmt::format("{:.0f} W", expected.power_watts),
        "",
        "",
        first_line(gpu, {"GPU Power Readings / Default Power Limit", "Power Readings / Default Power Limit"})};
    if (!gpu.default_power_limit_watts) {
        result.message = "the report has no default power limit";
        return result;
    }
    const double default_limit = *gpu.default_power_limit_watts;
    result.observed = gpu.power_limit_watts
                          ? fmt::format("{:.0f} W (default {:.0f} W)", *gpu.power_limit_watts, default_limit)
                          : fmt::format("default {:.0f} W", default_limit);
    if (expected.power_watts > 0 && std::abs(default_limit - expected.power_watts) > 0.02 * expected.power_watts) {
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "the board's default power limit is {:.0f} W; {} is a {:.0f} W part: a different "
            "variant (PCIe and SXM boards of one chip differ here)",
            default_limit, expected.id, expected.power_watts);
        return result;
    }
    if (gpu.power_limit_watts && *gpu.power_limit_watts < default_limit - 0.5) {
        result.status = CheckStatus::warn;
        result.line = first_line(gpu, {"GPU Power Readings / Current Power Limit",
                                       "Power Readings / Enforced Power Limit", "Power Readings / Power Limit"});
        result.message = fmt::format(
            "capped at {:.0f} W of a {:.0f} W default (nvidia-smi -pl); restore with nvidia-smi "
            "-pl {:.0f} before measuring",
            *gpu.power_limit_watts, default_limit, default_limit);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = fmt::format("{:.0f} W, the part's default", default_limit);
    return result;
}

std::vector<int> version_numbers(std::string_view text) {
    std::vector<int> numbers;
    int current = -1;
    for (const char c : text) {
        if (c >= '0' && c <= '9') {
            current = (current < 0 ? 0 : current) * 10 + (c - '0');
            if (current > 1000000) {
                return {};
            }
        } else if (c == '.') {
            if (current < 0) {
                return {};
            }
            numbers.push_back(current);
            current = -1;
        } else {
            return {};
        }
    }
    if (current < 0) {
        return {};
    }
    numbers.push_back(current);
    return numbers;
}

CheckResult check_driver(const std::string& driver, int line, const GpuSpec& expected) {
    const DriverRequirement* requirement = driver_requirement(expected);
    CheckResult result{"driver",
                       CheckStatus::skip,
                       requirement != nullptr ? fmt::format(">= {}", requirement->min_driver) : "",
                       driver,
                       "",
                       line};
    if (requirement == nullptr) {
        result.message =
            fmt::format("no driver requirement known for compute capability {}", expected.compute_capability);
        return result;
    }
    const std::vector<int> have = version_numbers(driver);
    const std::vector<int> need = version_numbers(requirement->min_driver);
    if (have.empty()) {
        result.message = driver.empty() ? "the report has no Driver Version"
                                        : fmt::format("driver version '{}' is not a version number", driver);
        return result;
    }
    if (std::lexicographical_compare(have.begin(), have.end(), need.begin(), need.end())) {
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "driver {} is older than {}, the first driver of CUDA {}, which added {} (compute "
            "capability {})",
            driver, requirement->min_driver, requirement->cuda, requirement->architecture,
            requirement->compute_capability);
        return result;
    }
    result.status = CheckStatus::pass;
    result.message = fmt::format("{} is new enough for {}: needs >= {} (CUDA {})", driver, requirement->architecture,
                                 requirement->min_driver, requirement->cuda);
    return result;
}

}  // namespace

// The first CUDA release that compiles for each compute capability, and the minimum Linux
// driver of that release. Drivers: CUDA Toolkit release notes, "CUDA Toolkit and Corresponding
// Driver Versions" (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/, Table 3):
// 9.0.76 >= 384.81, 10.0.130 >= 410.48, 11.0 >= 450.36.06, 11.1 GA >= 455.23, 11.8 GA >=
// 520.61.05, 12.8 GA >= 570.26. Architectures: Volta (sm_70) since CUDA 9.0, Turing (sm_75)
// 10.0, A100 (sm_80) 11.0, GA10x (sm_86) 11.1, Ada (sm_89) and Hopper (sm_90) 11.8, Blackwell
// (sm_100, sm_120) 12.8 (each release's notes).
const std::vector<DriverRequirement>& driver_requirements() {
    static const std::vector<DriverRequirement> requirements = {
        {"7.0", "Volta", "9.0", "384.81"},
        {"7.5", "Turing", "10.0", "410.48"},
        {"8.0", "Ampere (GA100)", "11.0", "450.36.06"},
        {"8.6", "Ampere (GA10x)", "11.1", "455.23"},
        {"8.9", "Ada", "11.8", "520.61.05"},
        {"9.0", "Hopper", "11.8", "520.61.05"},
        {"10.0", "Blackwell", "12.8", "570.26"},
        {"12.0", "Blackwell (GB20x)", "12.8", "570.26"},
    };
    return requirements;
}

const DriverRequirement* driver_requirement(const GpuSpec& gpu) {
    for (const DriverRequirement& requirement : driver_requirements()) {
        if (requirement.compute_capability == gpu.compute_capability) {
            return &requirement;
        }
    }
    return nullptr;
}

std::optional<std::string> identify_gpu(const SmiGpu& gpu) {
    if (gpu.pci_device_id && (!gpu.pci_vendor_id || *gpu.pci_vendor_id == 0x10de)) {
        if (const KnownDevice* device = device_by_id(*gpu.pci_device_id)) {
            return std::string(device->catalog_id);
        }
        return std::nullopt;  // a device id gpusel does not know beats a guess from the name
    }
    for (const auto& [name, id] : known_product_names) {
        if (gpu.product_name == name) {
            return std::string(id);
        }
    }
    return std::nullopt;
}

Verification verify_gpus(const SmiReport& report, const std::vector<NvlinkGpu>& nvlink, const GpuSpec& expected) {
    Verification verification;
    verification.expected_id = expected.id;
    verification.driver_version = report.driver_version;
    verification.cuda_version = report.cuda_version;
    verification.notes = report.notes;
    for (std::size_t i = 0; i < report.gpus.size(); ++i) {
        const SmiGpu& gpu = report.gpus[i];
        GpuVerification result;
        result.bus_id = gpu.bus_id;
        result.product_name = gpu.product_name;
        result.pci_device_id = gpu.pci_device_id;
        result.identified_as = identify_gpu(gpu).value_or("");
        const NvlinkGpu* links = nullptr;
        for (const NvlinkGpu& candidate : nvlink) {
            if (candidate.index == static_cast<int>(i)) {
                links = &candidate;
            }
        }
        result.checks.push_back(check_product(gpu, expected, result.identified_as));
        result.checks.push_back(check_memory(gpu, expected));
        result.checks.push_back(check_ecc(gpu, expected));
        result.checks.push_back(check_rows(gpu));
        result.checks.push_back(check_pcie_width(gpu, expected));
        result.checks.push_back(check_pcie_generation(gpu, expected));
        result.checks.push_back(check_nvlink(gpu, links, expected));
        result.checks.push_back(check_power(gpu, expected));
        result.checks.push_back(check_driver(report.driver_version, report.driver_version_line, expected));
        verification.gpus.push_back(std::move(result));
    }
    for (const NvlinkGpu& candidate : nvlink) {
        if (candidate.index < 0 || static_cast<std::size_t>(candidate.index) >= report.gpus.size()) {
            verification.notes.push_back(
                fmt::format("nvlink -s GPU {} has no matching GPU section in the -q report (GPU N is "
                            "matched with the N-th section)",
                            candidate.index));
        }
    }
    return verification;
}

}  // namespace gpusel
