#include "base/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace gpusel {

namespace {

struct UnitFactor {
    std::string_view unit;
    double factor;
};

// Tables per kind: `B` means bytes for sizes and billions for counts, so each kind has its own.
constexpr std::array byte_units{UnitFactor{"B", 1.0},
                                UnitFactor{"KB", 1e3},
                                UnitFactor{"MB", 1e6},
                                UnitFactor{"GB", 1e9},
                                UnitFactor{"TB", 1e12},
                                UnitFactor{"PB", 1e15},
                                UnitFactor{"KiB", 1024.0},
                                UnitFactor{"MiB", 1048576.0},
                                UnitFactor{"GiB", 1073741824.0},
                                UnitFactor{"TiB", 1099511627776.0},
                                UnitFactor{"PiB", 1125899906842624.0}};
constexpr std::array count_units{UnitFactor{"K", 1e3}, UnitFactor{"M", 1e6}, UnitFactor{"B", 1e9},
                                 UnitFactor{"T", 1e12}};
constexpr double day = 86400.0;
constexpr std::array time_units{UnitFactor{"ms", 1e-3},
                                UnitFactor{"s", 1.0},
                                UnitFactor{"min", 60.0},
                                UnitFactor{"h", 3600.0},
                                UnitFactor{"d", day},
                                UnitFactor{"w", 7 * day},
                                UnitFactor{"mo", 365.25 / 12.0 * day},
                                UnitFactor{"y", 365.25 * day}};
constexpr std::array usd_units{UnitFactor{"USD", 1.0}};
constexpr std::array usd_per_hour_units{UnitFactor{"USD/h", 1.0}};
constexpr std::array watt_units{UnitFactor{"W", 1.0}, UnitFactor{"kW", 1e3}};
constexpr std::array energy_units{UnitFactor{"USD/kWh", 1.0}};
constexpr std::array fraction_units{UnitFactor{"%", 0.01}};
constexpr std::array flop_units{UnitFactor{"FLOP", 1.0},  UnitFactor{"KFLOP", 1e3},  UnitFactor{"MFLOP", 1e6},
                                UnitFactor{"GFLOP", 1e9}, UnitFactor{"TFLOP", 1e12}, UnitFactor{"PFLOP", 1e15}};

template <std::size_t N>
std::optional<double> lookup(const std::array<UnitFactor, N>& table, std::string_view unit) {
    for (const UnitFactor& entry : table) {
        if (entry.unit == unit) {
            return entry.factor;
        }
    }
    return std::nullopt;
}

std::optional<double> unit_factor(UnitKind kind, std::string_view unit) {
    switch (kind) {
        case UnitKind::bytes:
            return lookup(byte_units, unit);
        case UnitKind::count:
            return lookup(count_units, unit);
        case UnitKind::bytes_per_second:
            if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
                return lookup(byte_units, unit.substr(0, unit.size() - 2));
            }
            return std::nullopt;
        case UnitKind::seconds:
            return lookup(time_units, unit);
        case UnitKind::usd:
            return lookup(usd_units, unit);
        case UnitKind::usd_per_hour:
            return lookup(usd_per_hour_units, unit);
        case UnitKind::watts:
            return lookup(watt_units, unit);
        case UnitKind::usd_per_kwh:
            return lookup(energy_units, unit);
        case UnitKind::fraction:
            return lookup(fraction_units, unit);
        case UnitKind::flops:
            return lookup(flop_units, unit);
        case UnitKind::plain:
            return std::nullopt;
    }
    return std::nullopt;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Length of the number at the start of `text` per the grammar in units.hpp; 0 if none.
std::size_t number_length(std::string_view text) {
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t start = i;
        while (i < text.size() && is_digit(text[i])) {
            ++i;
        }
        return i - start;
    };
    if (digits() == 0) {
        return 0;
    }
    if (i < text.size() && text[i] == '.') {
        const std::size_t dot = i++;
        if (digits() == 0) {
            return dot;  // "5." is not a number; leave "." to the unit check
        }
    }
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        const std::size_t mark = i++;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
            ++i;
        }
        if (digits() == 0) {
            return mark;  // "5E" is a number followed by a unit "E"
        }
    }
    return i;
}

ParsedNumber failure(std::string message) {
    return ParsedNumber{std::nullopt, std::move(message)};
}

}  // namespace

