#pragma once
// Money in the currency an output is written in: `per_usd` units of `code` per US dollar, the
// user's rate of date `as_of` (deployment.currency; gpusel holds no rates). Every amount is given
// in USD and converted here, so that the computation stays in USD. USD (the default) prints
// exactly as format_usd and format_usd_cents (base/format.hpp).

#include <string>

namespace gpusel {
struct Money {
    std::string code = "USD";  // ISO 4217
    double per_usd = 1;
    std::string as_of;  // YYYY-MM or YYYY-MM-DD; empty for USD
    bool is_usd() const { return code == "USD"; }
    double of(double usd) const { return usd * per_usd; }
    std::string symbol() const;           // "$", "€", "£", "¥", else the code: "CHF" (amounts: "CHF 1,234")
    std::string whole(double usd) const;  // "$15,000", "€12,900", "-CHF 1,234"
    std::string cents(double usd) const;  // "$1.79", "€1.54"; whole units where the currency has no minor unit (JPY)
    std::string rate_note() const;        // "EUR at 0.86 per USD (2026-11, user-given)"; "" for USD
};

}  // namespace gpusel
