#pragma once
// Numeric formats: the compute precision of matrix math, the storage format of weights,
// and the KV-cache format. Names are the workload-file spellings.

#include <array>
#include <optional>
#include <string_view>

namespace gpusel {

// Compute precision of tensor/matrix math. Index into GpuSpec::dense_tflops.
enum class Precision { fp32, tf32, fp16, bf16, fp8, int8, int4, fp4 };
inline constexpr std::size_t precision_count = 8;
inline constexpr std::array<Precision, precision_count> all_precisions = {
    Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
    Precision::fp8,  Precision::int8, Precision::int4, Precision::fp4};

std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view name);

// Bytes of one activation/gradient element computed in this precision (tf32 stores fp32).
double element_bytes(Precision precision);

// Storage format of model weights, including quantized formats. fp8_block is FP8 with one FP32
// scale per 128×128 block (DeepSeek-V3's checkpoint); nvfp4 and mxfp4 are the block-scaled FP4
// formats (E2M1 values; NVFP4: an FP8 E4M3 scale per 16 and an FP32 scale per tensor; MXFP4: an
// E8M0 scale per 32).
enum class WeightFormat {
    fp32,
    fp16,
    bf16,
    fp8,
    int8,
    int4,
    nf4,
    nf4_dq,
    q4_0,
    q4_k_m,
    q8_0,
    awq,
    gptq,
    fp8_block,
    nvfp4,
    mxfp4
};

std::string_view to_string(WeightFormat format);
std::optional<WeightFormat> parse_weight_format(std::string_view name);

// Bits per weight including quantization scales and zero points. Sources: llama.cpp load logs
// (Q8_0 8.5, Q4_0 4.5+, Q4_K_M 4.84), QLoRA paper §3 (NF4 4.5; with double quantization ≈ 4.127),
// GPTQ/AWQ group size 128 ≈ 4.25, FP8 with 128×128 FP32 block scales 8 + 32/16384 ≈ 8.002, NVFP4
// 4 + 8/16 = 4.5, MXFP4 4 + 8/32 = 4.25; see docs/memory-model.md.
double bits_per_weight(WeightFormat format);

// True for formats that need a dequantizing kernel (not a native matmul input). NVFP4 and MXFP4
// count as quantized: only GPUs with an FP4 tensor path take them as matmul inputs.
bool is_quantized(WeightFormat format);

// FP8 weights, per-tensor/per-channel (fp8) or block-scaled (fp8-block): both feed FP8 GEMMs.
bool is_fp8_format(WeightFormat format);

// The block-scaled FP4 formats (nvfp4, mxfp4): FP4 tensor-core inputs where the GPU has them,
// weight-only (dequantized in the kernel) elsewhere.
bool is_fp4_format(WeightFormat format);

// KV-cache element format.
enum class KvCacheFormat { fp16, bf16, fp8, int8, fp32 };

std::string_view to_string(KvCacheFormat format);
std::optional<KvCacheFormat> parse_kv_cache_format(std::string_view name);
double element_bytes(KvCacheFormat format);

}  // namespace gpusel
