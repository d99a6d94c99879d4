#pragma once
// Renderers of a plan: the terminal view, Markdown, JSON, CSV and XLSX of one PlanReport.
// Pure functions of the report: they format what make_plan() computed and never recompute,
// read the environment or the clock (XlsxOptions::created aside). The CLI picks the stream,
// the width and the colour (docs: docs/spec/cli.md, docs/spec/plan-output.md).

#include <cstddef>
#include <ctime>
#include <iosfwd>
#include <optional>
#include <string>

#include "io/csv.hpp"
#include "plan/plan.hpp"

namespace gpusel {

enum class PlanFormat { table, markdown, json, csv, cash_flow_csv, xlsx };

// How the terminal looks. The CLI sets width from COLUMNS and colour only on a TTY without
// NO_COLOR / --no-color; the renderer never looks itself.
struct TerminalStyle {
    std::size_t width = 100;  // columns; below 40 is treated as 40
    bool color = false;       // ANSI SGR sequences when true, none at all when false
};

struct PlanTableOptions {
    bool show_rejected = false;        // every rejected GPU, one per line (--show-rejected)
    std::size_t rejected_preview = 3;  // otherwise: this many, then "(N more: --show-rejected)"
    bool quiet = false;                // --quiet: no assumptions block, no export hint
};

// The decision memo (docs/spec/plan-output.md): title, assumptions, per role the restated question,
// the class and its priorities, ranked candidates, rejected with why, the pick and the
// alternative, advice; then the procurement table, totals and an export hint. No line is
// wider than style.width (long text wraps; narrow terminals get a stacked layout).
void render_plan_table(const PlanReport& report, std::ostream& out, const TerminalStyle& style,
                       const PlanTableOptions& options = {});

// GitHub-flavoured Markdown for a pull-request comment: the procurement table first, then each
// role with its candidates; rejected GPUs and assumptions in collapsed <details> blocks. Text
// from the report is escaped (\ ` * _ [ ] | $ ~ # backslashed; < > & as entities; line breaks
// as spaces), so it cannot break a table, start math or inject HTML.
void render_plan_markdown(const PlanReport& report, std::ostream& out);

// JSON format 1 (cli.md, `plan`), pretty-printed with a final newline. Keys in the documented
// order, extra keys after them. A number that is not finite is written as null, with an entry
// in the top-level "notes" naming its path. Invalid UTF-8 in text is replaced (U+FFFD).
void render_plan_json(const PlanReport& report, std::ostream& out);

// CSV (cli.md, `plan --format csv`): one row per order line (order_lines(): the GPU units of each
// role's pick, then its hosts), one unit per column (quantity_units, gpus, unit_price_usd per
// price_per `unit` or `unit-hour`, capex_usd, opex_usd_per_month, rent_usd, resale_usd,
// resale_subtracted_usd, tco_usd), then a totals row whose role is `total` and whose money cells
// are the column sums of the rows as printed; written with CsvWriter (RFC 4180, CRLF, money with
// two decimals, formula-like text neutralised).
void render_plan_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options = {});

// CSV (cli.md, `plan --format cashflow-csv`): each role's cash_flow() month by month under the
// header role,gpu,acquisition,month,capex_usd,opex_usd,rent_usd,resale_usd,net_usd,
// cumulative_usd,resale_not_counted_usd; after a role's months a row whose month is `total`
// (its net_usd is the role's TCO), and last a row whose role is `total` (the plan's). Cents are
// rounded so that each role's months add up to its total row exactly.
void render_plan_cash_flow_csv(const PlanReport& report, std::ostream& out, const CsvOptions& options = {});

struct XlsxOptions {
    // The workbook's creation time (docProps/core.xml); absent: libxlsxwriter uses the current
    // time. Set it for byte-reproducible output.
    std::optional<std::time_t> created;
};

// An .xlsx workbook: sheet "Procurement" (the CSV columns, money formatted, a Total row whose
// cells are =SUM() formulas with cached values, the footnotes generated from the lines), "Cash
// flow" (the cash-flow CSV's columns, a total per role and for the plan as =SUM() formulas),
// "Candidates" (every ranked candidate of every role), "Rejected" and "Assumptions". Returns the
// file's bytes so that the caller writes them atomically. Throws OutputError when libxlsxwriter
// or the temporary file fails.
std::string render_plan_xlsx(const PlanReport& report, const XlsxOptions& options = {});

}  // namespace gpusel
