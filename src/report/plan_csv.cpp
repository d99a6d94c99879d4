// `gpusel plan --format csv` and `--format cashflow-csv`: the procurement table and the
// month-by-month cash flow for finance (docs/spec/cli.md, "CSV"; docs/cost-model.md).

#include <cmath>
#include <ostream>
#include <vector>

#include "report/plan_common.hpp"
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

// A money column in whole cents, so that the totals row is the sum of the rows as printed. A
// value the planner could not compute (NaN, Inf) is an empty cell, and empties its total.
class MoneyColumn {
public:
    static long long cents(double usd) { return std::llround(usd * 100); }
    // Writes `usd` and adds it to the column.
    void write(CsvWriter& writer, double usd) {
        if (!std::isfinite(usd)) {
            m_finite = false;
            writer.empty();
            return;
        }
        write_cents(writer, cents(usd));
    }
    void write_cents(CsvWriter& writer, long long value) {
        m_cents += value;
        writer.money(static_cast<double>(value) / 100);
    }
    void write_total(CsvWriter& writer) const {
        if (m_finite) {
            writer.money(static_cast<double>(m_cents) / 100);
        } else {
            writer.empty();
        }
    }

private:
    long long m_cents = 0;
    bool m_finite = true;
};

}  // namespace

void render_plan_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options) {
    CsvWriter writer(options);
    for (const char* column : plan_text::order_line_columns) {
        writer.text(column);
    }
    writer.end_row();
    MoneyColumn capex;
    MoneyColumn opex;
    MoneyColumn rent;
    MoneyColumn resale;
    MoneyColumn subtracted;
    MoneyColumn tco;
    MoneyColumn depreciation;
    long long gpus = 0;
    for (const ProcurementLine& procured : report.procurement) {
        for (const OrderLine& line : order_lines(procured)) {
            const bool units = line.item == OrderItem::gpus;
            writer.text(to_string(line.role)).text(to_string(line.item)).text(procured.gpu).text(procured.gpu_name);
            writer.text(to_string(line.acquisition)).text(line.id).text(line.name).text(line.provider);
            writer.integer(line.quantity_units).integer(line.spare_units);
            if (units) {
                writer.integer(line.gpus_per_unit);
            } else {
                writer.empty();
            }
            writer.integer(line.gpus);
            gpus += line.gpus;
            if (std::isfinite(line.unit_price_usd)) {
                writer.money(line.unit_price_usd);
            } else {
                writer.empty();
            }
            writer.text(line.price_per).text(to_string(line.price_kind)).text(line.price_as_of);
            // Capex as printed: quantity_units × unit_price_usd to the cent.
            if (std::isfinite(line.unit_price_usd)) {
                capex.write_cents(
                    writer, line.capex_usd > 0 ? line.quantity_units * MoneyColumn::cents(line.unit_price_usd) : 0);
            } else {
                capex.write(writer, line.capex_usd);
            }
            opex.write(writer, line.opex_usd_per_month);
            rent.write(writer, line.rent_usd);
            resale.write(writer, line.resale_usd);
            subtracted.write(writer, line.resale_subtracted_usd);
            tco.write(writer, line.tco_usd);
            write_months(writer, line.horizon_months);
            depreciation.write(writer, line.depreciation_usd_per_month);
            writer.text(to_string(procured.precision));
            if (units) {
                writer.text(procured.reason).text(procured.alternative).text(procured.alternative_reason);
            } else {
                writer.empty().empty().empty();
            }
            writer.end_row();
        }
    }
    if (report.procurement.empty()) {
        out << writer.str();
        return;
    }
    // The totals row (role "total"): column sums, so that a script can skip it by its role.
    writer.text("total");
    for (int column = 0; column < 10; ++column) {
        writer.empty();
    }
    writer.integer(gpus).empty().empty().empty().empty();
    capex.write_total(writer);
    opex.write_total(writer);
    rent.write_total(writer);
    resale.write_total(writer);
    subtracted.write_total(writer);
    tco.write_total(writer);
    writer.empty();
    depreciation.write_total(writer);
    writer.empty().empty().empty().empty();
    writer.end_row();
    out << writer.str();
}

