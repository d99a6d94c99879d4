// `gpusel plan --format csv`: the procurement table for finance (cli.md, "CSV").

#include <cmath>
#include <ostream>

#include "report/render.hpp"

namespace gpusel {

namespace {

// Months are whole in practice ("24"); a fractional horizon keeps two decimals.
void write_months(CsvWriter& writer, double months) {
    if (!std::isfinite(months)) {
        writer.empty();
    } else if (months == std::floor(months)) {
        writer.number(months, 0);
    } else {
        writer.number(months, 2);
    }
}

// CsvWriter refuses NaN/Inf: a value the planner could not compute is an empty cell.
void write_money(CsvWriter& writer, double usd) {
    if (std::isfinite(usd)) {
        writer.money(usd);
    } else {
        writer.empty();
    }
}

}  // namespace

void render_plan_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options) {
    CsvWriter writer(options);
    for (const char* column : {"role",           "gpu",         "gpu_name",           "quantity",   "acquisition",
                               "unit_price_usd", "total_usd",   "monthly_opex_usd",   "tco_usd",    "horizon_months",
                               "reason",         "alternative", "alternative_reason", "offer",      "offer_name",
                               "provider",       "units",       "gpus_per_unit",      "gpus",       "price_per",
                               "price_kind",     "price_as_of", "host_usd",           "resale_usd", "precision"}) {
        writer.text(column);
    }
    writer.end_row();
    // Cents, so that on every purchase row quantity × unit_price_usd + host_usd = total_usd exactly,
    // and the totals row is the sum of the rows as printed.
    const auto cents = [](double usd) { return std::isfinite(usd) ? std::llround(usd * 100) : 0LL; };
    long long total_cents = 0;
    long long opex_cents = 0;
    long long tco_cents = 0;
    long long host_cents = 0;
    long long resale_cents = 0;
    bool finite = true;
    for (const ProcurementLine& line : report.procurement) {
        const OfferUse& offer = line.offer;
        const bool bought = is_purchase(line.acquisition);
        const long long unit = cents(line.unit_price_usd);
        const long long host = bought ? cents(line.host_usd) : 0;
        const long long total = bought ? line.quantity * unit + host : 0;
        writer.text(to_string(line.role)).text(line.gpu).text(line.gpu_name).integer(line.quantity);
        writer.text(to_string(line.acquisition));
        write_money(writer, line.unit_price_usd);
        writer.money(static_cast<double>(total) / 100);
        write_money(writer, line.monthly_opex_usd);
        write_money(writer, line.tco_usd);
        write_months(writer, line.horizon_months);
        writer.text(line.reason).text(line.alternative).text(line.alternative_reason);
        writer.text(offer.id)
            .text(offer.kind == OfferKind::rental ? offer.instance_type : offer.name)
            .text(offer.provider);
        writer.integer(line.quantity).integer(offer.gpus_per_unit).integer(line.gpus);
        const std::string per = !bought ? "unit-hour" : offer.gpus_per_unit == 1 ? "gpu" : "unit";
        writer.text(per).text(std::string(to_string(offer.price_kind))).text(offer.as_of);
        writer.money(static_cast<double>(host) / 100);
        writer.money(static_cast<double>(bought ? cents(line.resale_usd) : 0) / 100);
        writer.text(std::string(to_string(line.precision)));
        writer.end_row();
        finite = finite && std::isfinite(line.monthly_opex_usd) && std::isfinite(line.tco_usd);
        total_cents += total;
        opex_cents += cents(line.monthly_opex_usd);
        tco_cents += cents(line.tco_usd);
        host_cents += host;
        resale_cents += bought ? cents(line.resale_usd) : 0;
    }
    if (report.procurement.empty()) {
        out << writer.str();
        return;
    }
    // The totals row (role "total"): column sums, so that a script can skip it by its role.
    writer.text("total").empty().empty().empty().empty().empty();
    writer.money(static_cast<double>(total_cents) / 100);
    if (finite) {
        writer.money(static_cast<double>(opex_cents) / 100).money(static_cast<double>(tco_cents) / 100);
    } else {
        writer.empty().empty();
    }
    for (int column = 0; column < 13; ++column) {
        writer.empty();
    }
    writer.money(static_cast<double>(host_cents) / 100).money(static_cast<double>(resale_cents) / 100);
    writer.empty();
    writer.end_row();
    out << writer.str();
}

}  // namespace gpusel
