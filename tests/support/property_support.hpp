#pragma once
// Seeded random inputs for the property tests (tests/unit/test_properties.cpp).
//
// Every case draws from its own 64-bit seed, derived from a base seed, the property's stream
// number and the case index; the same seed gives the same case on every machine and standard
// library (std::mt19937_64's output is fixed by the standard; the mapping to ranges below is our
// own, not std::uniform_int_distribution, whose algorithm is implementation-defined).
//
// Environment (all optional; docs/reliability.md, "Estimates and plans"):
//   GPUSEL_PROPERTY_SEED=N       another base seed (decimal), to explore new cases
//   GPUSEL_PROPERTY_SCALE=K      K times the cases of every property (a longer local run)
//   GPUSEL_PROPERTY_CASE=S       run only the case with seed S (as printed by a failure)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "inputs/models.hpp"

namespace gpusel::test {

inline constexpr std::uint64_t default_property_seed = 20240917;

inline std::uint64_t environment_number(const char* name, std::uint64_t fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') {
        return fallback;
    }
    return std::strtoull(text, nullptr, 10);
}

// SplitMix64 (Steele, Lea, Flood 2014): decorrelates neighbouring seeds.
inline std::uint64_t splitmix64(std::uint64_t value) {
    value += 0x9E3779B97F4A7C15ULL;
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ULL;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBULL;
    return value ^ (value >> 31);
}

// The seeds of `count` cases of property `stream` (a number unique per property), or the one
// seed named by GPUSEL_PROPERTY_CASE.
inline std::vector<std::uint64_t> property_case_seeds(std::uint64_t stream, int count) {
    if (const std::uint64_t only = environment_number("GPUSEL_PROPERTY_CASE", 0); only != 0) {
        return {only};
    }
    const std::uint64_t base = environment_number("GPUSEL_PROPERTY_SEED", default_property_seed);
    const std::uint64_t scale = std::max<std::uint64_t>(1, environment_number("GPUSEL_PROPERTY_SCALE", 1));
    const std::uint64_t cases = static_cast<std::uint64_t>(std::max(count, 1)) * scale;
    std::vector<std::uint64_t> seeds;
    seeds.reserve(static_cast<std::size_t>(cases));
    const std::uint64_t stream_seed = splitmix64(base ^ splitmix64(stream));
    for (std::uint64_t index = 0; index < cases; ++index) {
        // Never 0: that value means "not set" in GPUSEL_PROPERTY_CASE.
        seeds.push_back(splitmix64(stream_seed + index) | 1ULL);
    }
    return seeds;
}

class PropertyRng {
public:
    explicit PropertyRng(std::uint64_t seed) : m_engine(seed) {}

    // Uniform in [low, high]. The modulo bias is below 2^-40 for ranges under 2^24.
    int integer(int low, int high) {
        const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(high) - low + 1);
        return static_cast<int>(low + static_cast<std::int64_t>(m_engine() % span));
    }
    // Uniform in [low, high) from the top 53 bits.
    double real(double low, double high) {
        const double unit = static_cast<double>(m_engine() >> 11) * 0x1.0p-53;
        return low + (high - low) * unit;
    }
    // Log-uniform in [low, high): magnitudes spread evenly over decades.
    double log_real(double low, double high) { return low * std::pow(high / low, real(0.0, 1.0)); }
    bool chance(double probability) { return real(0.0, 1.0) < probability; }

    template <typename T>
    const T& pick(const std::vector<T>& options) {
        return options.at(static_cast<std::size_t>(integer(0, static_cast<int>(options.size()) - 1)));
    }
    template <typename T>
    T pick(std::initializer_list<T> options) {
        return *(options.begin() + integer(0, static_cast<int>(options.size()) - 1));
    }
    // A random subset of `options`, each kept with `probability`, in their original order.
    template <typename T>
    std::vector<T> subset(const std::vector<T>& options, double probability) {
        std::vector<T> kept;
        for (const T& option : options) {
            if (chance(probability)) {
                kept.push_back(option);
            }
        }
        return kept;
    }

private:
    std::mt19937_64 m_engine;
};

// "{a: 1, b: [x, y]}" from key/value pairs; values are written as given (already YAML).
class FlowMap {
public:
    FlowMap& add(std::string_view key, std::string_view value) {
        m_entries.push_back(fmt::format("{}: {}", key, value));
        return *this;
    }
    template <typename T>
    FlowMap& add_number(std::string_view key, T value) {
        return add(key, fmt::format("{}", value));
    }
    bool empty() const { return m_entries.empty(); }
    std::string str() const { return fmt::format("{{{}}}", fmt::join(m_entries, ", ")); }

private:
    std::vector<std::string> m_entries;
};

inline std::string flow_list(const std::vector<std::string>& items) {
    return fmt::format("[{}]", fmt::join(items, ", "));
}

// Transformer dimension options that divide the model: tensor parallel must divide the heads
// (and KV heads, or replicate them), pipeline parallel the layers.
inline std::vector<int> tensor_parallel_options(const ModelSpec& model) {
    std::vector<int> options{1};
    if (!model.is_transformer()) {
        return options;
    }
    for (const int t : {2, 4, 8}) {
        if (model.heads % t == 0) {
            options.push_back(t);
        }
    }
    return options;
}

inline std::vector<int> pipeline_parallel_options(const ModelSpec& model) {
    std::vector<int> options{1};
    if (!model.is_transformer()) {
        return options;
    }
    for (const int p : {2, 4, 8}) {
        if (model.layers % p == 0) {
            options.push_back(p);
        }
    }
    return options;
}

}  // namespace gpusel::test
