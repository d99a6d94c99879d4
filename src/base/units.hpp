#pragma once
// Strict parsing of numbers and unit strings, independent of the locale.
//
// Grammar: NUMBER [UNIT], NUMBER = digits ["." digits] [("e"|"E") ["+"|"-"] digits].
// No sign, no leading zeros on integers ("010"), no hex, no thousands separators,
// no NaN/Inf; the result is finite. One optional space may separate number and unit.
// Units are case-sensitive. A bare number means the base unit of the kind.

#include <optional>
#include <string>
#include <string_view>

namespace gpusel {

enum class UnitKind {
    bytes,             // B KB MB GB TB PB (1e3^n) KiB MiB GiB TiB PiB (2^10n); base: bytes
    count,             // K M B T (1e3, 1e6, 1e9, 1e12); base: 1
    bytes_per_second,  // a size followed by "/s"; base: bytes/s
    seconds,           // ms s min h d w mo (365.25/12 d) y (365.25 d); base: seconds
    usd,               // USD; base: USD
    usd_per_hour,      // USD/h; base: USD per hour
    watts,             // W kW; base: watts
    usd_per_kwh,       // USD/kWh; base: USD per kWh
    fraction,          // "10%" = 0.10, or a bare fraction 0.1
    flops,             // FLOP KFLOP MFLOP GFLOP TFLOP PFLOP; base: FLOPs
    plain,             // a bare number, no unit allowed
};

// The result of a parse: a value, or a message saying what is wrong and what is expected.
struct ParsedNumber {
    std::optional<double> value;
    std::string error;  // empty when value is set
};

// Parses `text` as a quantity of `kind`, returned in the base unit.
ParsedNumber parse_quantity(std::string_view text, UnitKind kind);

// Parses a non-negative integer written in plain decimal digits (no sign, no leading zero,
// no exponent), up to 2^53.
ParsedNumber parse_integer(std::string_view text);

// Human-readable list of accepted units, for messages ("e.g. 80GB, 24GiB").
std::string_view unit_examples(UnitKind kind);

// Sizes and rates: GB = 1e9 bytes, GiB = 2^30 (docs/spec: "GB = 1e9, GiB = 2^30, always said").
constexpr double bytes_per_mib = 1024.0 * 1024.0;
constexpr double flops_per_tflop = 1e12;  // a TFLOPS figure × this = FLOP/s

// Months in a duration: 1 month = 365.25 / 12 days.
constexpr double seconds_per_month = 365.25 / 12.0 * 86400.0;
constexpr double seconds_per_hour = 3600.0;
constexpr double hours_per_month = seconds_per_month / seconds_per_hour;  // 730.5
constexpr double minutes_per_hour = 60.0;
constexpr double watts_per_kilowatt = 1000.0;
constexpr double bytes_per_gib = 1024.0 * 1024.0 * 1024.0;
constexpr double bytes_per_gb = 1e9;

}  // namespace gpusel