namespace {

// The months of one money column in cents, rounded so that every running total is the running
// total of the exact values rounded: the months add up to the column's total to the cent.
std::vector<long long> carried_cents(const std::vector<double>& values) {
    std::vector<long long> cents;
    cents.reserve(values.size());
    double running = 0;
    long long printed = 0;
    for (const double value : values) {
        running += std::isfinite(value) ? value : 0.0;
        const long long now = MoneyColumn::cents(running);
        cents.push_back(now - printed);
        printed = now;
    }
    return cents;
}

}  // namespace

void render_plan_cash_flow_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options) {
    CsvWriter writer(options);
    for (const char* column : {"role", "gpu", "acquisition", "month", "capex_usd", "opex_usd", "rent_usd", "resale_usd",
                               "net_usd", "cumulative_usd", "resale_not_counted_usd"}) {
        writer.text(column);
    }
    writer.end_row();
    long long all_capex = 0;
    long long all_opex = 0;
    long long all_rent = 0;
    long long all_resale = 0;
    long long all_memo = 0;
    const auto money = [&writer](long long cents) { writer.money(static_cast<double>(cents) / 100); };
    for (const ProcurementLine& line : report.procurement) {
        const std::vector<CashFlowMonth> months = cash_flow(line);
        std::vector<double> capex_usd;
        std::vector<double> opex_usd;
        std::vector<double> rent_usd;
        std::vector<double> resale_usd;
        std::vector<double> memo_usd;
        for (const CashFlowMonth& month : months) {
            capex_usd.push_back(month.capex_usd);
            opex_usd.push_back(month.opex_usd);
            rent_usd.push_back(month.rent_usd);
            resale_usd.push_back(month.resale_usd);
            memo_usd.push_back(month.resale_not_counted_usd);
        }
        const std::vector<long long> capex = carried_cents(capex_usd);
        const std::vector<long long> opex = carried_cents(opex_usd);
        const std::vector<long long> rent = carried_cents(rent_usd);
        const std::vector<long long> resale = carried_cents(resale_usd);
        const std::vector<long long> memo = carried_cents(memo_usd);
        long long cumulative = 0;
        long long role_capex = 0;
        long long role_opex = 0;
        long long role_rent = 0;
        long long role_resale = 0;
        long long role_memo = 0;
        for (std::size_t i = 0; i < months.size(); ++i) {
            const long long net = capex[i] + opex[i] + rent[i] - resale[i];
            cumulative += net;
            writer.text(to_string(line.role)).text(line.gpu).text(to_string(line.acquisition));
            writer.integer(months[i].month);
            money(capex[i]);
            money(opex[i]);
            money(rent[i]);
            money(resale[i]);
            money(net);
            money(cumulative);
            money(memo[i]);
            writer.end_row();
            role_capex += capex[i];
            role_opex += opex[i];
            role_rent += rent[i];
            role_resale += resale[i];
            role_memo += memo[i];
        }
        // The role's total (month "total"): what its procurement lines' tco_usd add up to.
        writer.text(to_string(line.role)).text(line.gpu).text(to_string(line.acquisition)).text("total");
        money(role_capex);
        money(role_opex);
        money(role_rent);
        money(role_resale);
        money(cumulative);
        money(cumulative);
        money(role_memo);
        writer.end_row();
        all_capex += role_capex;
        all_opex += role_opex;
        all_rent += role_rent;
        all_resale += role_resale;
        all_memo += role_memo;
    }
    if (!report.procurement.empty()) {
        const long long net = all_capex + all_opex + all_rent - all_resale;
        writer.text("total").empty().empty().text("total");
        money(all_capex);
        money(all_opex);
        money(all_rent);
        money(all_resale);
        money(net);
        money(net);
        money(all_memo);
        writer.end_row();
    }
    out << writer.str();
}

}  // namespace gpusel
