#include "io/json_output.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace gpusel {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string_view last_key(std::string_view path) {
    const std::size_t dot = path.find_last_of('.');
    return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

}  // namespace

JsonResolution resolution_of(std::string_view path) {
    const std::string_view key = last_key(path);
    // Unit prices first: they end in `_usd` too.
    if (ends_with(key, "price_usd") || key == "usd_per_unit") {
        return JsonResolution::significant;
    }
    if (ends_with(key, "_bytes") || ends_with(key, "_flops_per_s")) {
        return JsonResolution::whole;
    }
    if (ends_with(key, "_usd") || ends_with(key, "_usd_per_hour") || ends_with(key, "_usd_per_month") ||
        key == "usd_per_month") {
        return JsonResolution::cents;
    }
    return JsonResolution::significant;
}

JsonDocument json_number(std::string_view path, double value, std::vector<std::string>& notes) {
    if (!std::isfinite(value)) {
        notes.push_back(fmt::format("{}: the computed value is not a finite number ({}); written as null", path,
                                    std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf")));
        return JsonDocument(nullptr);
    }
    switch (resolution_of(path)) {
        case JsonResolution::whole:
            // Beyond what a long long holds the double is already whole; keep it as it is.
            if (std::fabs(value) < 9e18) {
                return JsonDocument(static_cast<long long>(std::llround(value)));
            }
            return JsonDocument(value);
        case JsonResolution::cents:
            return JsonDocument(round_to(value, 2));
        case JsonResolution::significant:
            break;
    }
    return JsonDocument(round_significant(value, 6));
}

JsonDocument json_number(std::string_view path, const std::optional<double>& value, std::vector<std::string>& notes) {
    return value ? json_number(path, *value, notes) : JsonDocument(nullptr);
}

double round_to(double value, int decimals) {
    if (!std::isfinite(value)) {
        return value;
    }
    if (decimals < 0 || decimals > 9) {
        throw std::invalid_argument("round_to: decimals out of range");
    }
    static constexpr std::array<double, 10> scale{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    const double scaled = value * scale[static_cast<std::size_t>(decimals)];
    // Beyond 2^53 every double is an integer already; scaling back would only add error.
    if (std::fabs(scaled) >= 9007199254740992.0) {
        return value;
    }
    const double rounded = std::round(scaled) / scale[static_cast<std::size_t>(decimals)];
    return rounded == 0.0 ? 0.0 : rounded;
}

double round_significant(double value, int digits) {
    if (digits < 1 || digits > 15) {
        throw std::invalid_argument("round_significant: digits out of range");
    }
    if (value == 0.0 || !std::isfinite(value)) {
        return value == 0.0 ? 0.0 : value;
    }
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
    // A subnormal value needs a scale beyond double's range; it is far below any step anyway.
    if (!std::isfinite(scale)) {
        return value;
    }
    return std::round(value * scale) / scale;
}

namespace {

// The pointer of the first non-finite number, or nullopt. Iterative: a document built by a
// renderer is shallow, but nothing here should depend on that.
std::optional<std::string> find_non_finite(const JsonDocument& document) {
    std::vector<std::pair<const JsonDocument*, std::string>> pending{{&document, ""}};
    while (!pending.empty()) {
        auto [node, pointer] = std::move(pending.back());
        pending.pop_back();
        if (node->is_number_float()) {
            if (!std::isfinite(node->get<double>())) {
                return pointer.empty() ? std::string("/") : pointer;
            }
        } else if (node->is_object()) {
            for (auto it = node->begin(); it != node->end(); ++it) {
                pending.emplace_back(&it.value(), pointer + "/" + it.key());
            }
        } else if (node->is_array()) {
            for (std::size_t i = 0; i < node->size(); ++i) {
                pending.emplace_back(&(*node)[i], fmt::format("{}/{}", pointer, i));
            }
        }
    }
    return std::nullopt;
}

}  // namespace

std::string dump_json(const JsonDocument& document) {
    if (const std::optional<std::string> pointer = find_non_finite(document)) {
        throw std::invalid_argument(fmt::format("JSON output holds a non-finite number at {}", *pointer));
    }
    std::string text = document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    text.push_back('\n');
    return text;
}

}  // namespace gpusel
