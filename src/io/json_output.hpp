#pragma once
// JSON output (io layer; docs/reliability.md, "JSON"). Documents are nlohmann::ordered_json,
// so keys keep the order in which a renderer adds them (spec/cli.md's order).
//
//  - One number policy for every JSON document (json_number): the unit suffix of the key
//    chooses the resolution (whole bytes, cents, six significant digits), and a value that could
//    not be computed is written as null with one note wording naming its path. dump_json()
//    refuses a document that still holds a non-finite number (a programming error,
//    std::invalid_argument) rather than letting nlohmann print it silently as null.
//  - -0 is written as 0.
//  - Text: 2-space indent, a trailing newline; invalid UTF-8 in a string (it cannot come from a
//    validated input, but a name from a JSON config might carry it) becomes U+FFFD instead of
//    an exception half-way through the output.
//  - Numbers are written by nlohmann's own shortest round-trip formatter: the same bytes under
//    every C and C++ locale (tests/unit/test_json_output.cpp sets de_DE and a ',' locale).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusel {

using JsonDocument = nlohmann::ordered_json;

// The resolution a key's unit suffix gives its number (docs/reliability.md, "JSON"), matched
// on the last component of a path ("roles[0].cost.tco_usd" -> "tco_usd"):
//   whole          `_bytes`, `_flops_per_s`: a count of bytes or FLOP/s is a whole number;
//   cents          `_usd`, `_usd_per_hour`, `_usd_per_month`, `usd_per_month`: an amount of money;
//   significant    everything else, unit prices (`price_usd`, `usd_per_unit`: $0.104/h or
//                  $0.0002 per 1M tokens must not round away) included: six significant digits,
//                  finer than any estimate or measurement deserves.
enum class JsonResolution { whole, cents, significant };
JsonResolution resolution_of(std::string_view path);

// `value` rounded to the resolution of `path`'s unit suffix: an integer for `whole`, a double
// otherwise (so 24.0 stays 24.0); -0 as 0. When `value` is not finite: null, and
// "<path>: the computed value is not a finite number (nan|inf|-inf); written as null" is
// appended to `notes`.
JsonDocument json_number(std::string_view path, double value, std::vector<std::string>& notes);
// Absent values are null without a note (the renderer says why the field does not apply).
JsonDocument json_number(std::string_view path, const std::optional<double>& value, std::vector<std::string>& notes);

// `value` rounded half away from zero to `decimals` (0..9) digits, e.g. money to cents, so that
// JSON shows 1234.57 rather than 1234.5678901. Non-finite values are returned unchanged.
double round_to(double value, int decimals);

// `value` rounded half away from zero to `digits` (1..15) significant digits, e.g. 6 for a
// modelled estimate (finer than any estimate deserves), so that JSON shows 0.123457 rather than
// 0.12345678901234 and the same on every platform. -0 gives 0; non-finite values are returned
// unchanged.
double round_significant(double value, int digits);

// The document as text (see the header comment). Throws std::invalid_argument naming the JSON
// pointer of the first non-finite number.
std::string dump_json(const JsonDocument& document);

}  // namespace gpusel
