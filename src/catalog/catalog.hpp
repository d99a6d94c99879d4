#pragma once
// The GPU catalog: plain specifications of accelerators with their sources, and the offers that
// buy or rent them (offer.hpp). Format: docs/catalog.md. The default catalog is
// data/gpu_catalog.yaml (specifications) and data/offers.yaml (offers), compiled in.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "catalog/offer.hpp"
#include "catalog/precision.hpp"

namespace gpusel {

enum class Segment { datacenter, workstation, consumer, edge };
enum class FormFactor { sxm, pcie, oam, module, card };

// The names catalogs and workload constraints spell, one table each.
inline constexpr std::pair<Segment, std::string_view> segment_names[] = {{Segment::datacenter, "datacenter"},
                                                                         {Segment::workstation, "workstation"},
                                                                         {Segment::consumer, "consumer"},
                                                                         {Segment::edge, "edge"}};
inline constexpr std::pair<FormFactor, std::string_view> form_factor_names[] = {{FormFactor::sxm, "sxm"},
                                                                                {FormFactor::pcie, "pcie"},
                                                                                {FormFactor::oam, "oam"},
                                                                                {FormFactor::module, "module"},
                                                                                {FormFactor::card, "card"}};

std::string_view to_string(Segment segment);
std::string_view to_string(FormFactor form_factor);

struct GpuInterconnect {
    std::string kind;                      // "nvlink4", "nvlink-bridge", ...; empty = PCIe only
    double bidirectional_bytes_per_s = 0;  // per GPU, as vendors print it
    int domain_size = 1;                   // GPUs reachable over this link in one domain
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
    std::vector<std::string> sources;
    std::string notes;
    // Host CPU threads per GPU, derived from the offers when a catalog is merged: the median
    // over this GPU's offers that publish them of vCPUs / GPUs (rentals and complete systems:
    // their own; cards and baseboards: their host's vCPUs / slots). 0 when none does.
    double host_vcpus_per_gpu = 0;
    int host_vcpus_offers = 0;  // how many offers that median rests on

    bool supports(Precision precision) const { return dense_flops_per_s[static_cast<std::size_t>(precision)] > 0; }
    double peak_flops_per_s(Precision precision) const {
        return dense_flops_per_s[static_cast<std::size_t>(precision)];
    }
    // Nominal one-direction host link bandwidth: PCIe gen3 x16 ≈ 16 GB/s, gen4 32, gen5 64.
    double host_link_bytes_per_s() const;
    bool has_gpu_interconnect() const { return !interconnect.kind.empty(); }
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

    // Offers, in file order (purchase and rental together), and what they refer to.
    const std::vector<Offer>& offers() const { return m_offers; }
    const std::vector<Provider>& providers() const { return m_providers; }
    const std::vector<HostOffer>& hosts() const { return m_hosts; }
    const Offer* find_offer(std::string_view id) const;  // case-insensitive; nullptr when absent
    const Provider* find_provider(std::string_view id) const;
    const HostOffer* find_host(std::string_view id) const;
    // The offers of one GPU (case-insensitive id), in file order.
    std::vector<const Offer*> offers_for(std::string_view gpu_id) const;
    std::string suggest_offer(std::string_view id) const;
    // Add, or replace the entry with the same id.
    void upsert(Offer offer);
    void upsert(Provider provider);
    void upsert(HostOffer host);
    Offer* find_offer_mutable(std::string_view id);
    Provider* find_provider_mutable(std::string_view id);
    HostOffer* find_host_mutable(std::string_view id);

private:
    std::vector<GpuSpec> m_gpus;
    std::vector<Offer> m_offers;
    std::vector<Provider> m_providers;
    std::vector<HostOffer> m_hosts;
    std::unordered_map<std::string, std::size_t> m_offer_index;  // lower-case id -> position
    // Lower-case id -> position in m_gpus: a linear search per entry made loading a catalog
    // quadratic (60,000 entries, 1 MB: over a minute).
    std::unordered_map<std::string, std::size_t> m_index;
};

// A warning about a catalog that loads but looks suspicious (stale price, no offer to buy or
// rent a GPU, spot at or above on-demand, a format-1 price block converted to an estimate).
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

// The catalog compiled into the binary from data/gpu_catalog.yaml and data/offers.yaml.
Catalog builtin_catalog();
std::string_view builtin_catalog_text();  // data/gpu_catalog.yaml
std::string_view builtin_offers_text();   // data/offers.yaml

// Semantic checks beyond loading: prices older than a year before `as_of`, GPUs nobody sells
// or rents, spot prices at or above on-demand, converted format-1 prices. Never throws.
std::vector<CatalogWarning> audit_catalog(const Catalog& catalog);

}  // namespace gpusel
