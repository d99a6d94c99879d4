#include "harness.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "base/error.hpp"
#include "base/units.hpp"
#include "catalog/catalog.hpp"
#include "catalog/skypilot_import.hpp"
#include "deploy/deploy.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "io/yaml.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel::fuzz {

namespace {

// A broken contract: say which, then abort so that libFuzzer saves the input and the replay
// test fails.
[[noreturn]] void violated(std::string_view what) {
    std::fprintf(stderr, "fuzz contract violated: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

void require(bool condition, std::string_view what) {
    if (!condition) {
        violated(what);
    }
}

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return size == 0 ? std::string_view() : std::string_view(reinterpret_cast<const char*>(data), size);
}

// Diagnostics end up in JSON (check --format json) and in GitHub annotations, so their text
// must be valid UTF-8: nlohmann's dump() throws on anything else.
bool valid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        std::size_t length = 1;
        if (byte >= 0x80) {
            if ((byte & 0xe0) == 0xc0 && byte >= 0xc2) {
                length = 2;
            } else if ((byte & 0xf0) == 0xe0) {
                length = 3;
            } else if ((byte & 0xf8) == 0xf0 && byte <= 0xf4) {
                length = 4;
            } else {
                return false;
            }
            if (i + length > text.size()) {
                return false;
            }
            for (std::size_t k = 1; k < length; ++k) {
                if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) {
                    return false;
                }
            }
        }
        i += length;
    }
    return true;
}

void check_diagnostics(const InputError& error) {
    require(!error.diagnostics().empty(), "InputError without diagnostics");
    for (const Diagnostic& diagnostic : error.diagnostics()) {
        require(!diagnostic.message.empty(), "diagnostic without message");
        require(diagnostic.position.line >= 0, "negative line");
        require(diagnostic.position.line == 0 || diagnostic.position.column >= 1, "line without column");
        const std::string text = format_diagnostic(diagnostic);
        require(valid_utf8(text), "diagnostic is not valid UTF-8");
    }
}

void check_quantity(double value, std::string_view field) {
    if (!std::isfinite(value) || value < 0) {
        violated(std::string("not finite and non-negative: ") + std::string(field));
    }
}

void check_quantity(const std::optional<double>& value, std::string_view field) {
    if (value) {
        check_quantity(*value, field);
    }
}

void check_model(const ModelSpec& model) {
    check_quantity(model.params, "model.params");
    check_quantity(model.active_params, "model.active_params");
    check_quantity(model.activation_bytes_per_sample, "model.activation_bytes_per_sample");
    check_quantity(model.flops_per_sample, "model.flops_per_sample");
    for (const int count : {model.layers, model.hidden, model.heads, model.kv_heads, model.head_dim, model.ffn,
                            model.vocab, model.experts, model.top_k, model.max_context}) {
        require(count >= 0, "negative model dimension");
    }
}

