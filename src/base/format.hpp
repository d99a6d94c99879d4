#pragma once
// Human-readable numbers for terminal and Markdown output, locale-independent; machine output (JSON, CSV) does not use
// these. Unit and decimals follow the rounded value (999999 is "1.0M", not "1000K"); no "-0"; not finite is "—".

#include <string>

namespace gpusel {

std::string format_gb(double bytes);               // "80.0 GB", "141 GB" (1e9), one decimal below 100
std::string format_gib(double bytes);              // "74.5 GiB"
std::string format_bandwidth(double bytes_per_s);  // "2039 GB/s"
std::string format_usd(double usd);                // "$15,000", "-$1,234" (thousands grouped, whole dollars)
std::string format_usd_cents(double usd);          // "$1.79", "-$0.25"
std::string format_duration(double seconds);       // "850 µs", "41.0 ms", "2.30 s", "4.1 min", "4.1 h", "2.0 d"
std::string format_rate(double per_second, const std::string& unit);  // "95.5 tok/s", "11.8k tok/s", "1.25M tok/s"
std::string format_percent(double fraction);                          // "71 %"
std::string format_count(double count);                               // "950", "12.5K", "350M", "8.03B"

// A strict comparison whose two sides print alike ("21.0 d > 21.0 d") hides a real difference:
// then `difference` (the caller's formatted gap, to add to the sentence), else "". The comparison
// itself is the caller's, on exact values; this only keeps the printed sentence from contradicting it.
std::string hidden_difference(const std::string& shown, const std::string& shown_limit, const std::string& difference);
// Bytes as the smallest readable difference: "40 MB" below 1 GB, else format_gb.
std::string format_bytes_difference(double bytes);

}  // namespace gpusel
