// `gpusel plan --format csv`: the procurement table for finance (cli.md, "CSV").

#include <cmath>
#include <ostream>

#include "gpusel/render.hpp"

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
    for (const char* column :
         {"role", "gpu", "gpu_name", "quantity", "acquisition", "unit_price_usd", "total_usd", "monthly_opex_usd",
          "tco_usd", "horizon_months", "reason", "alternative", "alternative_reason", "offer_id", "offer", "provider",
          "units", "gpus_per_unit", "gpus", "price_per", "price_kind", "price_as_of"}) {
        writer.text(column);
    }
    writer.end_row();
    for (const ProcurementLine& line : report.procurement) {
        writer.text(to_string(line.role)).text(line.gpu).text(line.gpu_name).integer(line.quantity);
        writer.text(to_string(line.acquisition));
        write_money(writer, line.unit_price_usd);
        write_money(writer, line.total_usd);
        write_money(writer, line.monthly_opex_usd);
        write_money(writer, line.tco_usd);
        write_months(writer, line.horizon_months);
        writer.text(line.reason).text(line.alternative).text(line.alternative_reason);
        const OfferUse& offer = line.offer;
        writer.text(offer.id).text(offer.kind == OfferKind::rental ? offer.instance_type : offer.name).text(offer.provider);
        writer.integer(line.quantity).integer(offer.gpus_per_unit).integer(line.gpus);
        writer.text(std::string(offer.price_per())).text(std::string(to_string(offer.price_kind))).text(offer.as_of);
        writer.end_row();
    }
    out << writer.str();
}

}  // namespace gpusel
