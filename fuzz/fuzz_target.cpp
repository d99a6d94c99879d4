// libFuzzer entry point; compiled once per harness with GPUSEL_FUZZ_HARNESS set to its name.
#include <cstddef>
#include <cstdint>

#include "harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gpusel::fuzz::GPUSEL_FUZZ_HARNESS(data, size);
    return 0;
}
