// Loads data/efficiency.yaml: achieved fractions of peak by GPU family, memory class and
// serving stack, each value with its source.

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "base/text.hpp"
#include "inputs/efficiency.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_efficiency_yaml();
}

namespace gpusel {

namespace {

struct FactorField {
    std::string_view name;
    double EfficiencyFactors::*member;
    UnitKind unit;
    double min;  // exclusive
    double max;
};

// Ranges reject unit slips (a bandwidth fraction of 75 instead of 0.75), not plausible values.
constexpr std::array<FactorField, 24> factor_fields = {{
    {"training_compute", &EfficiencyFactors::training_compute, UnitKind::fraction, 0, 1},
    {"training_gemm", &EfficiencyFactors::training_gemm, UnitKind::fraction, 0, 1},
    {"training_gemm_fp8", &EfficiencyFactors::training_gemm_fp8, UnitKind::fraction, 0, 1},
    {"gemm_half_time", &EfficiencyFactors::gemm_half_time_s, UnitKind::seconds, -1, 0.01},
    {"kernel_floor", &EfficiencyFactors::kernel_floor_s, UnitKind::seconds, -1, 0.01},
    {"attention_compute", &EfficiencyFactors::attention_compute, UnitKind::fraction, 0, 1},
    {"tp_comm_overlap", &EfficiencyFactors::tp_comm_overlap, UnitKind::fraction, -1, 1},
    {"cnn_flops_per_byte", &EfficiencyFactors::cnn_flops_per_byte, UnitKind::plain, 0, 1e5},
    {"cnn_inference_flops_per_byte", &EfficiencyFactors::cnn_inference_flops_per_byte, UnitKind::plain, 0, 1e5},
    {"prefill_compute", &EfficiencyFactors::prefill_compute, UnitKind::fraction, 0, 1},
    {"prefill_compute_8bit", &EfficiencyFactors::prefill_compute_8bit, UnitKind::fraction, 0, 1},
    {"prefill_half_tokens", &EfficiencyFactors::prefill_half_tokens, UnitKind::plain, 0, 1e6},
    {"decode_bandwidth", &EfficiencyFactors::decode_bandwidth, UnitKind::fraction, 0, 1},
    {"overhead_per_layer", &EfficiencyFactors::overhead_per_layer_s, UnitKind::seconds, -1, 0.1},
    {"request_floor", &EfficiencyFactors::request_floor_s, UnitKind::seconds, -1, 10},
    {"diffusion_compute", &EfficiencyFactors::diffusion_compute, UnitKind::fraction, 0, 1},
    {"interconnect", &EfficiencyFactors::interconnect, UnitKind::fraction, 0, 1},
    {"host_link", &EfficiencyFactors::host_link, UnitKind::fraction, 0, 1},
    {"network", &EfficiencyFactors::network, UnitKind::fraction, 0, 1},
    {"nvlink_latency", &EfficiencyFactors::nvlink_latency_s, UnitKind::seconds, -1, 0.01},
    {"pcie_latency", &EfficiencyFactors::pcie_latency_s, UnitKind::seconds, -1, 0.01},
    {"network_latency", &EfficiencyFactors::network_latency_s, UnitKind::seconds, -1, 0.01},
    {"collective_bus", &EfficiencyFactors::collective_bus, UnitKind::plain, 0, 4},
    {"collective_latency", &EfficiencyFactors::collective_latency_s, UnitKind::seconds, -1, 0.01},
}};

constexpr std::pair<MemoryClass, std::string_view> memory_class_names[] = {
    {MemoryClass::hbm, "hbm"}, {MemoryClass::gddr, "gddr"}, {MemoryClass::lpddr, "lpddr"}, {MemoryClass::other, "other"}};

constexpr std::pair<ServingStack, std::string_view> stack_names[] = {
    {ServingStack::automatic, "auto"},
    {ServingStack::optimized, "optimized"},
    {ServingStack::llama_cpp, "llama.cpp"},
    {ServingStack::eager, "eager"}};

constexpr std::pair<Storage, std::string_view> storage_names[] = {
    {Storage::hdd, "hdd"}, {Storage::sata_ssd, "sata-ssd"}, {Storage::nvme, "nvme"},
    {Storage::network, "network"}, {Storage::ram, "ram"}};

// Reads `{value: X, source: "..."}` at `key`; returns true and sets `value` / `source`.
bool read_sourced(MapReader& parent, std::string_view key, UnitKind unit, double min, double max, double& value,
                  std::string& source) {
    const YamlNode* node = parent.node(key);
    if (node == nullptr) {
        return false;
    }
    MapReader entry(*node, parent.child_path(key), parent.diagnostics());
    entry.require("value");
    entry.require("source");
    // The minimum is exclusive for fractions and rates (0 would divide by zero) and inclusive
    // for overheads, written here as min -1.
    const bool ok = min < 0 ? entry.number("value", value, unit, 0, max) : entry.number("value", value, unit, min, max, true);
    const bool has_source = entry.text("source", source);
    if (has_source && source.empty()) {
        entry.error("source", "a source is required (URL or document, and the row it comes from)");
    }
    // Validation case ids a fitted value was fitted on (read for the file's checks, kept nowhere).
    std::vector<std::string> fitted_on;
    entry.text_list("fitted_on", fitted_on);
    entry.finish();
    return ok && has_source && !source.empty();
}

void read_factors(MapReader& reader, std::map<std::string, double>& values, std::map<std::string, std::string>& sources) {
    for (const FactorField& field : factor_fields) {
        double value = 0;
        std::string source;
        if (read_sourced(reader, field.name, field.unit, field.min, field.max, value, source)) {
            values[std::string(field.name)] = value;
            sources[std::string(field.name)] = source;
        }
    }
    reader.finish();
}

void apply_values(EfficiencyFactors& factors, const std::map<std::string, double>& values) {
    for (const FactorField& field : factor_fields) {
        if (const auto found = values.find(std::string(field.name)); found != values.end()) {
            factors.*(field.member) = found->second;
        }
    }
}

}  // namespace

std::string_view to_string(ServingStack stack) {
    for (const auto& [value, name] : stack_names) {
        if (value == stack) {
            return name;
        }
    }
    return "?";
}

std::optional<ServingStack> parse_serving_stack(std::string_view name) {
    for (const auto& [value, text] : stack_names) {
        if (equals_ignore_case(text, name)) {
            return value;
        }
    }
    return std::nullopt;
}

std::string_view to_string(MemoryClass memory) {
    for (const auto& [value, name] : memory_class_names) {
        if (value == memory) {
            return name;
        }
    }
    return "?";
}

MemoryClass memory_class(const GpuSpec& gpu) {
    const std::string type = to_lower(gpu.memory_type);
    if (type.find("hbm") != std::string::npos) {
        return MemoryClass::hbm;
    }
    if (type.find("gddr") != std::string::npos) {
        return MemoryClass::gddr;
    }
    if (type.find("lpddr") != std::string::npos || type.find("ddr") != std::string::npos) {
        return MemoryClass::lpddr;
    }
    return MemoryClass::other;
}

int EfficiencyRule::specificity() const {
    return (family.empty() ? 0 : 1) + (memory ? 1 : 0) + (stack ? 1 : 0);
}

EfficiencyFactors EfficiencyTable::resolve(const GpuSpec& gpu, ServingStack stack) const {
    EfficiencyFactors factors = defaults;
    factors.applied = {"defaults"};
    const std::string family = to_lower(gpu.architecture);
    const MemoryClass memory = memory_class(gpu);
    std::vector<const EfficiencyRule*> matching;
    for (const EfficiencyRule& rule : rules) {
        if ((rule.family.empty() || rule.family == family) && (!rule.memory || *rule.memory == memory) &&
            (!rule.stack || *rule.stack == stack)) {
            matching.push_back(&rule);
        }
    }
    // More specific rules win; among equals, the later one in the file.
    std::stable_sort(matching.begin(), matching.end(),
                     [](const EfficiencyRule* a, const EfficiencyRule* b) { return a->specificity() < b->specificity(); });
    for (const EfficiencyRule* rule : matching) {
        apply_values(factors, rule->values);
        factors.applied.push_back(rule->label);
    }
    return factors;
}

EfficiencyTable parse_efficiency_text(std::string_view text, const std::string& file_name) {
    const YamlNode root = parse_yaml_text(text, file_name);
    Diagnostics diagnostics(file_name);
    MapReader top(root, "", diagnostics);
    EfficiencyTable table;
    top.require("format");
    top.require("defaults");
    int format = 0;
    if (top.integer("format", format, 1, 1000) && format != 1) {
        top.error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
    }
    if (const YamlNode* node = top.node("defaults")) {
        MapReader reader(*node, "defaults", diagnostics);
        std::map<std::string, double> values;
        std::map<std::string, std::string> sources;
        for (const FactorField& field : factor_fields) {
            reader.require(field.name);
        }
        read_factors(reader, values, sources);
        apply_values(table.defaults, values);
    }
    if (const YamlNode* node = top.node("rules")) {
        if (node->kind != YamlNode::Kind::sequence) {
            top.error("rules", fmt::format("expected a list of rules, got {}", kind_name(node->kind)));
        } else {
            for (std::size_t i = 0; i < node->items.size(); ++i) {
                const std::string path = fmt::format("rules[{}]", i);
                MapReader reader(node->items[i], path, diagnostics);
                EfficiencyRule rule;
                reader.require("label");
                reader.require("match");
                reader.require("factors");
                reader.text("label", rule.label);
                if (const YamlNode* match = reader.node("match")) {
                    MapReader match_reader(*match, reader.child_path("match"), diagnostics);
                    match_reader.text("family", rule.family);
                    rule.family = to_lower(rule.family);
                    MemoryClass memory = MemoryClass::other;
                    if (match_reader.choice("memory", memory, memory_class_names)) {
                        rule.memory = memory;
                    }
                    ServingStack stack = ServingStack::optimized;
                    if (match_reader.choice("stack", stack, stack_names)) {
                        if (stack == ServingStack::automatic) {
                            match_reader.error("stack", "a rule matches a concrete stack, not auto");
                        }
                        rule.stack = stack;
                    }
                    match_reader.finish();
                }
                if (const YamlNode* factors = reader.node("factors")) {
                    MapReader factor_reader(*factors, reader.child_path("factors"), diagnostics);
                    read_factors(factor_reader, rule.values, rule.sources);
                }
                reader.finish();
                table.rules.push_back(std::move(rule));
            }
        }
    }
    if (const YamlNode* node = top.node("platform")) {
        MapReader reader(*node, "platform", diagnostics);
        std::string source;
        for (const char* key : {"infiniband_per_gpu", "ethernet_per_gpu", "pageable_copy_fraction", "storage"}) {
            reader.require(key);
        }
        read_sourced(reader, "infiniband_per_gpu", UnitKind::bytes_per_second, 0, 1e13,
                     table.platform.infiniband_bytes_per_s_per_gpu, source);
        read_sourced(reader, "ethernet_per_gpu", UnitKind::bytes_per_second, 0, 1e13,
                     table.platform.ethernet_bytes_per_s_per_gpu, source);
        read_sourced(reader, "pageable_copy_fraction", UnitKind::fraction, 0, 1, table.platform.pageable_copy_fraction,
                     source);
        if (const YamlNode* storage = reader.node("storage")) {
            MapReader storage_reader(*storage, reader.child_path("storage"), diagnostics);
            for (const auto& [kind, name] : storage_names) {
                storage_reader.require(name);
                double bytes_per_s = 0;
                if (read_sourced(storage_reader, name, UnitKind::bytes_per_second, 0, 1e13, bytes_per_s, source)) {
                    table.platform.storage_bytes_per_s[kind] = bytes_per_s;
                }
            }
            storage_reader.finish();
        }
        reader.finish();
    } else {
        top.require("platform");
    }
    top.finish();
    diagnostics.throw_if_any();
    return table;
}

EfficiencyTable builtin_efficiency() {
    return parse_efficiency_text(embedded::builtin_efficiency_yaml(), "data/efficiency.yaml");
}

}  // namespace gpusel
