#pragma once
// Human-readable numbers for terminal and Markdown output. Locale-independent (fmt without
// the L specifier). Machine output (JSON, CSV) does not use these.

#include <string>

namespace gpusel {

std::string format_gb(double bytes);            // "80 GB" (1e9), one decimal below 100
std::string format_gib(double bytes);           // "74.5 GiB"
std::string format_bandwidth(double bytes_per_s);  // "2039 GB/s"
std::string format_usd(double usd);             // "$15,000" (thousands grouped, whole dollars)
std::string format_usd_cents(double usd);       // "$1.79"
std::string format_duration(double seconds);    // "41 ms", "2.3 s", "4.1 h", "1.96 d"
std::string format_rate(double per_second, const std::string& unit);  // "11.8k tok/s"
std::string format_percent(double fraction);    // "71 %"
std::string format_count(double count);         // "8.03B", "350M"

}  // namespace gpusel
