#pragma once
// The GPU catalog: plain specifications of accelerators, with prices and sources.
// Format: docs/catalog.md. The default catalog is data/gpu_catalog.yaml, compiled in.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusel/error.hpp"
#include "gpusel/precision.hpp"

namespace gpusel {

enum class Segment { datacenter, workstation, consumer, edge };
enum class FormFactor { sxm, pcie, oam, module, card };

std::string_view to_string(Segment segment);
std::string_view to_string(FormFactor form_factor);

struct GpuInterconnect {
    std::string kind;                 // "nvlink4", "nvlink-bridge", ...; empty = PCIe only
    double bidirectional_bytes_per_s = 0;  // per GPU, as vendors print it
    int domain_size = 1;              // GPUs reachable over this link in one domain
};

struct GpuPrice {
    std::optional<double> new_usd;
    std::optional<double> used_usd;
    std::optional<double> server_share_usd;  // host, chassis, network per GPU
    std::string as_of;                        // YYYY-MM
};

struct GpuCloudPrice {
    std::optional<double> on_demand_usd_per_hour;
    std::optional<double> spot_usd_per_hour;
    std::optional<double> reserved_1y_usd_per_hour;
    std::string provider;
    std::string as_of;
};

struct GpuSpec {
    std::string id;  // stable, unique, case-insensitive; what users type
    std::string name;
    std::string vendor;
    std::string architecture;
    std::string compute_capability;
    Segment segment = Segment::datacenter;
    FormFactor form_factor = FormFactor::pcie;
    std::string released;  // YYYY-MM
    double memory_bytes = 0;
    std::string memory_type;
    double memory_bandwidth_bytes_per_s = 0;
    bool ecc = false;
    // Dense tensor/matrix throughput in FLOP/s (or OP/s for integers), indexed by Precision.
    // 0 = not supported natively. fp32 is the non-tensor rate.
    std::array<double, precision_count> dense_flops_per_s{};
    double power_watts = 0;
    int host_link_generation = 4;  // PCIe generation
    int host_link_lanes = 16;
    GpuInterconnect interconnect;
    GpuPrice price;
    GpuCloudPrice cloud;
    std::vector<std::string> sources;
    std::string notes;

    bool supports(Precision precision) const {
        return dense_flops_per_s[static_cast<std::size_t>(precision)] > 0;
    }
    double peak_flops_per_s(Precision precision) const {
        return dense_flops_per_s[static_cast<std::size_t>(precision)];
    }
    // Nominal one-direction host link bandwidth: PCIe gen3 x16 ≈ 16 GB/s, gen4 32, gen5 64.
    double host_link_bytes_per_s() const;
    bool has_gpu_interconnect() const { return !interconnect.kind.empty(); }
    bool server_share_known() const { return price.server_share_usd.has_value(); }
};

class Catalog {
public:
    const std::vector<GpuSpec>& gpus() const { return m_gpus; }
    std::string as_of;

    // Case-insensitive lookup; nullptr when absent.
    const GpuSpec* find(std::string_view id) const;
    // Closest id for a "did you mean", empty when nothing is close.
    std::string suggest(std::string_view id) const;

    // Adds `gpu`, or replaces the entry with the same id (case-insensitive).
    void upsert(GpuSpec gpu);
    GpuSpec* find_mutable(std::string_view id);

private:
    std::vector<GpuSpec> m_gpus;
    // Lower-case id -> position in m_gpus: a linear search per entry made loading a catalog
    // quadratic (60,000 entries, 1 MB: over a minute).
    std::unordered_map<std::string, std::size_t> m_index;
};

// A warning about a catalog that loads but looks suspicious (stale price, missing cloud price).
struct CatalogWarning {
    std::string id;
    std::string message;
};

// Parses catalog YAML text (file name used in messages) and merges it into `catalog`:
// new ids are added (all required fields checked), known ids are overridden field by field.
// Throws InputError listing every problem in the text.
void merge_catalog_text(Catalog& catalog, std::string_view text, const std::string& file_name);

// Reads a catalog file from disk and merges it. Throws InputError.
void merge_catalog_file(Catalog& catalog, const std::string& path);

// The catalog compiled into the binary from data/gpu_catalog.yaml.
Catalog builtin_catalog();
std::string_view builtin_catalog_text();

// Semantic checks beyond loading: prices older than a year before `as_of`, missing cloud
// prices, missing used price. Never throws.
std::vector<CatalogWarning> audit_catalog(const Catalog& catalog);

}  // namespace gpusel
