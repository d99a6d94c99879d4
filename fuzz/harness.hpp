#pragma once
// Fuzz harnesses: one function per input boundary, shared by the libFuzzer targets (clang,
// GPUSEL_BUILD_FUZZERS) and the replay driver that runs every corpus file and every
// regression file as an ordinary test in the normal build. Each function feeds the bytes to
// one loader and checks the loader's contract: it either returns a value whose numbers are
// finite and non-negative, or throws InputError whose diagnostics are well formed. Any other
// outcome (another exception, a broken invariant) aborts, which both drivers report as a
// failure.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace gpusel::fuzz {

using Harness = void (*)(const std::uint8_t* data, std::size_t size);

struct Target {
    std::string_view name;  // also the folder name under fuzz/corpus/ and fuzz/regressions/
    Harness run;
};

void fuzz_yaml(const std::uint8_t* data, std::size_t size);       // parse_yaml_text
void fuzz_workload(const std::uint8_t* data, std::size_t size);   // load_workload_text
void fuzz_catalog(const std::uint8_t* data, std::size_t size);    // merge_catalog_text
void fuzz_models(const std::uint8_t* data, std::size_t size);     // merge_models_text
void fuzz_proposal(const std::uint8_t* data, std::size_t size);   // load_proposal_file
void fuzz_units(const std::uint8_t* data, std::size_t size);      // parse_quantity, parse_integer
void fuzz_hf_config(const std::uint8_t* data, std::size_t size);  // model_from_hf_config_text
void fuzz_telemetry(const std::uint8_t* data, std::size_t size);  // every telemetry parser
void fuzz_skypilot(const std::uint8_t* data, std::size_t size);   // import_skypilot_csv, then the catalog loader
void fuzz_launch(const std::uint8_t* data, std::size_t size);     // read_launch_settings (deploy --verify)

std::span<const Target> targets();
const Target* find_target(std::string_view name);

}  // namespace gpusel::fuzz