void check_workload(const Workload& workload) {
    check_model(workload.model);
    const TrainingSpec& training = workload.training;
    check_quantity(training.dataset_tokens, "training.dataset_tokens");
    check_quantity(training.dataset_samples, "training.dataset_samples");
    check_quantity(training.epochs, "training.epochs");
    check_quantity(training.deadline_seconds, "training.deadline");
    for (const int count : {training.micro_batch, training.global_batch, training.seq_len, training.tensor_parallel,
                            training.pipeline_parallel, training.lora.rank, training.runs}) {
        require(count >= 0, "negative training count");
    }
    const InferenceSpec& inference = workload.inference;
    check_quantity(inference.requests_per_s, "inference.requests_per_s");
    check_quantity(inference.slo.ttft_seconds, "inference.slo.ttft");
    check_quantity(inference.slo.tpot_seconds, "inference.slo.tpot");
    check_quantity(inference.slo.e2e_seconds, "inference.slo.e2e");
    check_quantity(inference.slo.percentile, "inference.slo.percentile");
    require(inference.input_tokens >= 0 && inference.output_tokens >= 0 && inference.batch >= 0,
            "negative inference count");
    check_quantity(workload.data.sample_bytes, "data.sample_bytes");
    check_quantity(workload.data.cpu_samples_per_s_per_core, "data.cpu_samples_per_s_per_core");
    const DeploymentSpec& deployment = workload.deployment;
    check_quantity(deployment.horizon_months, "deployment.horizon");
    check_quantity(deployment.utilization, "deployment.utilization");
    check_quantity(deployment.energy_usd_per_kwh, "deployment.energy_price");
    check_quantity(deployment.pue, "deployment.pue");
    check_quantity(deployment.ops_usd_per_gpu_month, "deployment.ops_per_gpu_month");
    check_quantity(deployment.spot_overhead_fraction, "deployment.spot_overhead");
    check_quantity(workload.budget.capex_usd, "budget.capex");
    check_quantity(workload.budget.monthly_usd, "budget.monthly");
    check_quantity(workload.constraints.max_power_per_device_watts, "constraints.max_power_per_device");
    check_quantity(workload.constraints.memory_headroom_fraction, "constraints.memory_headroom");
    require(workload.constraints.max_gpus >= 0 && workload.constraints.gpus_per_node >= 0, "negative GPU count");
    for (const MemoryCalibrationPoint& point : workload.calibration.memory) {
        check_quantity(point.peak_bytes, "calibration.memory.peak");
    }
    for (const SpeedCalibrationPoint& point : workload.calibration.speed) {
        check_quantity(point.measured, "calibration.speed.measured");
        require(point.count >= 1, "calibration.speed.count below 1");
    }
}

void check_gpu(const GpuSpec& gpu) {
    require(!gpu.id.empty(), "catalog entry without id");
    check_quantity(gpu.memory_bytes, "memory");
    check_quantity(gpu.memory_bandwidth_bytes_per_s, "memory_bandwidth");
    for (const double flops : gpu.dense_flops_per_s) {
        check_quantity(flops, "dense_tflops");
    }
    check_quantity(gpu.power_watts, "power");
    check_quantity(gpu.interconnect.bidirectional_bytes_per_s, "interconnect.bandwidth");
    check_quantity(gpu.host_link_bytes_per_s(), "host_link");
}

void check_offer(const Offer& offer) {
    require(!offer.id.empty(), "offer without id");
    require(offer.gpus_per_unit >= 1, "offer with fewer than one GPU per unit");
    if (offer.price) {
        check_quantity(offer.price->usd, "purchase.price");
        require(offer.price->usd > 0, "purchase price of zero");
    }
    for (const RegionalRates& rates : offer.rates) {
        for (const std::optional<PricePoint>* price :
             {&rates.on_demand, &rates.spot, &rates.reserved_1y, &rates.reserved_3y}) {
            if (*price) {
                check_quantity((*price)->usd, "rental.price");
                require((*price)->usd > 0, "rental price of zero");
            }
        }
    }
}

const Catalog& base_catalog() {
    static const Catalog catalog = builtin_catalog();
    return catalog;
}

const ModelLibrary& base_models() {
    static const ModelLibrary library = builtin_models();
    return library;
}

LoadContext load_context() {
    return LoadContext{&base_catalog(), &base_models()};
}

std::size_t depth_of(const YamlNode& node) {
    std::size_t deepest = 0;
    for (const YamlNode& item : node.items) {
        deepest = std::max(deepest, depth_of(item));
    }
    for (const auto& [key, value] : node.entries) {
        deepest = std::max(deepest, depth_of(value));
    }
    return deepest + 1;
}

std::size_t count_nodes(const YamlNode& node) {
    std::size_t count = 1;
    for (const YamlNode& item : node.items) {
        count += count_nodes(item);
    }
    for (const auto& [key, value] : node.entries) {
        count += 1 + count_nodes(value);
    }
    return count;
}

