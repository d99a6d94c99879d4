// The human-readable numbers of src/base/format.hpp at every boundary, on both sides of it: a unit
// or a number of decimals is chosen on the value as it prints, so a value just below a boundary
// that rounds up to it takes the next unit ("1.0M", never "1000K").

#include <catch2/catch.hpp>

#include <limits>

#include "base/format.hpp"
#include "base/money.hpp"

using namespace gpusel;

namespace {
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double gib_bytes = 1073741824.0;
}  // namespace

TEST_CASE("format::format_gb has one decimal below 100, none from 100 on, after rounding", "[format]") {
    CHECK(format_gb(80e9) == "80.0 GB");
    CHECK(format_gb(141e9) == "141 GB");
    CHECK(format_gb(9.94e9) == "9.9 GB");
    CHECK(format_gb(9.96e9) == "10.0 GB");
    CHECK(format_gb(99.94e9) == "99.9 GB");
    CHECK(format_gb(99.96e9) == "100 GB");  // not "100.0 GB"
    CHECK(format_gb(100e9) == "100 GB");
}

TEST_CASE("format::format_gib and format_bandwidth round at 100 the same way", "[format]") {
    CHECK(format_gib(80e9) == "74.5 GiB");
    CHECK(format_gib(99.94 * gib_bytes) == "99.9 GiB");
    CHECK(format_gib(99.96 * gib_bytes) == "100 GiB");
    CHECK(format_bandwidth(2039e9) == "2039 GB/s");
    CHECK(format_bandwidth(99.94e9) == "99.9 GB/s");
    CHECK(format_bandwidth(99.96e9) == "100 GB/s");
    CHECK(format_bandwidth(100e9) == "100 GB/s");
}

TEST_CASE("format::format_count takes the next unit when the rounded value reaches it", "[format]") {
    CHECK(format_count(0) == "0");
    CHECK(format_count(999) == "999");
    CHECK(format_count(999.4) == "999");
    CHECK(format_count(999.6) == "1.0K");
    CHECK(format_count(1000) == "1.0K");
    CHECK(format_count(12500) == "12.5K");
    CHECK(format_count(999499) == "999K");
    CHECK(format_count(999600) == "1.0M");
    CHECK(format_count(999999) == "1.0M");  // not "1000K"
    CHECK(format_count(1e6) == "1.0M");
    CHECK(format_count(350e6) == "350M");
    CHECK(format_count(999.4e6) == "999M");
    CHECK(format_count(999.6e6) == "1.00B");
    CHECK(format_count(999999999) == "1.00B");
    CHECK(format_count(8.03e9) == "8.03B");
    CHECK(format_count(9.994e9) == "9.99B");
    CHECK(format_count(9.996e9) == "10.0B");  // not "10.00B"
    CHECK(format_count(99.94e9) == "99.9B");
    CHECK(format_count(99.96e9) == "100B");
    CHECK(format_count(999.4e9) == "999B");
    CHECK(format_count(999.996e9) == "1.00T");
    CHECK(format_count(1e12) == "1.00T");
}

TEST_CASE("format::format_count chooses the unit by magnitude for negative counts", "[format]") {
    CHECK(format_count(-1500) == "-1.5K");
    CHECK(format_count(-999999) == "-1.0M");
    CHECK(format_count(-0.4) == "0");  // no "-0"
}

TEST_CASE("format::format_duration takes the next unit when the rounded value reaches it", "[format]") {
    CHECK(format_duration(5e-6) == "5.0 µs");
    CHECK(format_duration(850e-6) == "850 µs");
    CHECK(format_duration(999.4e-6) == "999 µs");
    CHECK(format_duration(999.6e-6) == "1.0 ms");  // not "1000 µs"
    CHECK(format_duration(1e-3) == "1.0 ms");
    CHECK(format_duration(0.041) == "41.0 ms");
    CHECK(format_duration(0.9994) == "999 ms");
    CHECK(format_duration(0.9996) == "1.00 s");  // not "1000 ms"
    CHECK(format_duration(1) == "1.00 s");
    CHECK(format_duration(2.3) == "2.30 s");
    CHECK(format_duration(9.994) == "9.99 s");
    CHECK(format_duration(9.996) == "10.0 s");  // not "10.00 s"
    CHECK(format_duration(99.94) == "99.9 s");
    CHECK(format_duration(99.96) == "100 s");  // not "100.0 s"
    CHECK(format_duration(119.4) == "119 s");
    CHECK(format_duration(119.6) == "2.0 min");  // not "120 s"
    CHECK(format_duration(120) == "2.0 min");
    CHECK(format_duration(246) == "4.1 min");
    CHECK(format_duration(7169) == "119 min");
    CHECK(format_duration(7171) == "2.0 h");
    CHECK(format_duration(7199) == "2.0 h");  // not "120 min"
    CHECK(format_duration(7200) == "2.0 h");
    CHECK(format_duration(71.94 * 3600) == "71.9 h");
    CHECK(format_duration(71.96 * 3600) == "3.0 d");  // not "72.0 h"
    CHECK(format_duration(3 * 86400) == "3.0 d");
    CHECK(format_duration(99.94 * 86400) == "99.9 d");
    CHECK(format_duration(99.96 * 86400) == "100 d");
}