std::string_view unit_examples(UnitKind kind) {
    switch (kind) {
        case UnitKind::bytes:
            return "a size such as 80GB, 24GiB or 512MiB (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
        case UnitKind::count:
            return "a count such as 7B, 350M or 1.5T (K, M, B, T)";
        case UnitKind::bytes_per_second:
            return "a bandwidth such as 2TB/s or 900GB/s";
        case UnitKind::seconds:
            return "a duration such as 300ms, 2s, 14d or 24mo (ms, s, min, h, d, w, mo, y)";
        case UnitKind::usd:
            return "an amount such as 15000 or 15000USD";
        case UnitKind::usd_per_hour:
            return "an hourly price such as 2.5USD/h";
        case UnitKind::watts:
            return "a power such as 700W or 1.2kW";
        case UnitKind::usd_per_kwh:
            return "an energy price such as 0.12USD/kWh";
        case UnitKind::fraction:
            return "a percentage such as 10% or a fraction such as 0.1";
        case UnitKind::flops:
            return "an amount of work such as 4.1GFLOP (FLOP, KFLOP, MFLOP, GFLOP, TFLOP, PFLOP)";
        case UnitKind::plain:
            return "a plain number such as 42 or 0.5";
    }
    return "a number";
}

ParsedNumber parse_quantity(std::string_view text, UnitKind kind) {
    if (text.empty()) {
        return failure(fmt::format("expected {}, got an empty value", unit_examples(kind)));
    }
    if (text.front() == '-') {
        return failure(fmt::format("'{}' is negative; expected {}", text, unit_examples(kind)));
    }
    const std::size_t length = number_length(text);
    if (length == 0) {
        return failure(fmt::format("'{}' is not a number; expected {}", text, unit_examples(kind)));
    }
    const std::string_view number = text.substr(0, length);
    // "010" is octal to some YAML readers and decimal to others: refuse it.
    if (number.size() > 1 && number[0] == '0' && is_digit(number[1])) {
        return failure(fmt::format("'{}' has a leading zero; write the number without it", text));
    }
    double value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (error == std::errc::result_out_of_range || (error == std::errc{} && !std::isfinite(value))) {
        return failure(fmt::format("'{}' is out of range", text));
    }
    if (error != std::errc{} || end != number.data() + number.size()) {
        return failure(fmt::format("'{}' is not a number; expected {}", text, unit_examples(kind)));
    }
    std::string_view unit = text.substr(length);
    if (!unit.empty() && unit.front() == ' ') {
        unit.remove_prefix(1);
        if (unit.empty()) {
            return failure(fmt::format("'{}' has trailing space", text));
        }
    }
    // Units are never guessed: "ttft: 300" could be milliseconds or seconds, and "25" as a share
    // could be 25 % or 2,500 %; both were read silently the second way.
    if (unit.empty() && kind == UnitKind::seconds && value != 0) {
        return failure(fmt::format("'{}' has no unit; write {}ms, {}s or another duration unit (min, h, d)", text,
                                   number, number));
    }
    if (unit.empty() && kind == UnitKind::fraction && value > 1) {
        return failure(fmt::format("'{}' is above 1 as a fraction; write {}% or {:g}", text, number, value / 100));
    }
    double factor = 1.0;
    if (!unit.empty()) {
        const std::optional<double> found = unit_factor(kind, unit);
        if (!found) {
            if (kind == UnitKind::plain) {
                return failure(fmt::format("'{}' is not a plain number; no unit is allowed here", text));
            }
            return failure(fmt::format("'{}' has an unknown unit '{}'; expected {}", text, unit, unit_examples(kind)));
        }
        factor = *found;
    }
    const double scaled = value * factor;
    if (!std::isfinite(scaled)) {
        return failure(fmt::format("'{}' is out of range", text));
    }
    return ParsedNumber{scaled == 0.0 ? 0.0 : scaled, {}};  // no negative zero
}

ParsedNumber parse_integer(std::string_view text) {
    if (text.empty()) {
        return failure("expected an integer, got an empty value");
    }
    for (const char c : text) {
        if (!is_digit(c)) {
            return failure(fmt::format("'{}' is not a whole number written in decimal digits", text));
        }
    }
    if (text.size() > 1 && text[0] == '0') {
        return failure(fmt::format("'{}' has a leading zero; write the number without it", text));
    }
    if (text.size() > 16) {
        return failure(fmt::format("'{}' is out of range", text));
    }
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    if (value > 9007199254740992.0) {
        return failure(fmt::format("'{}' is out of range", text));
    }
    return ParsedNumber{value, {}};
}

}  // namespace gpusel