// The proposal loader reads a file (it resolves `workload:` relative to it), so the bytes go
// to a private directory first. Created once per process; removed at exit.
class ScratchDirectory {
public:
    ScratchDirectory() {
        std::string pattern = (std::filesystem::temp_directory_path() / "gpusel-fuzz-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            violated("cannot create a scratch directory");
        }
        m_path = pattern;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

}  // namespace

void fuzz_yaml(const std::uint8_t* data, std::size_t size) {
    try {
        const YamlNode root = parse_yaml_text(as_text(data, size), "fuzz.yaml");
        require(root.kind != YamlNode::Kind::null, "empty document accepted");
        require(depth_of(root) <= static_cast<std::size_t>(max_depth) + 1, "nesting limit not enforced");
        require(count_nodes(root) <= max_nodes, "node limit not enforced");
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

void fuzz_workload(const std::uint8_t* data, std::size_t size) {
    try {
        check_workload(load_workload_text(as_text(data, size), "fuzz.yaml", load_context()));
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

void fuzz_catalog(const std::uint8_t* data, std::size_t size) {
    Catalog catalog = base_catalog();
    try {
        merge_catalog_text(catalog, as_text(data, size), "fuzz.yaml");
        for (const GpuSpec& gpu : catalog.gpus()) {
            check_gpu(gpu);
        }
        for (const Offer& offer : catalog.offers()) {
            check_offer(offer);
        }
        audit_catalog(catalog);
    } catch (const InputError& error) {
        check_diagnostics(error);
        require(catalog.gpus().size() == base_catalog().gpus().size() &&
                    catalog.offers().size() == base_catalog().offers().size(),
                "failed merge changed the catalog");
    }
}

void fuzz_models(const std::uint8_t* data, std::size_t size) {
    ModelLibrary library = base_models();
    try {
        merge_models_text(library, as_text(data, size), "fuzz.yaml");
        for (const ModelSpec& model : library.models()) {
            check_model(model);
        }
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

void fuzz_proposal(const std::uint8_t* data, std::size_t size) {
    static const ScratchDirectory scratch;
    const std::filesystem::path file = scratch.path() / "proposal.yaml";
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
        out.close();
        require(static_cast<bool>(out), "cannot write the scratch proposal file");
    }
    try {
        const Proposal proposal = load_proposal_file(file.string(), load_context());
        require(!proposal.hardware.empty(), "proposal without hardware accepted");
        for (const ProposedHardware& item : proposal.hardware) {
            require(item.count >= 1, "proposal count below 1 accepted");
            check_quantity(item.unit_price_usd, "hardware.unit_price");
        }
        for (const Workload& workload : proposal.project.workloads) {
            check_workload(workload);
        }
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

void fuzz_units(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = as_text(data, size);
    static constexpr std::array kinds{UnitKind::bytes,   UnitKind::count,       UnitKind::bytes_per_second,
                                      UnitKind::seconds, UnitKind::usd,         UnitKind::usd_per_hour,
                                      UnitKind::watts,   UnitKind::usd_per_kwh, UnitKind::fraction,
                                      UnitKind::flops,   UnitKind::plain};
    for (const UnitKind kind : kinds) {
        const ParsedNumber parsed = parse_quantity(text, kind);
        if (parsed.value) {
            require(parsed.error.empty(), "value and error both set");
            require(std::isfinite(*parsed.value) && *parsed.value >= 0, "parse_quantity returned a bad value");
            require(!std::signbit(*parsed.value), "parse_quantity returned -0");
        } else {
            require(!parsed.error.empty(), "failure without message");
        }
    }
    const ParsedNumber integer = parse_integer(text);
    if (integer.value) {
        require(
            *integer.value >= 0 && *integer.value <= 9007199254740992.0 && std::floor(*integer.value) == *integer.value,
            "parse_integer returned a bad value");
    } else {
        require(!integer.error.empty(), "failure without message");
    }
}

void fuzz_hf_config(const std::uint8_t* data, std::size_t size) {
    try {
        const ModelSpec model = model_from_hf_config_text(as_text(data, size), "config.json");
        check_model(model);
        require(model.is_transformer(), "non-transformer config accepted");
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

namespace {

void check_finite(const std::optional<double>& value, std::string_view field) {
    if (value && !std::isfinite(*value)) {
        violated(std::string("not finite: ") + std::string(field));
    }
}

void check_gpu_telemetry(const GpuTelemetry& telemetry) {
    for (const GpuSample& sample : telemetry.samples) {
        for (std::size_t metric = 0; metric < gpu_metric_count; ++metric) {
            const std::optional<double> value = sample.value(static_cast<GpuMetric>(metric));
            check_finite(value, "GPU sample value");
            require(!value || *value >= 0, "negative GPU sample value");
            require(!value || *value <= 100 || !metric_name(static_cast<GpuMetric>(metric)).ends_with("_pct"),
                    "GPU percentage above 100");
        }
        require(sample.line >= 1, "GPU sample without a line");
    }
}

// One parser: a result, or InputError with well-formed diagnostics.
template <typename Parse, typename Check>
void one_parser(Parse parse, Check check) {
    try {
        check(parse());
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

}  // namespace

void fuzz_telemetry(const std::uint8_t* data, std::size_t size) {
    // Every parser sees every input: a seed of one format explores the others' error paths,
    // and the tests/data/telemetry files serve as seeds as they are.
    const std::string_view text = as_text(data, size);
    const std::string file = "telemetry.txt";
    one_parser([&] { return parse_nvidia_smi_dmon(text, file); }, check_gpu_telemetry);
    one_parser([&] { return parse_dcgmi_dmon(text, file); }, check_gpu_telemetry);
    one_parser([&] { return parse_prometheus_text(text, file); }, check_gpu_telemetry);
    one_parser([&] { return parse_prometheus_query_range(text, file); }, check_gpu_telemetry);
    one_parser([&] { return parse_nvidia_smi_query(text, file); }, check_gpu_telemetry);
    one_parser(
        [&] {
            return parse_nvidia_smi_query(text, file, {"index", "utilization.gpu", "memory.used"});
        },
        check_gpu_telemetry);
    one_parser(
        [&] { return parse_cpu_report(text, file); },
        [](const CpuTelemetry& cpu) {
            for (const auto* rows : {&cpu.samples, &cpu.averages}) {
                for (const CpuSample& sample : *rows) {
                    require(sample.busy_pct >= 0 && sample.busy_pct <= 100, "CPU busy outside 0 to 100 %");
                    for (const std::optional<double>& share : {sample.user_pct, sample.system_pct, sample.iowait_pct}) {
                        require(!share || (*share >= 0 && *share <= 100), "CPU share outside 0 to 100 %");
                    }
                    check_finite(sample.busy_pct, "CPU busy");
                    check_finite(sample.user_pct, "CPU user");
                    check_finite(sample.system_pct, "CPU system");
                    check_finite(sample.iowait_pct, "CPU iowait");
                }
            }
            for (const CpuProcess& process : cpu.processes) {
                check_finite(process.cpu_pct, "process CPU");
            }
        });
    one_parser([&] { return parse_perf_report(text, file); },
               [](const PerfProfile& profile) {
                   check_finite(profile.total_samples, "perf total samples");
                   require(!profile.total_samples || *profile.total_samples >= 0, "negative perf sample count");
                   for (const PerfSymbol& symbol : profile.symbols) {
                       check_finite(symbol.self_pct, "perf self");
                       check_finite(symbol.children_pct, "perf children");
                       check_finite(symbol.samples, "perf samples");
                   }
               });
    one_parser([&] { return parse_nvidia_smi_topo(text, file); }, [](const Topology&) {});
    one_parser([&] { return parse_nvidia_smi_q(text, file); },
               [](const SmiReport& report) {
                   for (const SmiGpu& gpu : report.gpus) {
                       for (const std::optional<double>* value : {&gpu.fb_total_bytes,
                                                                  &gpu.fb_used_bytes,
                                                                  &gpu.fb_reserved_bytes,
                                                                  &gpu.ecc_volatile.correctable,
                                                                  &gpu.ecc_volatile.uncorrectable,
                                                                  &gpu.ecc_aggregate.correctable,
                                                                  &gpu.ecc_aggregate.uncorrectable,
                                                                  &gpu.retired_single_bit,
                                                                  &gpu.retired_double_bit,
                                                                  &gpu.remapped_correctable,
                                                                  &gpu.remapped_uncorrectable,
                                                                  &gpu.pcie_replays,
                                                                  &gpu.gpu_util_pct,
                                                                  &gpu.power_draw_watts,
                                                                  &gpu.power_limit_watts,
                                                                  &gpu.default_power_limit_watts,
                                                                  &gpu.max_power_limit_watts,
                                                                  &gpu.sm_clock_mhz,
                                                                  &gpu.memory_clock_mhz,
                                                                  &gpu.max_sm_clock_mhz,
                                                                  &gpu.max_memory_clock_mhz,
                                                                  &gpu.gpu_temp_c,
                                                                  &gpu.memory_temp_c,
                                                                  &gpu.shutdown_temp_c,
                                                                  &gpu.slowdown_temp_c}) {
                           check_finite(*value, "nvidia-smi -q value");
                       }
                   }
               });
    one_parser([&] { return parse_nvidia_smi_nvlink(text, file); },
               [](const std::vector<NvlinkGpu>& gpus) {
                   for (const NvlinkGpu& gpu : gpus) {
                       for (const NvlinkLink& link : gpu.links) {
                           require(std::isfinite(link.bytes_per_s) && link.bytes_per_s >= 0, "NVLink rate not finite");
                       }
                   }
               });
}

void fuzz_skypilot(const std::uint8_t* data, std::size_t size) {
    // An import either refuses the file or writes a catalog that gpusel itself loads: the
    // output goes through the same loader as `--catalog` (issue 38: ids with a space, a
    // newline or a NUL used to be written and then refused).
    SkypilotImportOptions options;
    options.provider = "aws";
    options.schema_version = "v8";
    options.as_of = "2026-11";
    options.imported_on = "2026-12-05";
    options.source_path = "vms.csv";
    try {
        const SkypilotImportResult result =
            import_skypilot_csv(as_text(data, size), "vms.csv", options, base_catalog());
        require(!result.offers.empty(), "import without offers accepted");
        for (const ImportedOffer& offer : result.offers) {
            require(offer.gpus >= 1, "imported offer with fewer than one GPU");
            for (const ImportedPrice& price : offer.prices) {
                for (const std::optional<double>& rate : {price.on_demand_usd_per_hour, price.spot_usd_per_hour}) {
                    require(!rate || (std::isfinite(*rate) && *rate > 0), "imported price not finite and positive");
                }
            }
        }
        Catalog catalog = base_catalog();
        try {
            merge_catalog_text(catalog, result.yaml, "imported.yaml");
        } catch (const InputError& error) {
            violated("the imported catalog does not load: " + format_diagnostic(error.diagnostics().front()));
        }
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

void fuzz_launch(const std::uint8_t* data, std::size_t size) {
    try {
        const LaunchSettings settings = read_launch_settings(as_text(data, size), "launch.yaml");
        require(!settings.kind.empty(), "launch settings without a kind");
        check_finite(settings.memory_fraction, "launch memory fraction");
    } catch (const InputError& error) {
        check_diagnostics(error);
    }
}

std::span<const Target> targets() {
    static constexpr std::array list{Target{"yaml", fuzz_yaml},           Target{"workload", fuzz_workload},
                                     Target{"catalog", fuzz_catalog},     Target{"models", fuzz_models},
                                     Target{"proposal", fuzz_proposal},   Target{"units", fuzz_units},
                                     Target{"hf_config", fuzz_hf_config}, Target{"telemetry", fuzz_telemetry},
                                     Target{"skypilot", fuzz_skypilot},   Target{"launch", fuzz_launch}};
    return list;
}

const Target* find_target(std::string_view name) {
    for (const Target& target : targets()) {
        if (target.name == name) {
            return &target;
        }
    }
    return nullptr;
}

}  // namespace gpusel::fuzz
