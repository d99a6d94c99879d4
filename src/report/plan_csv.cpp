// `gpusel plan --format csv` and `--format cashflow-csv`: the procurement table and the
// month-by-month cash flow for finance (docs/spec/cli.md, "CSV"; docs/cost-model.md).

#include <cmath>
#include <ostream>
#include <vector>

#include <fmt/format.h>

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

// The lower-case currency code that names converted columns: "unit_price_eur".
std::string column_code(const Money& money) {
    std::string code = money.code;
    for (char& c : code) {
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    return code;
}

// Another currency's columns go after every USD column (docs/spec/plan-output.md, "Currency"):
// an import keyed on the USD names or positions reads the same file, and each converted amount
// is the exact USD amount × the rate, rounded to the cent once.
void write_rate(CsvWriter& writer, const Money& money) {
    writer.text(fmt::format("{:.6g}", money.per_usd)).text(money.as_of);
}

// The money columns of the order lines, in USD (with the months between TCO and depreciation)
// or converted to the report's currency; each keeps its rounded sum for the totals row.
struct MoneyColumns {
    bool usd = true;
    MoneyColumn capex;
    MoneyColumn opex;
    MoneyColumn rent;
    MoneyColumn resale;
    MoneyColumn subtracted;
    MoneyColumn tco;
    MoneyColumn depreciation;

    void write(CsvWriter& writer, const OrderLine& line, const Money& money) {
        const auto in = [&](double amount) { return usd ? amount : money.of(amount); };
        // Capex as printed: quantity_units × the unit price to the cent.
        if (std::isfinite(line.unit_price_usd)) {
            capex.write_cents(
                writer, line.capex_usd > 0 ? line.quantity_units * MoneyColumn::cents(in(line.unit_price_usd)) : 0);
        } else {
            capex.write(writer, in(line.capex_usd));
        }
        opex.write(writer, in(line.opex_usd_per_month));
        rent.write(writer, in(line.rent_usd));
        resale.write(writer, in(line.resale_usd));
        subtracted.write(writer, in(line.resale_subtracted_usd));
        tco.write(writer, in(line.tco_usd));
        if (usd) {
            write_months(writer, line.horizon_months);
        }
        depreciation.write(writer, in(line.depreciation_usd_per_month));
    }

    void write_totals(CsvWriter& writer) {
        capex.write_total(writer);
        opex.write_total(writer);
        rent.write_total(writer);
        resale.write_total(writer);
        subtracted.write_total(writer);
        tco.write_total(writer);
        if (usd) {
            writer.empty();
        }
        depreciation.write_total(writer);
    }
};

}  // namespace

