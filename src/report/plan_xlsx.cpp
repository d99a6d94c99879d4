// `gpusel plan --format xlsx`: a workbook for finance, written with libxlsxwriter. The library
// writes only to a path (1.1.4 has no memory buffer), so the workbook goes to a private
// temporary directory and is read back; the caller publishes the bytes atomically.

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <xlsxwriter.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "report/plan_common.hpp"
#include "report/render.hpp"

namespace gpusel {

namespace {

using namespace plan_text;

// Excel's limit on the characters of one cell (libxlsxwriter refuses longer strings).
constexpr std::size_t max_cell_bytes = 32767;

// Valid UTF-8 for the XML inside the file: an invalid byte becomes U+FFFD; the text is cut
// (at a character boundary) to the cell limit.
std::string cell_text(std::string_view text) {
    std::string out;
    out.reserve(std::min(text.size(), max_cell_bytes));
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t length = utf8_character_length(text, at);
        const bool valid = length > 0;
        const std::string_view piece = valid ? text.substr(at, length) : std::string_view("\xef\xbf\xbd");
        if (out.size() + piece.size() > max_cell_bytes) {
            break;
        }
        out += piece;
        at += valid ? length : 1;
    }
    return out;
}

// Removes the temporary directory and what libxlsxwriter left in it, whatever happens.
class TemporaryDirectory {
public:
    TemporaryDirectory() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/gpusel-xlsx-XXXXXX";
        std::vector<char> buffer(pattern.begin(), pattern.end());
        buffer.push_back('\0');
        if (::mkdtemp(buffer.data()) == nullptr) {
            throw OutputError(fmt::format("cannot create a temporary directory for the XLSX workbook ({}): {}", pattern,
                                          std::strerror(errno)));
        }
        m_path = buffer.data();
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

class Sheet {
public:
    Sheet(lxw_worksheet* sheet, lxw_format* header) : m_sheet(sheet), m_header(header) {}

