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
};

void write_procurement(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Procurement"), formats.header);
    sheet.headers({"role",           "gpu",         "gpu_name",           "quantity",   "acquisition",
                   "unit_price_usd", "total_usd",   "monthly_opex_usd",   "tco_usd",    "horizon_months",
                   "reason",         "alternative", "alternative_reason", "offer",      "offer_name",
                   "provider",       "units",       "gpus_per_unit",      "gpus",       "price_per",
                   "price_kind",     "price_as_of", "host_usd",           "resale_usd", "depreciation_usd_per_month",
                   "precision"});
    const double widths[] = {12, 18, 26, 9, 16, 15, 14, 17, 14, 15, 60, 28, 60,
                             30, 40, 14, 8, 13, 8,  11, 11, 12, 14, 14, 16, 10};
    for (std::size_t column = 0; column < std::size(widths); ++column) {
        const bool long_text = column >= 10 && column <= 14;
        sheet.width(column, widths[column], long_text ? formats.wrapped : nullptr);
    }
    double total = 0;
    double opex = 0;
    double tco = 0;
    double host = 0;
    double resale = 0;
    double depreciation = 0;
    std::size_t row = 1;
    for (const ProcurementLine& line : report.procurement) {
        sheet.text(row, 0, to_string(line.role));
        sheet.text(row, 1, line.gpu);
        sheet.text(row, 2, line.gpu_name);
        sheet.number(row, 3, static_cast<double>(line.quantity), formats.integer);
        sheet.text(row, 4, to_string(line.acquisition));
        sheet.number(row, 5, line.unit_price_usd, formats.money);
        sheet.number(row, 6, line.total_usd, formats.money);
        sheet.number(row, 7, line.monthly_opex_usd, formats.money);
        sheet.number(row, 8, line.tco_usd, formats.money);
        sheet.number(row, 9, line.horizon_months, formats.decimal);
        sheet.text(row, 10, line.reason, formats.wrapped);
        sheet.text(row, 11, line.alternative, formats.wrapped);
        sheet.text(row, 12, line.alternative_reason, formats.wrapped);
        const OfferUse& offer = line.offer;
        sheet.text(row, 13, offer.id);
        sheet.text(row, 14, offer.kind == OfferKind::rental ? offer.instance_type : offer.name, formats.wrapped);
        sheet.text(row, 15, offer.provider);
        sheet.number(row, 16, static_cast<double>(line.quantity), formats.integer);
        sheet.number(row, 17, static_cast<double>(offer.gpus_per_unit), formats.integer);
        sheet.number(row, 18, static_cast<double>(line.gpus), formats.integer);
        const bool bought = is_purchase(line.acquisition);
        sheet.text(row, 19, !bought ? "unit-hour" : offer.gpus_per_unit == 1 ? "gpu" : "unit");
        sheet.text(row, 20, std::string(to_string(offer.price_kind)));
        sheet.text(row, 21, offer.as_of);
        sheet.number(row, 22, bought ? line.host_usd : 0.0, formats.money);
        sheet.number(row, 23, bought ? line.resale_usd : 0.0, formats.money);
        sheet.number(row, 24, bought ? line.depreciation_usd_per_month : 0.0, formats.money);
        sheet.text(row, 25, std::string(to_string(line.precision)));
        host += bought && std::isfinite(line.host_usd) ? line.host_usd : 0;
        resale += bought && std::isfinite(line.resale_usd) ? line.resale_usd : 0;
        depreciation += bought && std::isfinite(line.depreciation_usd_per_month) ? line.depreciation_usd_per_month : 0;
        // The cached results of the SUM formulas: what a reader that does not recalculate shows.
        total += std::isfinite(line.total_usd) ? line.total_usd : 0;
        opex += std::isfinite(line.monthly_opex_usd) ? line.monthly_opex_usd : 0;
        tco += std::isfinite(line.tco_usd) ? line.tco_usd : 0;
        ++row;
    }
    sheet.filter(row - 1);
    if (report.procurement.empty()) {
        return;
    }
    const std::size_t last = row;  // 1-based row number of the last line
    sheet.text(row, 0, "total", formats.bold);
    sheet.formula(row, 6, fmt::format("=SUM(G2:G{})", last), total, formats.money_bold);
    sheet.formula(row, 7, fmt::format("=SUM(H2:H{})", last), opex, formats.money_bold);
    sheet.formula(row, 8, fmt::format("=SUM(I2:I{})", last), tco, formats.money_bold);
    sheet.formula(row, 22, fmt::format("=SUM(W2:W{})", last), host, formats.money_bold);
    sheet.formula(row, 23, fmt::format("=SUM(X2:X{})", last), resale, formats.money_bold);
    sheet.formula(row, 24, fmt::format("=SUM(Y2:Y{})", last), depreciation, formats.money_bold);
    sheet.text(row + 2, 0,
               "quantity counts units of the offer (offer_id); unit_price_usd is per unit when bought and per "
               "unit-hour when rented (acquisition cloud-*); total_usd is the purchase incl. hosts and spares, 0 "
               "when rented (quantity × unit_price_usd + host_usd); resale_usd is the expected resale, subtracted "
               "from tco_usd only when the workload counts it; depreciation_usd_per_month is straight-line over the "
               "asset life (deployment.asset_life, default 5 years); price_kind estimate = not published.");
}

void write_candidates(lxw_workbook* workbook, const PlanReport& report, const Formats& formats) {
    Sheet sheet(workbook_add_worksheet(workbook, "Candidates"), formats.header);
    const std::vector<std::string> names = {"role",
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
                                            "reason"};
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
            sheet.number(row, column++, candidate.cost.capex_usd, formats.money);
            sheet.number(row, column++, candidate.cost.monthly_opex_usd, formats.money);
            sheet.number(row, column++, candidate.cost.tco_usd, formats.money);
            if (!candidate.cost.unit.empty()) {
                sheet.number(row, column, candidate.cost.usd_per_unit, formats.money);
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

Formats make_formats(lxw_workbook* workbook) {
    Formats formats;
    formats.header = workbook_add_format(workbook);
    format_set_bold(formats.header);
    formats.bold = workbook_add_format(workbook);
    format_set_bold(formats.bold);
    formats.money = workbook_add_format(workbook);
    format_set_num_format(formats.money, "$#,##0.00");
    formats.money_bold = workbook_add_format(workbook);
    format_set_num_format(formats.money_bold, "$#,##0.00");
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
        const Formats formats = make_formats(workbook);
        write_procurement(workbook, report, formats);
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
