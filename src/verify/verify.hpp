#pragma once
// Acceptance checks of delivered (or rented, or used) GPUs: an `nvidia-smi -q` report, and
// optionally `nvidia-smi nvlink -s`, against the catalog entry the seller claims. Pure.
// docs/diagnose.md ("verify") describes each check and its tolerance.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

// pass: as claimed. note: differs in a way that is expected (a link that drops its generation
// at idle). warn: worth a look, not a defect of the part (a power cap someone set, a host slot
// slower than the card). fail: not what was paid for, or not healthy. skip: the report does not
// carry what the check needs.
enum class CheckStatus { pass, note, warn, fail, skip };
std::string_view to_string(CheckStatus status);  // "pass", "note", "warn", "fail", "skip"

struct CheckResult {
    std::string check;  // product, memory, ecc, retired-remapped, pcie-width, pcie-generation,
                        // nvlink, power-limit, driver
    CheckStatus status = CheckStatus::skip;
    std::string expected;  // short, for a table cell
    std::string observed;
    std::string message;  // one sentence: what was found and what to do
    int line = 0;         // line of the -q report that shows it; 0 when none
};

struct GpuVerification {
    std::string bus_id;
    std::string product_name;
    std::optional<std::uint32_t> pci_device_id;
    std::string identified_as;  // catalog id the device id (or product name) stands for; "" if unknown
    std::vector<CheckResult> checks;
    bool passed() const;  // no check failed
};

struct Verification {
    std::string expected_id;
    std::string driver_version;
    std::string cuda_version;
    std::vector<GpuVerification> gpus;
    std::vector<std::string> notes;
    bool passed() const;  // every GPU passed
};

// A PCI device id of an NVIDIA part and the catalog id it is sold as (pci.ids, see verify.cpp).
struct KnownDevice {
    std::uint32_t device_id;
    std::string_view catalog_id;
    std::string_view pci_ids_name;  // as pci.ids names it
};
const std::vector<KnownDevice>& known_devices();

// The catalog id of a GPU in a -q report: by PCI device id, else by the product name nvidia-smi
// prints (for excerpts without a Device Id); nullopt when neither is known.
std::optional<std::string> identify_gpu(const SmiGpu& gpu);

// Minimum driver for an architecture: the first CUDA release that supports it and the Linux
// driver that release requires (CUDA Toolkit release notes, table of toolkit and driver versions).
struct DriverRequirement {
    std::string_view compute_capability;  // "9.0"
    std::string_view architecture;        // "Hopper"
    std::string_view cuda;                // "11.8"
    std::string_view min_driver;          // "520.61.05"
};
const std::vector<DriverRequirement>& driver_requirements();
const DriverRequirement* driver_requirement(const GpuSpec& gpu);

// Runs every check on every GPU of `report`. `nvlink` may be empty; its GPU N is matched with
// the N-th GPU section of the report (both list GPUs in PCI bus order).
Verification verify_gpus(const SmiReport& report, const std::vector<NvlinkGpu>& nvlink, const GpuSpec& expected);

}  // namespace gpusel