TEST_CASE("format::format_duration chooses the unit by magnitude for negative durations", "[format]") {
    CHECK(format_duration(-0.5) == "-500 ms");
    CHECK(format_duration(-7199) == "-2.0 h");
    CHECK(format_duration(-1e-9) == "0.0 µs");  // no "-0.0"
}

TEST_CASE("format::format_rate takes the next unit when the rounded value reaches it", "[format]") {
    CHECK(format_rate(95.5, "tok/s") == "95.5 tok/s");
    CHECK(format_rate(99.94, "tok/s") == "99.9 tok/s");
    CHECK(format_rate(99.96, "tok/s") == "100 tok/s");
    CHECK(format_rate(9999.4, "tok/s") == "9999 tok/s");
    CHECK(format_rate(9999.6, "tok/s") == "10.0k tok/s");
    CHECK(format_rate(9999.96, "tok/s") == "10.0k tok/s");  // not "10000 tok/s"
    CHECK(format_rate(1e4, "tok/s") == "10.0k tok/s");
    CHECK(format_rate(11800, "tok/s") == "11.8k tok/s");
    CHECK(format_rate(999499, "tok/s") == "999k tok/s");
    CHECK(format_rate(999999.6, "tok/s") == "1.00M tok/s");  // not "1000k tok/s"
    CHECK(format_rate(1e6, "tok/s") == "1.00M tok/s");
    CHECK(format_rate(1.25e6, "tok/s") == "1.25M tok/s");
    CHECK(format_rate(9.994e6, "tok/s") == "9.99M tok/s");
    CHECK(format_rate(9.996e6, "tok/s") == "10.0M tok/s");
    CHECK(format_rate(-12000, "tok/s") == "-12.0k tok/s");
    CHECK(format_rate(-0.01, "tok/s") == "0.0 tok/s");
}

TEST_CASE("format::format_usd puts the sign before the dollar and groups thousands", "[format]") {
    CHECK(format_usd(1234.4) == "$1,234");
    CHECK(format_usd(-1234.4) == "-$1,234");  // not "$-1,234"
    CHECK(format_usd(1234.5) == "$1,235");    // half away from zero
    CHECK(format_usd(-1234.5) == "-$1,235");
    CHECK(format_usd(-0.4) == "$0");
    CHECK(format_usd(-0.0) == "$0");
    CHECK(format_usd(0.6) == "$1");
    CHECK(format_usd(100) == "$100");
    CHECK(format_usd(999.4) == "$999");
    CHECK(format_usd(999.6) == "$1,000");
    CHECK(format_usd(15000) == "$15,000");
    CHECK(format_usd(100000) == "$100,000");
    CHECK(format_usd(1234567) == "$1,234,567");
    CHECK(format_usd(1e21) == "$1,000,000,000,000,000,000,000");  // beyond long long, still whole
}

TEST_CASE("format::format_usd_cents puts the sign before the dollar, none for zero", "[format]") {
    CHECK(format_usd_cents(1.79) == "$1.79");
    CHECK(format_usd_cents(-0.25) == "-$0.25");
    CHECK(format_usd_cents(-0.004) == "$0.00");
    CHECK(format_usd_cents(-0.0) == "$0.00");
    CHECK(format_usd_cents(1234.5) == "$1234.50");
}

