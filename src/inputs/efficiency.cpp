// Loads data/efficiency.yaml: achieved fractions of peak by GPU family, memory class and
// serving stack, each value with its source.

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "base/text.hpp"
#include "inputs/efficiency.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_efficiency_yaml();
}

namespace gpusel {

namespace {

// How a speed calibration (EfficiencyTable::speed_scale) moves a factor: achieved fractions and
// FLOPs per byte grow with it, fixed times shrink, link figures stay (a measurement of one job's
// speed says nothing about the network).
enum class SpeedRole { efficiency, overhead, none };

struct FactorField {
    std::string_view name;
    double EfficiencyFactors::*member;
    UnitKind unit;
    double min;  // exclusive
    double max;
    SpeedRole role;
    bool required = true;  // in `defaults`; the per-operator factors added later default to the header
};

// Ranges reject unit slips (a bandwidth fraction of 75 instead of 0.75), not plausible values.
constexpr std::array<FactorField, 28> factor_fields = {{
    {"training_compute", &EfficiencyFactors::training_compute, UnitKind::fraction, 0, 1, SpeedRole::efficiency},
    {"training_gemm", &EfficiencyFactors::training_gemm, UnitKind::fraction, 0, 1, SpeedRole::efficiency, false},
    {"training_gemm_fp8", &EfficiencyFactors::training_gemm_fp8, UnitKind::fraction, 0, 1, SpeedRole::efficiency,
     false},
    {"gemm_half_work", &EfficiencyFactors::gemm_half_work_s, UnitKind::seconds, 0, 0.01, SpeedRole::none, false},
    {"kernel_floor", &EfficiencyFactors::kernel_floor_s, UnitKind::seconds, -1, 0.01, SpeedRole::overhead, false},
    {"attention_compute", &EfficiencyFactors::attention_compute, UnitKind::fraction, 0, 1, SpeedRole::efficiency,
     false},
    {"tp_comm_overlap", &EfficiencyFactors::tp_comm_overlap, UnitKind::fraction, -1, 1, SpeedRole::none, false},
    {"cnn_flops_per_byte", &EfficiencyFactors::cnn_flops_per_byte, UnitKind::plain, 0, 1e5, SpeedRole::efficiency},
    {"cnn_inference_flops_per_byte", &EfficiencyFactors::cnn_inference_flops_per_byte, UnitKind::plain, 0, 1e5,
     SpeedRole::efficiency},
    {"prefill_compute", &EfficiencyFactors::prefill_compute, UnitKind::fraction, 0, 1, SpeedRole::efficiency},
    {"prefill_compute_8bit", &EfficiencyFactors::prefill_compute_8bit, UnitKind::fraction, 0, 1, SpeedRole::efficiency},
    {"decode_bandwidth", &EfficiencyFactors::decode_bandwidth, UnitKind::fraction, 0, 1, SpeedRole::efficiency},
    {"overhead_per_layer", &EfficiencyFactors::overhead_per_layer_s, UnitKind::seconds, -1, 0.1, SpeedRole::overhead},
    {"request_floor", &EfficiencyFactors::request_floor_s, UnitKind::seconds, -1, 10, SpeedRole::overhead},
    {"diffusion_compute", &EfficiencyFactors::diffusion_compute, UnitKind::fraction, 0, 1, SpeedRole::efficiency},
    {"interconnect", &EfficiencyFactors::interconnect, UnitKind::fraction, 0, 1, SpeedRole::none},
    {"host_link", &EfficiencyFactors::host_link, UnitKind::fraction, 0, 1, SpeedRole::none},
    {"network", &EfficiencyFactors::network, UnitKind::fraction, 0, 1, SpeedRole::none},
    {"nvlink_latency", &EfficiencyFactors::nvlink_latency_s, UnitKind::seconds, -1, 0.01, SpeedRole::none},
    {"pcie_latency", &EfficiencyFactors::pcie_latency_s, UnitKind::seconds, -1, 0.01, SpeedRole::none},
    {"network_latency", &EfficiencyFactors::network_latency_s, UnitKind::seconds, -1, 0.01, SpeedRole::none},
    {"elementwise_kernels", &EfficiencyFactors::elementwise_kernels, UnitKind::plain, -1, 100, SpeedRole::none, false},
    {"step_floor", &EfficiencyFactors::step_floor_s, UnitKind::seconds, -1, 1, SpeedRole::overhead, false},
    {"request_latency", &EfficiencyFactors::request_latency_s, UnitKind::seconds, -1, 10, SpeedRole::overhead, false},
    {"kv_read_factor", &EfficiencyFactors::kv_read_factor, UnitKind::plain, 0, 64, SpeedRole::none, false},
    {"attention_score_bytes", &EfficiencyFactors::attention_score_bytes, UnitKind::plain, -1, 64, SpeedRole::none,
     false},
    {"collective_bus", &EfficiencyFactors::collective_bus, UnitKind::plain, 0, 4, SpeedRole::none, false},
    {"collective_latency", &EfficiencyFactors::collective_latency_s, UnitKind::seconds, -1, 0.01, SpeedRole::none,
     false},
}};

// Engine names rules match with `engine:` (docs/perf-model.md, "Software stacks"), and the stack
// class each runs as.
constexpr std::pair<std::string_view, ServingStack> engine_stacks[] = {
    {"tensorrt-llm", ServingStack::optimized}, {"vllm", ServingStack::optimized},
    {"sglang", ServingStack::optimized},       {"lmdeploy", ServingStack::optimized},
    {"tensorrt", ServingStack::optimized},     {"torch-compile", ServingStack::optimized},
    {"vllm-rocm", ServingStack::optimized},    {"synapseai", ServingStack::optimized},
    {"llama.cpp", ServingStack::llama_cpp},    {"hf-generate", ServingStack::eager},
};

constexpr std::pair<MemoryClass, std::string_view> memory_class_names[] = {{MemoryClass::hbm, "hbm"},
                                                                           {MemoryClass::gddr, "gddr"},
                                                                           {MemoryClass::lpddr, "lpddr"},
                                                                           {MemoryClass::other, "other"}};

constexpr std::pair<ServingStack, std::string_view> stack_names[] = {{ServingStack::automatic, "auto"},
                                                                     {ServingStack::optimized, "optimized"},
                                                                     {ServingStack::llama_cpp, "llama.cpp"},
                                                                     {ServingStack::eager, "eager"}};

constexpr std::pair<Storage, std::string_view> storage_names[] = {{Storage::hdd, "hdd"},
                                                                  {Storage::sata_ssd, "sata-ssd"},
                                                                  {Storage::nvme, "nvme"},
                                                                  {Storage::network, "network"},
                                                                  {Storage::ram, "ram"}};

// Reads `{value: X, source: "...", fitted_on: [case ids]}` at `key` (fitted_on optional: the
// validation cases a fitted value was fitted to); returns true and sets `value` / `source`.
bool read_sourced(MapReader& parent, std::string_view key, UnitKind unit, double min, double max, double& value,
                  std::string& source, std::vector<std::string>* fitted_on = nullptr) {
    const YamlNode* node = parent.node(key);
    if (node == nullptr) {
        return false;
    }
    MapReader entry(*node, parent.child_path(key), parent.diagnostics());
    entry.require("value");
    entry.require("source");
    // The minimum is exclusive for fractions and rates (0 would divide by zero) and inclusive
    // for overheads, written here as min -1.
    const bool ok =
        min < 0 ? entry.number("value", value, unit, 0, max) : entry.number("value", value, unit, min, max, true);
    const bool has_source = entry.text("source", source);
    if (has_source && source.empty()) {
        entry.error("source", "a source is required (URL or document, and the row it comes from)");
    }
    if (fitted_on != nullptr) {
        entry.text_list("fitted_on", *fitted_on);
    }
    entry.finish();
    return ok && has_source && !source.empty();
}

void read_factors(MapReader& reader, std::map<std::string, double>& values, std::map<std::string, std::string>& sources,
                  std::map<std::string, std::vector<std::string>>& fitted_on) {
    for (const FactorField& field : factor_fields) {
        double value = 0;
        std::string source;
        std::vector<std::string> cases;
        if (read_sourced(reader, field.name, field.unit, field.min, field.max, value, source, &cases)) {
            values[std::string(field.name)] = value;
            sources[std::string(field.name)] = source;
            if (!cases.empty()) {
                fitted_on[std::string(field.name)] = std::move(cases);
            }
        }
    }
    reader.finish();
}

// A calibration's speed multiplier on one set of factors. Fractions of peak stay below 1: a
// measurement faster than the peak allows is absorbed by the fixed times instead.
void apply_speed_scale(EfficiencyFactors& factors, double scale) {
    for (const FactorField& field : factor_fields) {
        double& value = factors.*(field.member);
        if (field.role == SpeedRole::efficiency) {
            value *= scale;
            if (field.unit == UnitKind::fraction) {
                value = std::min(value, max_achieved_fraction);
            }
        } else if (field.role == SpeedRole::overhead) {
            value /= scale;
        }
    }
}

// A rule sets a few of the 27 factors: walking its values (each names at most one field) costs
// a few comparisons, where a map look-up per field built a string for each (resolve runs once
// per perf estimate, thousands of times per plan).
void apply_values(EfficiencyFactors& factors, const std::map<std::string, double>& values) {
    for (const auto& [name, value] : values) {
        for (const FactorField& field : factor_fields) {
            if (field.name == name) {
                factors.*(field.member) = value;
                break;
            }
        }
    }
}

// speed_bands: {training|prefill|decode|non-llm: {low, median, high, source}}, every group required.
void read_speed_bands(const YamlNode& node, Diagnostics& diagnostics, EfficiencyTable& table) {
    MapReader reader(node, "speed_bands", diagnostics);
    for (const std::string_view group : speed_band_groups) {
        reader.require(group);
        const YamlNode* band_node = reader.node(group);
        if (band_node == nullptr) {
            continue;
        }
        MapReader band_reader(*band_node, reader.child_path(group), diagnostics);
        SpeedBandFactors band;
        band_reader.require("low");
        band_reader.require("median");
        band_reader.require("high");
        band_reader.require("source");
        band_reader.number("low", band.low, UnitKind::plain, 0, 1);
        band_reader.number("median", band.median, UnitKind::plain, 0, 10);
        band_reader.number("high", band.high, UnitKind::plain, 1, 10);
        if (band.median < band.low || band.median > band.high) {
            band_reader.error("median", "must lie between low and high");
        }
        band_reader.text("source", band.source);
        band_reader.finish();
        table.speed_bands[std::string(group)] = band;
    }
    reader.finish();
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

const std::vector<std::string_view>& known_engine_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> list;
        for (const auto& [name, stack] : engine_stacks) {
            list.push_back(name);
        }
        return list;
    }();
    return names;
}

bool is_known_engine(std::string_view engine) {
    return std::any_of(std::begin(engine_stacks), std::end(engine_stacks),
                       [&](const auto& entry) { return equals_ignore_case(entry.first, engine); });
}

ServingStack stack_of_engine(std::string_view engine) {
    for (const auto& [name, stack] : engine_stacks) {
        if (equals_ignore_case(name, engine)) {
            return stack;
        }
    }
    return ServingStack::optimized;
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
    return (family.empty() ? 0 : 1) + (memory ? 1 : 0) + (stack ? 1 : 0) + (engine.empty() ? 0 : 1);
}

namespace {
// `family` (stored lower-case) == to_lower(architecture), without the copy.
bool is_lowered(std::string_view family, std::string_view architecture) {
    return family.size() == architecture.size() &&
           std::equal(family.begin(), family.end(), architecture.begin(), [](char stored, char given) {
               return stored == static_cast<char>(std::tolower(static_cast<unsigned char>(given)));
           });
}
}  // namespace

EfficiencyFactors EfficiencyTable::resolve(const GpuSpec& gpu, ServingStack stack, std::string_view engine) const {
    // Every estimate resolves its factors (thousands per plan), so the matching rules are kept in
    // a buffer the thread reuses and ordered by an insertion sort, which is stable as
    // std::stable_sort is but allocates nothing.
    EfficiencyFactors factors = defaults;
    const MemoryClass memory = memory_class(gpu);
    thread_local std::vector<std::pair<int, const EfficiencyRule*>> matching;
    matching.clear();
    for (const EfficiencyRule& rule : rules) {
        if ((rule.family.empty() || is_lowered(rule.family, gpu.architecture)) &&
            (!rule.memory || *rule.memory == memory) && (!rule.stack || *rule.stack == stack) &&
            (rule.engine.empty() || equals_ignore_case(rule.engine, engine))) {
            matching.emplace_back(rule.specificity(), &rule);
        }
    }
    // More specific rules win; among equals, the later one in the file.
    for (std::size_t i = 1; i < matching.size(); ++i) {
        const std::pair<int, const EfficiencyRule*> moved = matching[i];
        std::size_t at = i;
        for (; at > 0 && matching[at - 1].first > moved.first; --at) {
            matching[at] = matching[at - 1];
        }
        matching[at] = moved;
    }
    factors.applied.clear();
    factors.applied.reserve(matching.size() + 2);
    factors.applied.emplace_back("defaults");
    for (const std::pair<int, const EfficiencyRule*>& entry : matching) {
        apply_values(factors, entry.second->values);
        factors.applied.push_back(entry.second->label);
    }
    if (speed_scale != 1) {
        apply_speed_scale(factors, speed_scale);
        factors.applied.emplace_back("calibration");
    }
    return factors;
}

bool set_efficiency_factor(EfficiencyFactors& factors, std::string_view name, double value) {
    for (const FactorField& field : factor_fields) {
        if (field.name == name) {
            factors.*(field.member) = value;
            return true;
        }
    }
    return false;
}

std::optional<double> efficiency_factor(const EfficiencyFactors& factors, std::string_view name) {
    for (const FactorField& field : factor_fields) {
        if (field.name == name) {
            return factors.*(field.member);
        }
    }
    return std::nullopt;
}

bool efficiency_factor_is_fraction(std::string_view name) {
    return std::any_of(factor_fields.begin(), factor_fields.end(), [&](const FactorField& field) {
        return field.name == name && field.unit == UnitKind::fraction;
    });
}

EfficiencyTable parse_efficiency_text(std::string_view text, const std::string& file_name) {
    const YamlNode root = parse_yaml_text(text, file_name);
    Diagnostics diagnostics(file_name);
    MapReader top(root, "", diagnostics);
    EfficiencyTable table;
    top.require("format");
    top.require("defaults");
    top.format_version();
    if (const YamlNode* node = top.node("defaults")) {
        MapReader reader(*node, "defaults", diagnostics);
        std::map<std::string, double> values;
        std::map<std::string, std::string> sources;
        for (const FactorField& field : factor_fields) {
            if (field.required) {
                reader.require(field.name);
            }
        }
        read_factors(reader, values, sources, table.defaults_fitted_on);
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
                    if (match_reader.text("engine", rule.engine) && !is_known_engine(rule.engine)) {
                        match_reader.error("engine", fmt::format("unknown engine '{}'; known: {}", rule.engine,
                                                                 fmt::join(known_engine_names(), ", ")));
                    }
                    rule.engine = to_lower(rule.engine);
                    match_reader.finish();
                }
                if (const YamlNode* factors = reader.node("factors")) {
                    MapReader factor_reader(*factors, reader.child_path("factors"), diagnostics);
                    read_factors(factor_reader, rule.values, rule.sources, rule.fitted_on);
                }
                reader.finish();
                table.rules.push_back(std::move(rule));
            }
        }
    }
    if (const YamlNode* node = top.node("speed_bands")) {
        read_speed_bands(*node, diagnostics, table);
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
        read_sourced(reader, "image_decode_per_vcpu", UnitKind::plain, 0, 1e6,
                     table.platform.image_decode_samples_per_s_per_vcpu, table.platform.image_decode_source);
        read_sourced(reader, "host_vcpus_per_gpu", UnitKind::plain, 0, 1024, table.platform.host_vcpus_per_gpu,
                     table.platform.host_vcpus_source);
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
