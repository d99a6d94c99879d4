#pragma once
// JSON output (io layer; docs/reliability.md, "JSON"). Documents are nlohmann::ordered_json,
// so keys keep the order in which a renderer adds them (spec/cli.md's order).
//
//  - No NaN or Inf ever reaches the text: a value that could not be computed goes through
//    finite_or_null(), which writes null and records a note saying which field and why;
//    dump_json() refuses a document that still holds a non-finite number (a programming error,
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

// `value` as a JSON number when finite (-0 as 0); otherwise null, and
// "<field> could not be computed (<NaN|infinite>); written as null" is appended to `notes`.
JsonDocument finite_or_null(double value, std::string_view field, std::vector<std::string>& notes);
// Absent values are null without a note (the renderer says why the field does not apply).
JsonDocument finite_or_null(const std::optional<double>& value, std::string_view field,
                            std::vector<std::string>& notes);

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