TEST_CASE("format::format_percent rounds to whole percent without a negative zero", "[format]") {
    CHECK(format_percent(0.71) == "71 %");
    CHECK(format_percent(0.0049) == "0 %");
    CHECK(format_percent(0.0051) == "1 %");
    CHECK(format_percent(0.996) == "100 %");
    CHECK(format_percent(1) == "100 %");
    CHECK(format_percent(-0.5) == "-50 %");
    CHECK(format_percent(-0.001) == "0 %");  // not "-0 %"
}

TEST_CASE("format: a value that is not finite prints as a dash in every function", "[format]") {
    for (const double value : {not_a_number, infinity, -infinity}) {
        CHECK(format_gb(value) == "—");
        CHECK(format_gib(value) == "—");
        CHECK(format_bandwidth(value) == "—");
        CHECK(format_usd(value) == "—");
        CHECK(format_usd_cents(value) == "—");
        CHECK(format_duration(value) == "—");
        CHECK(format_rate(value, "tok/s") == "—");
        CHECK(format_percent(value) == "—");
        CHECK(format_count(value) == "—");
    }
}

TEST_CASE("format: a value that rounds to zero from below prints without a sign", "[format]") {
    CHECK(format_gb(-0.01e9) == "0.0 GB");
    CHECK(format_gb(-0.0) == "0.0 GB");
    CHECK(format_bandwidth(-1e6) == "0.0 GB/s");
    CHECK(format_count(-0.0) == "0");
}

TEST_CASE("format::hidden_difference speaks only where the printed figures hide a strict comparison", "[format]") {
    // 21.04 d against a 21.0 d deadline: both print "21.0 d", so the gap is said.
    const double needed = 21.04 * 86400;
    const double deadline = 21.0 * 86400;
    REQUIRE(format_duration(needed) == format_duration(deadline));
    CHECK(hidden_difference(format_duration(needed), format_duration(deadline), format_duration(needed - deadline)) ==
          "57.6 min");
    // 22 d against 21 d print apart: nothing to add.
    CHECK(hidden_difference(format_duration(22 * 86400.0), format_duration(deadline), "1.0 d").empty());
}

TEST_CASE("format::format_bytes_difference in MB below 1 GB, never 0", "[format]") {
    CHECK(format_bytes_difference(40e6) == "40 MB");
    CHECK(format_bytes_difference(-40e6) == "40 MB");
    CHECK(format_bytes_difference(0.2e6) == "1 MB");
    CHECK(format_bytes_difference(999.4e6) == "999 MB");
    CHECK(format_bytes_difference(999.6e6) == "1.0 GB");
    CHECK(format_bytes_difference(2.5e9) == "2.5 GB");
}

TEST_CASE("Money prints USD amounts in the user's currency at the user's rate", "[format][currency]") {
    const Money usd;
    // USD prints exactly as format_usd / format_usd_cents.
    CHECK(usd.whole(15000) == format_usd(15000));
    CHECK(usd.whole(-1234.5) == "-$1,235");
    CHECK(usd.cents(1.789) == "$1.79");
    CHECK(usd.rate_note().empty());
    const Money eur{"EUR", 0.86, "2026-11"};
    // 15,000 × 0.86 = 12,900; 55.04 × 0.86 = 47.3344 → €47.33; −1,000 × 0.86 = −860.
    CHECK(eur.whole(15000) == "€12,900");
    CHECK(eur.cents(55.04) == "€47.33");
    CHECK(eur.whole(-1000) == "-€860");
    CHECK(eur.whole(0.4) == "€0");  // 0.344 rounds to 0: no "-€0" either way
    CHECK(eur.whole(-0.4) == "€0");
    CHECK(eur.rate_note() == "EUR at 0.86 per USD (2026-11, user-given)");
    // A code without a common symbol goes before the amount, with a space.
    const Money chf{"CHF", 0.8, "2026-11-30"};
    CHECK(chf.symbol() == "CHF");
    CHECK(chf.whole(1542.5) == "CHF 1,234");  // 1,542.5 × 0.8 = 1,234
    CHECK(chf.cents(-2.5) == "-CHF 2.00");
    // No minor unit in yen: 2.50 × 150 = 375.
    const Money jpy{"JPY", 150, "2026-11"};
    CHECK(jpy.cents(2.5) == "¥375");
    CHECK(eur.whole(std::numeric_limits<double>::infinity()) == "—");
}
