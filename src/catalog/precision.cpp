#include "catalog/precision.hpp"

#include <utility>

namespace gpusel {

namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> find_by_name(const std::pair<Enum, std::string_view> (&table)[N], std::string_view name) {
    for (const auto& [value, text] : table) {
        if (text == name) {
            return value;
        }
    }
    return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view find_name(const std::pair<Enum, std::string_view> (&table)[N], Enum value) {
    for (const auto& [candidate, text] : table) {
        if (candidate == value) {
            return text;
        }
    }
    return "?";
}

constexpr std::pair<Precision, std::string_view> precision_names[] = {
    {Precision::fp32, "fp32"}, {Precision::tf32, "tf32"}, {Precision::fp16, "fp16"}, {Precision::bf16, "bf16"},
    {Precision::fp8, "fp8"},   {Precision::int8, "int8"}, {Precision::int4, "int4"}, {Precision::fp4, "fp4"}};

constexpr std::pair<WeightFormat, std::string_view> weight_names[] = {
    {WeightFormat::fp32, "fp32"},     {WeightFormat::fp16, "fp16"},           {WeightFormat::bf16, "bf16"},
    {WeightFormat::fp8, "fp8"},       {WeightFormat::int8, "int8"},           {WeightFormat::int4, "int4"},
    {WeightFormat::nf4, "nf4"},       {WeightFormat::nf4_dq, "nf4-dq"},       {WeightFormat::q4_0, "q4_0"},
    {WeightFormat::q4_k_m, "q4_k_m"}, {WeightFormat::q8_0, "q8_0"},           {WeightFormat::awq, "awq"},
    {WeightFormat::gptq, "gptq"},     {WeightFormat::fp8_block, "fp8-block"}, {WeightFormat::nvfp4, "nvfp4"},
    {WeightFormat::mxfp4, "mxfp4"}};

constexpr std::pair<KvCacheFormat, std::string_view> kv_names[] = {{KvCacheFormat::fp16, "fp16"},
                                                                   {KvCacheFormat::bf16, "bf16"},
                                                                   {KvCacheFormat::fp8, "fp8"},
                                                                   {KvCacheFormat::int8, "int8"},
                                                                   {KvCacheFormat::fp32, "fp32"}};

}  // namespace

std::string_view to_string(Precision precision) {
    return find_name(precision_names, precision);
}
std::optional<Precision> parse_precision(std::string_view name) {
    return find_by_name(precision_names, name);
}

double element_bytes(Precision precision) {
    switch (precision) {
        case Precision::fp32:
        case Precision::tf32:
            return 4;
        case Precision::fp16:
        case Precision::bf16:
            return 2;
        case Precision::fp8:
        case Precision::int8:
            return 1;
        case Precision::int4:
        case Precision::fp4:
            return 0.5;
    }
    return 4;
}

std::string_view to_string(WeightFormat format) {
    return find_name(weight_names, format);
}
std::optional<WeightFormat> parse_weight_format(std::string_view name) {
    return find_by_name(weight_names, name);
}

double bits_per_weight(WeightFormat format) {
    switch (format) {
        case WeightFormat::fp32:
            return 32;
        case WeightFormat::fp16:
        case WeightFormat::bf16:
            return 16;
        case WeightFormat::fp8:  // per-tensor or per-channel scales: 32/K bits, under 0.01 % of a row
        case WeightFormat::int8:
            return 8;
        case WeightFormat::int4:
            return 4.25;  // weight-only int4 with one fp16 scale per group of 128 (GPTQ/AWQ default)
        case WeightFormat::nf4:
            // QLoRA §3: 4-bit codes + one fp32 absmax per block of 64 = 4 + 32/64 (bitsandbytes nf4 and fp4
            // without double quantization, the BitsAndBytesConfig default).
            return 4.5;
        case WeightFormat::nf4_dq:
            return 4.127;  // QLoRA §3: the block-64 scales double-quantized to 8 bits: 4 + 8/64 + 32/(64·256)
        case WeightFormat::q4_0:
            return 4.54;  // llama.cpp load log BPW for a whole Q4_0 file (4.5 per block + a Q6_K output layer)
        case WeightFormat::q4_k_m:
            return 4.84;  // llama.cpp load log, "Q4_K - Medium ... 4.84 BPW"
        case WeightFormat::q8_0:
            return 8.5;  // llama.cpp block of 32 int8 + one fp16 scale = 34 bytes / 32
        case WeightFormat::awq:
        case WeightFormat::gptq:
            return 4.25;  // 4-bit, group size 128, fp16 scale (+ packed zero point)
        case WeightFormat::fp8_block:
            // DeepSeek-V3 config.json quantization_config: fmt e4m3, weight_block_size [128, 128],
            // one FP32 scale (weight_scale_inv) per 128×128 block: 8 + 32/16384 bits.
            return 8.0 + 32.0 / (128.0 * 128.0);
        case WeightFormat::nvfp4:
            // NVIDIA "Introducing NVFP4" (developer blog, 2025-06) and TensorRT Model Optimizer:
            // E2M1 values with one FP8 E4M3 scale per 16 and one FP32 scale per tensor (negligible).
            return 4.0 + 8.0 / 16.0;
        case WeightFormat::mxfp4:
            // OCP Microscaling Formats (MX) Specification v1.0 (2023-09), §5: MXFP4 is 32 E2M1
            // elements sharing one E8M0 scale.
            return 4.0 + 8.0 / 32.0;
    }
    return 16;
}

bool is_quantized(WeightFormat format) {
    switch (format) {
        case WeightFormat::fp32:
        case WeightFormat::fp16:
        case WeightFormat::bf16:
        case WeightFormat::fp8:
        case WeightFormat::fp8_block:
            return false;
        default:
            return true;
    }
}

bool is_fp8_format(WeightFormat format) {
    return format == WeightFormat::fp8 || format == WeightFormat::fp8_block;
}

bool is_fp4_format(WeightFormat format) {
    return format == WeightFormat::nvfp4 || format == WeightFormat::mxfp4;
}

std::string_view to_string(KvCacheFormat format) {
    return find_name(kv_names, format);
}
std::optional<KvCacheFormat> parse_kv_cache_format(std::string_view name) {
    return find_by_name(kv_names, name);
}

double element_bytes(KvCacheFormat format) {
    if (format == KvCacheFormat::fp32) {
        return 4.0;  // the model's dtype under --dtype float32 (vLLM kv-cache-dtype auto)
    }
    return format == KvCacheFormat::fp16 || format == KvCacheFormat::bf16 ? 2.0 : 1.0;
}

}  // namespace gpusel