    void headers(const std::vector<std::string>& names) {
        for (std::size_t column = 0; column < names.size(); ++column) {
            worksheet_write_string(m_sheet, 0, col(column), cell_text(names[column]).c_str(), m_header);
        }
        worksheet_freeze_panes(m_sheet, 1, 0);
        m_columns = names.size();
    }
    void text(std::size_t row, std::size_t column, std::string_view value, lxw_format* format = nullptr) {
        if (!value.empty()) {
            worksheet_write_string(m_sheet, row_index(row), col(column), cell_text(value).c_str(), format);
        }
    }
    // Non-finite values stay blank: a spreadsheet has no NaN.
    void number(std::size_t row, std::size_t column, double value, lxw_format* format = nullptr) {
        if (std::isfinite(value)) {
            worksheet_write_number(m_sheet, row_index(row), col(column), value, format);
        }
    }
    void number(std::size_t row, std::size_t column, const std::optional<double>& value, lxw_format* format = nullptr) {
        if (value) {
            number(row, column, *value, format);
        }
    }
    void formula(std::size_t row, std::size_t column, const std::string& formula, double cached, lxw_format* format) {
        worksheet_write_formula_num(m_sheet, row_index(row), col(column), formula.c_str(), format,
                                    std::isfinite(cached) ? cached : 0);
    }
    void width(std::size_t column, double characters, lxw_format* format = nullptr) {
        worksheet_set_column(m_sheet, col(column), col(column), characters, format);
    }
    void filter(std::size_t rows) {
        if (m_columns > 0) {
            worksheet_autofilter(m_sheet, 0, 0, row_index(rows), col(m_columns - 1));
        }
    }

private:
    static lxw_row_t row_index(std::size_t row) { return static_cast<lxw_row_t>(row); }
    static lxw_col_t col(std::size_t column) { return static_cast<lxw_col_t>(column); }
    lxw_worksheet* m_sheet;
    lxw_format* m_header;
    std::size_t m_columns = 0;
};

struct Formats {
    lxw_format* header = nullptr;
    lxw_format* money = nullptr;
    lxw_format* money_bold = nullptr;
    lxw_format* integer = nullptr;
    lxw_format* decimal = nullptr;
    lxw_format* percent = nullptr;
    lxw_format* wrapped = nullptr;
    lxw_format* bold = nullptr;
    // The report's currency: every money cell is the USD amount × its rate, and the column names
    // say its code in place of usd (docs/spec/plan-output.md, "Currency").
    Money currency;
    double of(double usd) const { return currency.of(usd); }
    std::string column(std::string name) const {
        if (currency.is_usd()) {
            return name;
        }
        std::string code = currency.code;
        for (char& c : code) {
            c = static_cast<char>(c - 'A' + 'a');
        }
        for (std::size_t at = name.find("usd"); at != std::string::npos; at = name.find("usd", at + code.size())) {
            name.replace(at, 3, code);
        }
        return name;
    }
    std::vector<std::string> columns(const std::vector<std::string>& names) const {
        std::vector<std::string> out;
        for (const std::string& name : names) {
            out.push_back(column(name));
        }
        return out;
    }
};

// "A" for column 0, "AB" for column 27: a column's name in a formula.
std::string column_name(std::size_t column) {
    std::string name;
    for (std::size_t left = column + 1; left > 0; left = (left - 1) / 26) {
        name.insert(name.begin(), static_cast<char>('A' + (left - 1) % 26));
    }
    return name;
}

// The CSV's columns (render_plan_csv), one row per order line, a totals row of =SUM() formulas
// and the footnotes generated from the lines.
void write_procurement(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Procurement"), formats.header);
    sheet.headers(formats.columns({std::begin(order_line_columns), std::end(order_line_columns)}));
    const double widths[] = {12, 7,  18, 26, 16, 30, 36, 12, 15, 12, 14, 8,  15, 11,
                             11, 12, 15, 19, 14, 14, 22, 15, 15, 27, 10, 60, 28, 60};
    for (std::size_t column = 0; column < std::size(widths); ++column) {
        const bool long_text = column == 6 || column >= 25;
        sheet.width(column, widths[column], long_text ? formats.wrapped : nullptr);
    }
    constexpr std::size_t first_money = 16;  // capex_usd .. tco_usd
    constexpr std::size_t depreciation_column = 23;
    constexpr std::size_t gpus_column = 11;
    std::vector<double> sums(depreciation_column + 1, 0.0);
    std::size_t row = 1;
    for (const ProcurementLine& procured : report.procurement) {
        for (const OrderLine& line : order_lines(procured)) {
            const bool units = line.item == OrderItem::gpus;
            sheet.text(row, 0, to_string(line.role));
            sheet.text(row, 1, to_string(line.item));
            sheet.text(row, 2, procured.gpu);
            sheet.text(row, 3, procured.gpu_name);
            sheet.text(row, 4, to_string(line.acquisition));
            sheet.text(row, 5, line.id);
            sheet.text(row, 6, line.name, formats.wrapped);
            sheet.text(row, 7, line.provider);
            sheet.number(row, 8, static_cast<double>(line.quantity_units), formats.integer);
            sheet.number(row, 9, static_cast<double>(line.spare_units), formats.integer);
            if (units) {
                sheet.number(row, 10, static_cast<double>(line.gpus_per_unit), formats.integer);
            }
            sheet.number(row, gpus_column, static_cast<double>(line.gpus), formats.integer);
            sheet.number(row, 12, formats.of(line.unit_price_usd), formats.money);
            sheet.text(row, 13, line.price_per);
            sheet.text(row, 14, to_string(line.price_kind));
            sheet.text(row, 15, line.price_as_of);
            const double money[] = {
                formats.of(line.capex_usd),  formats.of(line.opex_usd_per_month),    formats.of(line.rent_usd),
                formats.of(line.resale_usd), formats.of(line.resale_subtracted_usd), formats.of(line.tco_usd)};
            for (std::size_t i = 0; i < std::size(money); ++i) {
                sheet.number(row, first_money + i, money[i], formats.money);
                // The cached results of the SUM formulas: what a reader that does not recalculate shows.
                sums[first_money + i] += std::isfinite(money[i]) ? money[i] : 0;
            }
            sheet.number(row, 22, line.horizon_months, formats.decimal);
            const double depreciation = formats.of(line.depreciation_usd_per_month);
            sheet.number(row, depreciation_column, depreciation, formats.money);
            sums[depreciation_column] += std::isfinite(depreciation) ? depreciation : 0;
            sums[gpus_column] += line.gpus;
            sheet.text(row, 24, to_string(procured.precision));
            if (units) {
                sheet.text(row, 25, procured.reason, formats.wrapped);
                sheet.text(row, 26, procured.alternative, formats.wrapped);
                sheet.text(row, 27, procured.alternative_reason, formats.wrapped);
            }
            ++row;
        }
    }
    sheet.filter(row - 1);
    if (report.procurement.empty()) {
        return;
    }
    const std::size_t last = row;  // 1-based row number of the last line
    sheet.text(row, 0, "total", formats.bold);
    for (std::size_t column = 0; column < sums.size(); ++column) {
        const bool summed = column == gpus_column || (column >= first_money && column < first_money + 6) ||
                            column == depreciation_column;
        if (summed) {
            const std::string name = column_name(column);
            sheet.formula(row, column, fmt::format("=SUM({}2:{}{})", name, name, last), sums[column],
                          column == gpus_column ? formats.integer : formats.money_bold);
        }
    }
    row += 2;
    sheet.text(row++, 0,
               formats.column(
                   "tco_usd = capex_usd + opex_usd_per_month × horizon_months + rent_usd − resale_subtracted_usd on "
                   "every line; depreciation_usd_per_month is capex_usd straight-line over the asset life "
                   "(deployment.asset_life). The Cash flow sheet spreads the same figures month by month."));
    for (const std::string& note : procurement_footnotes(report)) {
        sheet.text(row++, 0, note);
    }
}

// Each role's cash_flow() month by month (render_plan_cash_flow_csv's columns), a total row per
// role of =SUM() formulas (its net is the role's TCO), and the plan's total.
void write_cash_flow(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Cash flow"), formats.header);
    sheet.headers(formats.columns({"role", "gpu", "acquisition", "month", "capex_usd", "opex_usd", "rent_usd",
                                   "resale_usd", "net_usd", "cumulative_usd", "resale_not_counted_usd"}));
    const double widths[] = {12, 18, 16, 7, 15, 14, 14, 14, 15, 16, 23};
    for (std::size_t column = 0; column < std::size(widths); ++column) {
        sheet.width(column, widths[column]);
    }
    constexpr std::size_t first_money = 4;
    constexpr std::size_t columns = 7;  // capex .. resale_not_counted
    std::vector<std::size_t> total_rows;
    std::vector<double> all(columns, 0.0);
    std::size_t row = 1;
    for (const ProcurementLine& line : report.procurement) {
        const std::size_t first = row + 1;  // 1-based
        std::vector<double> sums(columns, 0.0);
        double cumulative = 0;
        for (const CashFlowMonth& month : cash_flow(line)) {
            sheet.text(row, 0, to_string(line.role));
            sheet.text(row, 1, line.gpu);
            sheet.text(row, 2, to_string(line.acquisition));
            sheet.number(row, 3, static_cast<double>(month.month), formats.integer);
            cumulative += formats.of(month.net_usd);
            const double money[] = {formats.of(month.capex_usd),
                                    formats.of(month.opex_usd),
                                    formats.of(month.rent_usd),
                                    formats.of(month.resale_usd),
                                    formats.of(month.net_usd),
                                    cumulative,
                                    formats.of(month.resale_not_counted_usd)};
            for (std::size_t i = 0; i < columns; ++i) {
                sheet.number(row, first_money + i, money[i], formats.money);
                sums[i] += i == 5 ? 0.0 : money[i];
            }
            ++row;
        }
        sums[5] = cumulative;
        sheet.text(row, 0, to_string(line.role), formats.bold);
        sheet.text(row, 1, line.gpu, formats.bold);
        sheet.text(row, 2, to_string(line.acquisition), formats.bold);
        sheet.text(row, 3, "total", formats.bold);
        for (std::size_t i = 0; i < columns; ++i) {
            const std::string name = column_name(first_money + i);
            // The cumulative's total is its last month; every other column's the sum of the months.
            const std::string formula =
                i == 5 ? fmt::format("={}{}", name, row) : fmt::format("=SUM({}{}:{}{})", name, first, name, row);
            sheet.formula(row, first_money + i, formula, sums[i], formats.money_bold);
            all[i] += sums[i];
        }
        total_rows.push_back(row + 1);
        ++row;
    }
    if (report.procurement.empty()) {
        return;
    }
    sheet.text(row, 0, "total", formats.bold);
    sheet.text(row, 3, "total", formats.bold);
    for (std::size_t i = 0; i < columns; ++i) {
        const std::string name = column_name(first_money + i);
        std::string formula = "=";
        for (std::size_t k = 0; k < total_rows.size(); ++k) {
            formula += fmt::format("{}{}{}", k == 0 ? "" : "+", name, total_rows[k]);
        }
        sheet.formula(row, first_money + i, formula, all[i], formats.money_bold);
    }
    // Notes on what the rows above hold, and only that.
    bool any_bought = false;
    bool any_rented = false;
    bool any_counted = false;
    bool any_not_counted = false;
    bool any_block = false;
    for (const ProcurementLine& line : report.procurement) {
        const bool bought = is_purchase(line.acquisition);
        any_block = any_block || line.acquisition == Acquisition::cloud_capacity_block;
        any_bought = any_bought || bought;
        any_rented = any_rented || !bought;
        any_counted = any_counted || (bought && line.resale_counted && line.resale_usd > 0);
        any_not_counted = any_not_counted || (bought && !line.resale_counted && line.resale_usd > 0);
    }
    row += 2;
    if (!formats.currency.is_usd()) {
        sheet.text(row++, 0, "Amounts in " + formats.currency.rate_note() + ", converted from USD.");
    }
    if (any_bought) {
        sheet.text(row++, 0,
                   "Month 0 is delivery: the capex, hosts and spares included; months 1 on carry the opex of the "
                   "owned GPUs (power, operations, failures after warranty), spread evenly over the horizon.");
    }
    if (any_rented) {
        sheet.text(row++, 0,
                   "Rent is spread evenly over the months it is billed (a reserved term over all of them, past the "
                   "horizon if the term is longer).");
    }
    if (any_block) {
        sheet.text(row++, 0, "A capacity block is paid in full when it is booked: its rent is in month 0.");
    }
    if (any_counted) {
        sheet.text(row++, 0,
                   formats.column(
                       "resale_usd: the expected resale, back in the horizon's last month and subtracted from net_usd "
                       "(deployment.count_resale: true)."));
    }
    if (any_not_counted) {
        sheet.text(row++, 0,
                   formats.column(
                       "resale_not_counted_usd: the expected resale in the horizon's last month, a memo outside every "
                       "sum (deployment.count_resale: false)."));
    }
}

void write_candidates(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Candidates"), formats.header);
    const std::vector<std::string> names = formats.columns({"role",
                                                            "rank",
                                                            "gpu",
                                                            "gpu_name",
                                                            "count",
                                                            "replicas",
                                                            "acquisition",
                                                            "precision",
                                                            "layout",
                                                            "memory_per_gpu_gb",
                                                            "capacity_gb",
                                                            "speed",
                                                            "speed_unit",
                                                            "time_s",
                                                            "time_metric",
                                                            "bottleneck",
                                                            "bottleneck_share",
                                                            "capex_usd",
                                                            "monthly_opex_usd",
                                                            "tco_usd",
                                                            "usd_per_unit",
                                                            "unit",
                                                            "break_even_month",
                                                            "reason"});
    sheet.headers(names);
    std::size_t row = 1;
    for (const RolePlan& plan : report.roles) {
        const SpeedMetric speed = speed_metric(plan);
        const TimeMetric time = time_metric(plan);
        for (std::size_t rank = 0; rank < plan.ranked.size(); ++rank) {
            const Candidate& candidate = plan.ranked[rank];
            std::size_t column = 0;
            sheet.text(row, column++, to_string(plan.role));
            sheet.number(row, column++, static_cast<double>(rank + 1), formats.integer);
            sheet.text(row, column++, candidate.gpu);
            sheet.text(row, column++, candidate.gpu_name);
            sheet.number(row, column++, candidate.count, formats.integer);
            sheet.number(row, column++, candidate.replicas, formats.integer);
            sheet.text(row, column++, to_string(candidate.acquisition));
            sheet.text(
                row, column++,
                std::string(to_string(candidate.precision)) + (candidate.precision_fallback ? " (fallback)" : ""));
            sheet.text(row, column++, describe(candidate.layout));
            sheet.number(row, column++, candidate.memory.per_gpu.total_bytes / 1e9, formats.decimal);
            sheet.number(row, column++, candidate.memory.capacity_bytes / 1e9, formats.decimal);
            sheet.number(row, column++, speed_value(speed, candidate), formats.decimal);
            sheet.text(row, column++, speed.unit);
            sheet.number(row, column++, time_value(time, candidate), formats.decimal);
            sheet.text(row, column++, time.header);
            sheet.text(row, column++, to_string(candidate.perf.bottleneck.resource));
            sheet.number(row, column++, candidate.perf.bottleneck.share, formats.percent);
            sheet.number(row, column++, formats.of(candidate.cost.capex_usd), formats.money);
            sheet.number(row, column++, formats.of(candidate.cost.monthly_opex_usd), formats.money);
            sheet.number(row, column++, formats.of(candidate.cost.tco_usd), formats.money);
            if (!candidate.cost.unit.empty()) {
                sheet.number(row, column, formats.of(candidate.cost.usd_per_unit), formats.money);
            }
            ++column;
            sheet.text(row, column++, candidate.cost.unit);
            sheet.number(row, column++, candidate.cost.break_even_month, formats.decimal);
            sheet.text(row, column++, candidate.reason);
            ++row;
        }
    }
    for (std::size_t column = 0; column < names.size(); ++column) {
        sheet.width(column, column == names.size() - 1
                                ? 80
                                : std::max<double>(10, static_cast<double>(names[column].size()) + 2));
    }
    sheet.filter(row - 1);
}

void write_rejected(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Rejected"), formats.header);
    sheet.headers({"role", "gpu", "count", "why_not"});
    std::size_t row = 1;
    for (const RolePlan& plan : report.roles) {
        for (const Rejection& rejection : plan.rejected) {
            sheet.text(row, 0, to_string(plan.role));
            sheet.text(row, 1, rejection.gpu);
            if (rejection.count > 0) {
                sheet.number(row, 2, rejection.count, formats.integer);
            }
            sheet.text(row, 3, rejection.why_not);
            ++row;
        }
    }
    sheet.width(0, 12);
    sheet.width(1, 22);
    sheet.width(3, 90);
    sheet.filter(row - 1);
}

void write_assumptions(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Assumptions"), formats.header);
    sheet.headers({"field", "value", "source"});
    std::size_t row = 1;
    for (const Assumption& assumption : report.assumptions) {
        sheet.text(row, 0, assumption.field);
        sheet.text(row, 1, assumption.value);
        sheet.text(row, 2, assumption.source);
        ++row;
    }
    sheet.width(0, 44);
    sheet.width(1, 18);
    sheet.width(2, 30);
}

Formats make_formats(lxw_workbook* workbook, const Money& currency) {
    Formats formats;
    formats.currency = currency;
    // Excel's number format: the symbol quoted as a literal ("$" stays as it was).
    const std::string money_format = currency.is_usd() ? std::string("$#,##0.00")
                                     : currency.symbol() == currency.code
                                         ? fmt::format("\"{} \"#,##0.00", currency.code)
                                         : fmt::format("\"{}\"#,##0.00", currency.symbol());
    formats.header = workbook_add_format(workbook);
    format_set_bold(formats.header);
    formats.bold = workbook_add_format(workbook);
    format_set_bold(formats.bold);
    formats.money = workbook_add_format(workbook);
    format_set_num_format(formats.money, money_format.c_str());
    formats.money_bold = workbook_add_format(workbook);
    format_set_num_format(formats.money_bold, money_format.c_str());
    format_set_bold(formats.money_bold);
    formats.integer = workbook_add_format(workbook);
    format_set_num_format(formats.integer, "0");
    formats.decimal = workbook_add_format(workbook);
    format_set_num_format(formats.decimal, "0.###");
    formats.percent = workbook_add_format(workbook);
    format_set_num_format(formats.percent, "0%");
    formats.wrapped = workbook_add_format(workbook);
    format_set_text_wrap(formats.wrapped);
    return formats;
}

}  // namespace

std::string render_plan_xlsx(const PlanReport& report, const XlsxOptions& options) {
    const TemporaryDirectory directory;
    const std::string path = directory.path() + "/plan.xlsx";
    std::string tmpdir = directory.path();
    lxw_workbook_options workbook_options{};
    workbook_options.tmpdir = tmpdir.data();
    lxw_workbook* workbook = workbook_new_opt(path.c_str(), &workbook_options);
    if (workbook == nullptr) {
        throw OutputError("cannot create the XLSX workbook: libxlsxwriter ran out of memory");
    }
    std::string title = cell_text("gpusel plan: " + report.project);
    std::string author = "gpusel";
    lxw_doc_properties properties{};
    properties.title = title.data();
    properties.author = author.data();
    if (options.created) {
        properties.created = *options.created;
    }
    workbook_set_properties(workbook, &properties);
    try {
        const Formats formats = make_formats(workbook, money_of(report));
        write_procurement(workbook, report, formats);
        write_cash_flow(workbook, report, formats);
        write_candidates(workbook, report, formats);
        write_rejected(workbook, report, formats);
        write_assumptions(workbook, report, formats);
    } catch (...) {
        workbook_close(workbook);  // frees it; the file goes with the directory
        throw;
    }
    const lxw_error error = workbook_close(workbook);
    if (error != LXW_NO_ERROR) {
        throw OutputError(fmt::format("cannot write the XLSX workbook: {}", lxw_strerror(error)));
    }
    std::ifstream file(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!file.good() && !file.eof()) {
        throw OutputError(fmt::format("cannot read back the XLSX workbook from {}", path));
    }
    return bytes;
}

}  // namespace gpusel