void render_plan_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options) {
    CsvWriter writer(options);
    const Money money = plan_text::money_of(report);
    const std::string code = column_code(money);
    for (const char* column : plan_text::order_line_columns) {
        writer.text(column);
    }
    if (!money.is_usd()) {
        for (const std::string& column :
             {"unit_price_" + code, "capex_" + code, "opex_" + code + "_per_month", "rent_" + code, "resale_" + code,
              "resale_subtracted_" + code, "tco_" + code, "depreciation_" + code + "_per_month", code + "_per_usd",
              std::string("rate_as_of")}) {
            writer.text(column);
        }
    }
    writer.end_row();
    MoneyColumns in_usd;
    MoneyColumns converted;
    converted.usd = false;
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
            in_usd.write(writer, line, money);
            writer.text(to_string(procured.precision));
            if (units) {
                writer.text(procured.reason).text(procured.alternative).text(procured.alternative_reason);
            } else {
                writer.empty().empty().empty();
            }
            if (!money.is_usd()) {
                if (std::isfinite(line.unit_price_usd)) {
                    writer.money(money.of(line.unit_price_usd));
                } else {
                    writer.empty();
                }
                converted.write(writer, line, money);
                write_rate(writer, money);
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
    in_usd.write_totals(writer);
    writer.empty().empty().empty().empty();
    if (!money.is_usd()) {
        writer.empty();
        converted.write_totals(writer);
        write_rate(writer, money);
    }
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
    const Money currency = plan_text::money_of(report);
    const bool converted = !currency.is_usd();
    const std::string code = column_code(currency);
    for (const char* column : {"role", "gpu", "acquisition", "month", "capex_usd", "opex_usd", "rent_usd", "resale_usd",
                               "net_usd", "cumulative_usd", "resale_not_counted_usd"}) {
        writer.text(column);
    }
    if (converted) {
        for (const std::string& column :
             {"capex_" + code, "opex_" + code, "rent_" + code, "resale_" + code, "net_" + code, "cumulative_" + code,
              "resale_not_counted_" + code, code + "_per_usd", std::string("rate_as_of")}) {
            writer.text(column);
        }
    }
    writer.end_row();
    // One currency's columns: the months in carried cents, each role's total and the grand total.
    struct Columns {
        long long capex = 0;
        long long opex = 0;
        long long rent = 0;
        long long resale = 0;
        long long memo = 0;
        long long net() const { return capex + opex + rent - resale; }
    };
    const auto money = [&writer](long long cents) { writer.money(static_cast<double>(cents) / 100); };
    const auto write_columns = [&](const Columns& columns, long long net, long long cumulative) {
        money(columns.capex);
        money(columns.opex);
        money(columns.rent);
        money(columns.resale);
        money(net);
        money(cumulative);
        money(columns.memo);
    };
    Columns all_usd;
    Columns all_converted;
    for (const ProcurementLine& line : report.procurement) {
        const std::vector<CashFlowMonth> months = cash_flow(line);
        const auto carried = [&](double rate) {
            std::vector<double> capex_usd;
            std::vector<double> opex_usd;
            std::vector<double> rent_usd;
            std::vector<double> resale_usd;
            std::vector<double> memo_usd;
            for (const CashFlowMonth& month : months) {
                capex_usd.push_back(month.capex_usd * rate);
                opex_usd.push_back(month.opex_usd * rate);
                rent_usd.push_back(month.rent_usd * rate);
                resale_usd.push_back(month.resale_usd * rate);
                memo_usd.push_back(month.resale_not_counted_usd * rate);
            }
            std::vector<Columns> rows(months.size());
            const std::vector<long long> capex = carried_cents(capex_usd);
            const std::vector<long long> opex = carried_cents(opex_usd);
            const std::vector<long long> rent = carried_cents(rent_usd);
            const std::vector<long long> resale = carried_cents(resale_usd);
            const std::vector<long long> memo = carried_cents(memo_usd);
            for (std::size_t i = 0; i < months.size(); ++i) {
                rows[i] = {capex[i], opex[i], rent[i], resale[i], memo[i]};
            }
            return rows;
        };
        const std::vector<Columns> usd = carried(1);
        const std::vector<Columns> other = converted ? carried(currency.per_usd) : std::vector<Columns>();
        Columns role_usd;
        Columns role_converted;
        long long cumulative_usd = 0;
        long long cumulative_converted = 0;
        const auto add = [](Columns& into, const Columns& row) {
            into.capex += row.capex;
            into.opex += row.opex;
            into.rent += row.rent;
            into.resale += row.resale;
            into.memo += row.memo;
        };
        for (std::size_t i = 0; i < months.size(); ++i) {
            cumulative_usd += usd[i].net();
            writer.text(to_string(line.role)).text(line.gpu).text(to_string(line.acquisition));
            writer.integer(months[i].month);
            write_columns(usd[i], usd[i].net(), cumulative_usd);
            add(role_usd, usd[i]);
            if (converted) {
                cumulative_converted += other[i].net();
                write_columns(other[i], other[i].net(), cumulative_converted);
                write_rate(writer, currency);
                add(role_converted, other[i]);
            }
            writer.end_row();
        }
        // The role's total (month "total"): what its procurement lines' tco_usd add up to.
        writer.text(to_string(line.role)).text(line.gpu).text(to_string(line.acquisition)).text("total");
        write_columns(role_usd, cumulative_usd, cumulative_usd);
        if (converted) {
            write_columns(role_converted, cumulative_converted, cumulative_converted);
            write_rate(writer, currency);
        }
        writer.end_row();
        add(all_usd, role_usd);
        add(all_converted, role_converted);
    }
    if (!report.procurement.empty()) {
        writer.text("total").empty().empty().text("total");
        write_columns(all_usd, all_usd.net(), all_usd.net());
        if (converted) {
            write_columns(all_converted, all_converted.net(), all_converted.net());
            write_rate(writer, currency);
        }
        writer.end_row();
    }
    out << writer.str();
}

}  // namespace gpusel
