#include "base/format.hpp"
#include "base/money.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace gpusel {

namespace {
// A number as fmt printed it, read back (locale-free): units and decimals are chosen on the
// rounded value, so that 999999 prints "1.0M", not "1000K".
double printed_value(const std::string& text) {
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

// True when `text` (a printed number) reaches `limit` in magnitude.
bool reaches(const std::string& text, double limit) {
    return std::fabs(printed_value(text)) >= limit;
}

// Fixed-point with `decimals` decimals; a value that rounds to zero prints without a sign ("0.0",
// not "-0.0").
std::string fixed(double value, int decimals) {
    std::string text = fmt::format("{:.{}f}", value, decimals);
    if (!text.empty() && text.front() == '-' && printed_value(text) == 0) {
        text.erase(0, 1);
    }
    return text;
}

// `decimals_below_10` decimals below 10, at most one below 100, none from 100 on, judged on the
// rounded value: 9.996 prints "10.0" (not "10.00"), 99.96 prints "100" (not "100.0").
std::string trim_number(double value, int decimals_below_10) {
    std::string text = fixed(value, decimals_below_10);
    if (decimals_below_10 > 1 && reaches(text, 10)) {
        text = fixed(value, 1);
    }
    if (decimals_below_10 > 0 && reaches(text, 100)) {
        text = fixed(value, 0);
    }
    return text;
}

// "1,234,567" from the digits of a whole number.
std::string group_thousands(const std::string& digits) {
    const std::size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
    std::string out = digits.substr(0, first);
    for (std::size_t i = first; i < digits.size(); i += 3) {
        out += "," + digits.substr(i, 3);
    }
    return out;
}
}  // namespace

std::string format_gb(double bytes) {
    return std::isfinite(bytes) ? trim_number(bytes / 1e9, 1) + " GB" : "—";
}

std::string format_gib(double bytes) {
    return std::isfinite(bytes) ? trim_number(bytes / 1073741824.0, 1) + " GiB" : "—";
}

std::string format_bandwidth(double bytes_per_s) {
    return std::isfinite(bytes_per_s) ? trim_number(bytes_per_s / 1e9, 1) + " GB/s" : "—";
}

std::string format_usd(double usd) {
    if (!std::isfinite(usd)) {
        return "—";
    }
    // Whole dollars, half away from zero (as llround); printed from the double, so no integer
    // overflow however large the amount. The sign goes before the dollar sign: "-$1,234".
    const double whole = std::round(std::fabs(usd));
    return (usd < 0 && whole > 0 ? "-$" : "$") + group_thousands(fmt::format("{:.0f}", whole));
}

std::string format_usd_cents(double usd) {
    if (!std::isfinite(usd)) {
        return "—";
    }
    const std::string text = fixed(std::fabs(usd), 2);
    return (usd < 0 && printed_value(text) > 0 ? "-$" : "$") + text;
}

std::string Money::symbol() const {
    // The symbols that name one currency unambiguously in English finance text; any other code
    // is its own symbol, a space before the amount ("CHF 1,234"): ISO 4217 is unambiguous.
    if (code == "USD") {
        return "$";
    }
    if (code == "EUR") {
        return "€";
    }
    if (code == "GBP") {
        return "£";
    }
    if (code == "JPY") {
        return "¥";
    }
    return code;
}

namespace {
std::string amount_prefix(const Money& money) {
    const std::string symbol = money.symbol();
    return symbol == money.code ? symbol + " " : symbol;
}
}  // namespace

std::string Money::whole(double usd) const {
    if (is_usd()) {
        return format_usd(usd);
    }
    const double amount = of(usd);
    if (!std::isfinite(amount)) {
        return "—";
    }
    const double rounded = std::round(std::fabs(amount));
    return (amount < 0 && rounded > 0 ? "-" : "") + amount_prefix(*this) +
           group_thousands(fmt::format("{:.0f}", rounded));
}

std::string Money::cents(double usd) const {
    if (is_usd()) {
        return format_usd_cents(usd);
    }
    // ISO 4217 minor units: none for the yen and the won.
    if (code == "JPY" || code == "KRW") {
        return whole(usd);
    }
    const double amount = of(usd);
    if (!std::isfinite(amount)) {
        return "—";
    }
    const std::string text = fixed(std::fabs(amount), 2);
    return (amount < 0 && printed_value(text) > 0 ? "-" : "") + amount_prefix(*this) + text;
}

std::string Money::rate_note() const {
    if (is_usd()) {
        return {};
    }
    return fmt::format("{} at {} per USD ({}, user-given)", code, fmt::format("{:.6g}", per_usd), as_of);
}

// Each unit holds the magnitudes below the next unit's start; a value that rounds up to that start
// moves on to the next unit (119.996 s is "2.0 min", 7199 s is "2.0 h").
std::string format_duration(double seconds) {
    if (!std::isfinite(seconds)) {
        return "—";
    }
    const double magnitude = std::fabs(seconds);
    if (magnitude < 1e-3) {
        const std::string text = trim_number(seconds * 1e6, 1);
        if (!reaches(text, 1000)) {
            return text + " µs";
        }
    }
    if (magnitude < 1) {
        const std::string text = trim_number(seconds * 1e3, 1);
        if (!reaches(text, 1000)) {
            return text + " ms";
        }
    }
    if (magnitude < 120) {
        const std::string text = trim_number(seconds, 2);
        if (!reaches(text, 120)) {
            return text + " s";
        }
    }
    if (magnitude < 7200) {
        const std::string text = trim_number(seconds / 60, 1);
        if (!reaches(text, 120)) {
            return text + " min";
        }
    }
    if (magnitude < 3 * 86400) {
        const std::string text = trim_number(seconds / 3600, 1);
        if (!reaches(text, 72)) {
            return text + " h";
        }
    }
    return trim_number(seconds / 86400, 1) + " d";
}

std::string format_rate(double per_second, const std::string& unit) {
    if (!std::isfinite(per_second)) {
        return "—";
    }
    const double magnitude = std::fabs(per_second);
    if (magnitude < 1e4) {
        const std::string text = trim_number(per_second, 1);
        if (!reaches(text, 1e4)) {
            return text + " " + unit;
        }
    }
    if (magnitude < 1e6) {
        const std::string text = trim_number(per_second / 1e3, 1);
        if (!reaches(text, 1e3)) {
            return text + "k " + unit;
        }
    }
    return trim_number(per_second / 1e6, 2) + "M " + unit;
}

std::string hidden_difference(const std::string& shown, const std::string& shown_limit, const std::string& difference) {
    return shown == shown_limit ? difference : std::string();
}

std::string format_bytes_difference(double bytes) {
    if (std::isfinite(bytes) && std::fabs(bytes) < 0.9995e9) {
        return fmt::format("{:.0f} MB", std::max(1.0, std::round(std::fabs(bytes) / 1e6)));
    }
    return format_gb(std::fabs(bytes));
}

std::string format_percent(double fraction) {
    return std::isfinite(fraction) ? fixed(fraction * 100, 0) + " %" : "—";
}

std::string format_count(double count) {
    if (!std::isfinite(count)) {
        return "—";
    }
    const double magnitude = std::fabs(count);
    if (magnitude < 1e3) {
        std::string text = trim_number(count, 0);
        if (!reaches(text, 1e3)) {
            return text;
        }
    }
    if (magnitude < 1e6) {
        const std::string text = trim_number(count / 1e3, 1);
        if (!reaches(text, 1e3)) {
            return text + "K";
        }
    }
    if (magnitude < 1e9) {
        const std::string text = trim_number(count / 1e6, 1);
        if (!reaches(text, 1e3)) {
            return text + "M";
        }
    }
    if (magnitude < 1e12) {
        const std::string text = trim_number(count / 1e9, 2);
        if (!reaches(text, 1e3)) {
            return text + "B";
        }
    }
    return trim_number(count / 1e12, 2) + "T";
}

}  // namespace gpusel
