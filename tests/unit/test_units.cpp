#include <catch2/catch.hpp>

#include "base/units.hpp"

using gpusel::parse_integer;
using gpusel::parse_quantity;
using gpusel::UnitKind;

namespace {
double value_of(std::string_view text, UnitKind kind) {
    const gpusel::ParsedNumber parsed = parse_quantity(text, kind);
    INFO(text << ": " << parsed.error);
    REQUIRE(parsed.value.has_value());
    return *parsed.value;
}
std::string error_of(std::string_view text, UnitKind kind) {
    const gpusel::ParsedNumber parsed = parse_quantity(text, kind);
    REQUIRE_FALSE(parsed.value.has_value());
    return parsed.error;
}
}  // namespace

TEST_CASE("units::parse_quantity sizes distinguish GB from GiB", "[units]") {
    CHECK(value_of("80GB", UnitKind::bytes) == 80e9);
    CHECK(value_of("80GiB", UnitKind::bytes) == 80.0 * 1073741824.0);
    CHECK(value_of("512MiB", UnitKind::bytes) == 512.0 * 1048576.0);
    CHECK(value_of("110KiB", UnitKind::bytes) == 110.0 * 1024.0);
    CHECK(value_of("1.5 TB", UnitKind::bytes) == 1.5e12);
    CHECK(value_of("4096", UnitKind::bytes) == 4096.0);
    CHECK(error_of("80Gb", UnitKind::bytes) ==
          "'80Gb' has an unknown unit 'Gb'; expected a size such as 80GB, 24GiB or 512MiB (B, KB, MB, GB, TB, KiB, "
          "MiB, GiB, TiB)");
    CHECK(error_of("80gb", UnitKind::bytes).find("unknown unit 'gb'") != std::string::npos);
}

TEST_CASE("units::parse_quantity counts use K M B T", "[units]") {
    CHECK(value_of("13B", UnitKind::count) == 13e9);
    CHECK(value_of("7.2M", UnitKind::count) == Approx(7.2e6).epsilon(1e-15));
    CHECK(value_of("1.5T", UnitKind::count) == 1.5e12);
    CHECK(value_of("350K", UnitKind::count) == 350e3);
    CHECK(error_of("13GB", UnitKind::count).find("unknown unit 'GB'") != std::string::npos);
    CHECK(error_of("7b", UnitKind::count).find("unknown unit 'b'") != std::string::npos);
}

TEST_CASE("units::parse_quantity bandwidth, time, money, power, energy, fraction, flops", "[units]") {
    CHECK(value_of("2TB/s", UnitKind::bytes_per_second) == 2e12);
    CHECK(value_of("900GB/s", UnitKind::bytes_per_second) == 900e9);
    CHECK(error_of("900GB", UnitKind::bytes_per_second).find("unknown unit 'GB'") != std::string::npos);
    CHECK(value_of("300ms", UnitKind::seconds) == Approx(0.3).epsilon(1e-15));
    CHECK(value_of("14d", UnitKind::seconds) == 14 * 86400.0);
    CHECK(value_of("24mo", UnitKind::seconds) == 24 * 365.25 / 12 * 86400.0);
    CHECK(value_of("1y", UnitKind::seconds) == 365.25 * 86400.0);
    CHECK(value_of("90min", UnitKind::seconds) == 5400.0);
    CHECK(value_of("15000USD", UnitKind::usd) == 15000.0);
    CHECK(value_of("15000", UnitKind::usd) == 15000.0);
    CHECK(value_of("1.79USD/h", UnitKind::usd_per_hour) == 1.79);
    CHECK(value_of("700W", UnitKind::watts) == 700.0);
    CHECK(value_of("1.2kW", UnitKind::watts) == 1200.0);
    CHECK(value_of("0.12USD/kWh", UnitKind::usd_per_kwh) == 0.12);
    CHECK(value_of("10%", UnitKind::fraction) == Approx(0.1).epsilon(1e-15));
    CHECK(value_of("0.7", UnitKind::fraction) == 0.7);
    CHECK(value_of("8.2GFLOP", UnitKind::flops) == Approx(8.2e9).epsilon(1e-15));
    CHECK(error_of("15000EUR", UnitKind::usd).find("unknown unit 'EUR'") != std::string::npos);
}

TEST_CASE("units::parse_quantity refuses ambiguous and non-finite numbers", "[units]") {
    CHECK(error_of("nan", UnitKind::plain) == "'nan' is not a number; expected a plain number such as 42 or 0.5");
    CHECK(error_of("inf", UnitKind::plain) == "'inf' is not a number; expected a plain number such as 42 or 0.5");
    CHECK(error_of(".inf", UnitKind::plain) == "'.inf' is not a number; expected a plain number such as 42 or 0.5");
    CHECK(error_of("1e400", UnitKind::plain) == "'1e400' is out of range");
    CHECK(error_of("1e300TB", UnitKind::bytes) == "'1e300TB' is out of range");
    CHECK(error_of("010", UnitKind::plain) == "'010' has a leading zero; write the number without it");
    CHECK(error_of("0x10", UnitKind::plain) == "'0x10' is not a plain number; no unit is allowed here");
    CHECK(error_of("-5", UnitKind::plain) == "'-5' is negative; expected a plain number such as 42 or 0.5");
    CHECK(error_of("+5", UnitKind::plain).find("is not a number") != std::string::npos);
    CHECK(error_of("1,5", UnitKind::plain).find("no unit is allowed") != std::string::npos);
    CHECK(error_of("", UnitKind::bytes) ==
          "expected a size such as 80GB, 24GiB or 512MiB (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), got an empty value");
    CHECK(error_of("80GB ", UnitKind::bytes).find("unknown unit") != std::string::npos);
    CHECK(error_of("80 ", UnitKind::bytes) == "'80 ' has trailing space");
    CHECK(value_of("0.5", UnitKind::plain) == 0.5);
    CHECK(value_of("0", UnitKind::plain) == 0.0);
    CHECK(value_of("1e3", UnitKind::plain) == 1000.0);
    CHECK(error_of("5E", UnitKind::count) ==
          "'5E' has an unknown unit 'E'; expected a count such as 7B, 350M or 1.5T (K, M, B, T)");
}

TEST_CASE("units::parse_integer accepts only plain decimal digits", "[units]") {
    CHECK(*parse_integer("42").value == 42.0);
    CHECK(*parse_integer("0").value == 0.0);
    CHECK(parse_integer("010").error == "'010' has a leading zero; write the number without it");
    CHECK(parse_integer("0x10").error == "'0x10' is not a whole number written in decimal digits");
    CHECK(parse_integer("1.5").error == "'1.5' is not a whole number written in decimal digits");
    CHECK(parse_integer("1e3").error == "'1e3' is not a whole number written in decimal digits");
    CHECK(parse_integer("-1").error == "'-1' is not a whole number written in decimal digits");
    CHECK(parse_integer("99999999999999999").error == "'99999999999999999' is out of range");
}
