#pragma once
// Acceptance checks of delivered (or rented, or used) GPUs: an `nvidia-smi -q` report, and
// optionally `nvidia-smi nvlink -s`, against the catalog entry the seller claims; with a plan
// (`verify --plan`), also against what the plan assumed: the node's GPU count, the NVLink and
// NUMA placement its layout needs, and a smoke test judged against its speed band. Pure.
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

// What a plan assumed for one role's pick, read from `gpusel plan --format json`
// (docs/spec/cli.md): the acceptance of `gpusel verify --plan` is derived from it.
struct PlanAssumption {
    std::string file;
    std::string role;       // "inference", "training", ...
    std::string workload;   // the workload's name
    std::string gpu;        // catalog id of the pick
    int count = 0;          // GPUs of the pick, spares included
    int gpus_per_node = 0;  // GPUs of one bought or rented unit (offer.gpus_per_unit), at most count
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int data_parallel = 1;
    std::string precision;  // "bf16", ...
    bool serving = false;   // the pick has an inference estimate
    // Serving: the request shape and load of the estimate; replicas that carry load.
    std::string model;  // Hugging Face id when the workload named one, else ""
    int input_tokens = 0;
    int output_tokens = 0;  // 0: the workload generates no tokens
    int batch = 0;          // sequences per replica
    int concurrency = 0;    // closed-loop clients over the deployment; 0 = open loop
    int replicas = 1;
    // Training: the whole-step model FLOP utilisation the estimate assumed.
    double mfu = 0;
    // The speed the decision rests on, whole pick, and its band (perf.band.figures).
    std::string figure;  // "inference.output_tokens_per_s", "training.tokens_per_s"
    double predicted = 0;
    double band_low = 0;
    double band_high = 0;
};

// Reads the role `role` of a plan JSON document ("" = the only role with a winner). Throws
// InputError naming `file` and the JSON path when the document is not a plan or lacks a field,
// and UsageError when `role` is not in it or is needed to choose.
PlanAssumption read_plan_assumption(std::string_view text, const std::string& file, const std::string& role);

// What to run on the delivered node and the band its figure must fall in. Serving: one replica
// with `vllm bench serve` at the plan's request shape and clients per replica; its output
// tokens/s against the plan's band divided by the serving replicas. Training: a GEMM probe at the
// plan's precision, whose TFLOP/s per GPU must reach what the plan's MFU needs of the peak.
struct SmokeTest {
    std::string kind;        // "vllm-bench-serve", "gemm-probe", or "" when none can be run on one node
    std::string command;     // a shell command line
    std::string figure;      // "output tokens/s of one replica", "TFLOP/s per GPU"
    std::string result_key;  // the field of the result file judged ("output_throughput"), "" when
                             // verify does not read the result
    double predicted = 0;
    double low = 0;
    double high = 0;    // 0: no upper end
    std::string basis;  // one sentence: how the band was derived from the plan
};
SmokeTest smoke_test(const PlanAssumption& plan, const GpuSpec& gpu);

// The acceptance of a node against the plan: node checks (gpu-count, plan-nvlink,
// numa-placement), the smoke test to run, and its result when one was read.
struct Acceptance {
    PlanAssumption plan;
    std::vector<CheckResult> checks;
    SmokeTest smoke;
    std::optional<CheckResult> result;  // check "smoke-test"; absent until a result is given
    bool passed() const;                // no node check and no result failed
};

// The node checks. `nvlink` is `nvidia-smi nvlink -s` (may be empty), `topology` `nvidia-smi
// topo -m` (nullptr when not given). The GPUs of a tensor-parallel group are consecutive
// (vLLM and Megatron-LM place ranks by CUDA device order), groups of tensor_parallel GPUs from
// GPU 0; training's data-parallel all-reduce spans the node's GPUs.
Acceptance accept_node(const PlanAssumption& plan, const GpuSpec& gpu, const SmiReport& report,
                       const std::vector<NvlinkGpu>& nvlink, const Topology* topology);

// Judges a smoke-test figure: below the band's low end fails, inside passes, above passes with
// a note (the plan was pessimistic: cheaper hardware may do).
CheckResult judge_smoke_result(const SmokeTest& smoke, double measured, const std::string& file);

struct Verification {
    std::string expected_id;
    std::string driver_version;
    std::string cuda_version;
    std::vector<GpuVerification> gpus;
    std::vector<std::string> notes;
    std::optional<Acceptance> acceptance;  // with `verify --plan`
    bool passed() const;                   // every GPU passed, and the acceptance when present
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
