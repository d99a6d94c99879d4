#include "base/format.hpp"

#include <cmath>

#include <fmt/format.h>

namespace gpusel {

namespace {
std::string trim_number(double value, int significant_below_100) {
    if (std::fabs(value) >= 100 || significant_below_100 == 0) {
        return fmt::format("{:.0f}", value);
    }
    if (std::fabs(value) >= 10) {
        return fmt::format("{:.1f}", value);
    }
    return fmt::format("{:.{}f}", value, significant_below_100);
}

std::string group_thousands(long long value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    std::string out;
    const std::size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
    out = digits.substr(0, first);
    for (std::size_t i = first; i < digits.size(); i += 3) {
        out += "," + digits.substr(i, 3);
    }
    return value < 0 ? "-" + out : out;
}
}  // namespace

std::string format_gb(double bytes) { return trim_number(bytes / 1e9, 1) + " GB"; }

std::string format_gib(double bytes) { return trim_number(bytes / 1073741824.0, 1) + " GiB"; }

std::string format_bandwidth(double bytes_per_s) { return trim_number(bytes_per_s / 1e9, 1) + " GB/s"; }

std::string format_usd(double usd) {
    if (!std::isfinite(usd)) {
        return "—";
    }
    return "$" + group_thousands(std::llround(usd));
}

std::string format_usd_cents(double usd) {
    if (!std::isfinite(usd)) {
        return "—";
    }
    return fmt::format("${:.2f}", usd);
}

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds)) {
        return "—";
    }
    if (seconds < 1e-3) {
        return trim_number(seconds * 1e6, 1) + " µs";
    }
    if (seconds < 1) {
        return trim_number(seconds * 1e3, 1) + " ms";
    }
    if (seconds < 120) {
        return trim_number(seconds, 2) + " s";
    }
    if (seconds < 7200) {
        return trim_number(seconds / 60, 1) + " min";
    }
    if (seconds < 3 * 86400) {
        return trim_number(seconds / 3600, 1) + " h";
    }
    return trim_number(seconds / 86400, 1) + " d";
}

std::string format_rate(double per_second, const std::string& unit) {
    if (!std::isfinite(per_second)) {
        return "—";
    }
    if (per_second >= 1e6) {
        return trim_number(per_second / 1e6, 2) + "M " + unit;
    }
    if (per_second >= 1e4) {
        return trim_number(per_second / 1e3, 1) + "k " + unit;
    }
    return trim_number(per_second, 1) + " " + unit;
}

std::string format_percent(double fraction) { return fmt::format("{:.0f} %", fraction * 100); }

std::string format_count(double count) {
    if (count >= 1e12) {
        return trim_number(count / 1e12, 2) + "T";
    }
    if (count >= 1e9) {
        return trim_number(count / 1e9, 2) + "B";
    }
    if (count >= 1e6) {
        return trim_number(count / 1e6, 1) + "M";
    }
    if (count >= 1e3) {
        return trim_number(count / 1e3, 1) + "K";
    }
    return trim_number(count, 0);
}

}  // namespace gpusel
