#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/render.hpp"
#include "report/text_table.hpp"
#include "support/plan_fixture.hpp"

using gpusel::PlanReport;
using gpusel::test::fixture_plan_report;
using Json = nlohmann::ordered_json;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) {
        lines.push_back(line);
    }
    return lines;
}

std::string table_text(const PlanReport& report, std::size_t width, bool color = false, bool show_rejected = false) {
    std::ostringstream out;
    gpusel::TerminalStyle style;
    style.width = width;
    style.color = color;
    gpusel::PlanTableOptions options;
    options.show_rejected = show_rejected;
    gpusel::render_plan_table(report, out, style, options);
    return out.str();
}

std::string strip_ansi(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
            i += 2;
            while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) {
                ++i;
            }
            continue;
        }
        out.push_back(text[i]);
    }
    return out;
}

bool contains_line(const std::string& text, const std::string& line) {
    for (const std::string& candidate : lines_of(text)) {
        if (candidate == line) {
            return true;
        }
    }
    return false;
}

std::string json_text(const PlanReport& report) {
    std::ostringstream out;
    gpusel::render_plan_json(report, out);
    return out.str();
}

std::vector<std::string> keys_of(const Json& object) {
    std::vector<std::string> keys;
    for (const auto& item : object.items()) {
        keys.push_back(item.key());
    }
    return keys;
}

std::vector<std::string> first_keys(const Json& object, std::size_t count) {
    std::vector<std::string> keys = keys_of(object);
    keys.resize(std::min(count, keys.size()));
    return keys;
}

std::string markdown_text(const PlanReport& report) {
    std::ostringstream out;
    gpusel::render_plan_markdown(report, out);
    return out.str();
}

// Table cell separators: '|' not preceded by a backslash.
std::size_t unescaped_pipes(const std::string& line) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) {
            ++count;
        }
    }
    return count;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// CSV

TEST_CASE("render::plan csv is the procurement table, byte for byte", "[render][csv]") {
    std::ostringstream out;
    gpusel::render_plan_csv(fixture_plan_report(), out);
    // Worked out by hand from plan_fixture.hpp: CRLF; money with two decimals (164.58333 →
    // 164.58, 1234.567 → 1234.57, 96000.5 → 96000.50); the name with a comma and quotes is
    // quoted with the quotes doubled; reasons starting with '-' and '=' get a leading ' and
    // quotes; a reason with a comma is quoted; "×" passes as UTF-8.
    const std::string expected =
        "role,item,gpu,gpu_name,acquisition,offer,offer_name,provider,quantity_units,spare_units,gpus_per_unit,gpus,"
        "unit_price_usd,price_per,price_kind,price_as_of,capex_usd,opex_usd_per_month,rent_usd,resale_usd,"
        "resale_subtracted_usd,tco_usd,horizon_months,depreciation_usd_per_month,precision,reason,alternative,"
        "alternative_reason\r\n"
        // The rental: one line, priced per unit-hour; all of its TCO is rent.
        "training,gpus,A100-80GB-SXM4,\"NVIDIA A100 80GB SXM4, \"\"datacenter\"\"\",cloud-on-demand,"
        "lambda/gpu_1x_a100_80gb,gpu_1x_a100_80gb,lambda,4,0,1,4,2.79,unit-hour,list,2026-09,0.00,0.00,3950.00,0.00,"
        "0.00,3950.00,24,0.00,bf16,2 days a quarter: renting wins,H100-SXM5 ×2 (cloud on-demand),"
        "\"H100-SXM5 ×2 cloud on-demand: pays back only if the horizon exceeds 31 months, at $4,310\"\r\n"
        // The cards: 12 × 7,500.00 = 90,000.00; TCO 90,000 + 24 × 1,234.567 = 119,629.608; resale
        // reported, not subtracted; depreciation 90,000 / 24 = 3,750.
        "inference,gpus,L40S,NVIDIA L40S,buy-new,l40s-card,NVIDIA L40S 48GB PCIe card,retail,12,0,1,12,7500.00,unit,"
        "street,2026-09,90000.00,1234.57,0.00,40500.00,0.00,119629.61,24,3750.00,fp8,"
        "\"'-5 % TCO against L40: P99 TPOT 41 ms at 20 req/s\",A10 ×16 (buy new),"
        "\"'=1+1 is not a formula; P99 TPOT 63 ms > 50 ms SLO\"\r\n"
        // The hosts, their own line with their own (estimated) price: 2 × 3,000.25 = 6,000.50;
        // depreciation 6,000.50 / 24 = 250.02.
        "inference,host,L40S,NVIDIA L40S,buy-new,pcie-8slot-server,8-slot PCIe server,,2,0,,0,3000.25,unit,estimate,"
        "2026-06,6000.50,0.00,0.00,0.00,0.00,6000.50,24,250.02,fp8,,,\r\n"
        // The totals row: GPUs 4 + 12; capex 90,000.00 + 6,000.50; TCO 3,950.00 + 119,629.61 +
        // 6,000.50 = 129,580.11; depreciation 3,750.00 + 250.02.
        "total,,,,,,,,,,,16,,,,,96000.50,1234.57,3950.00,40500.00,0.00,129580.11,,4000.02,,,,\r\n";
    CHECK(out.str() == expected);
}

TEST_CASE("render::plan csv: byte order mark on request, empty cells for values that are not finite", "[render][csv]") {
    PlanReport report = fixture_plan_report();
    report.procurement.resize(1);
    report.procurement[0].tco_usd = std::numeric_limits<double>::infinity();
    report.procurement[0].horizon_months = 18.5;
    gpusel::CsvOptions options;
    options.byte_order_mark = true;
    std::ostringstream out;
    gpusel::render_plan_csv(report, out, options);
    const std::vector<std::string> lines = lines_of(out.str());
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].rfind("\xef\xbb\xbfrole,item,gpu,", 0) == 0);
    // Rent and TCO of the line (its TCO, all rent) are empty.
    CHECK(lines[1].find(",2.79,unit-hour,list,2026-09,0.00,0.00,,0.00,0.00,,18.50,0.00,bf16,") != std::string::npos);
    // A total of a column with a value that is not finite is left empty, not summed.
    CHECK(lines[2] == "total,,,,,,,,,,,4,,,,,0.00,0.00,,0.00,0.00,,,0.00,,,,\r");
}

TEST_CASE("render::plan cash-flow csv: month by month, each role adding up to its TCO", "[render][csv]") {
    std::ostringstream out;
    gpusel::render_plan_cash_flow_csv(fixture_plan_report(), out);
    const std::vector<std::string> lines = lines_of(out.str());
    // The header, 25 months and a total per role, the plan's total.
    REQUIRE(lines.size() == 1 + 26 + 26 + 1);
    CHECK(lines[0] ==
          "role,gpu,acquisition,month,capex_usd,opex_usd,rent_usd,resale_usd,net_usd,cumulative_usd,"
          "resale_not_counted_usd\r");
    // The rental: nothing at delivery, $3,950 / 24 = $164.5833 a month, cents carried so that the
    // running total is the exact one rounded (164.58, then 329.17 − 164.58 = 164.59).
    CHECK(lines[1] == "training,A100-80GB-SXM4,cloud-on-demand,0,0.00,0.00,0.00,0.00,0.00,0.00,0.00\r");
    CHECK(lines[2] == "training,A100-80GB-SXM4,cloud-on-demand,1,0.00,0.00,164.58,0.00,164.58,164.58,0.00\r");
    CHECK(lines[3] == "training,A100-80GB-SXM4,cloud-on-demand,2,0.00,0.00,164.59,0.00,164.59,329.17,0.00\r");
    CHECK(lines[26] == "training,A100-80GB-SXM4,cloud-on-demand,total,0.00,0.00,3950.00,0.00,3950.00,3950.00,0.00\r");
    // The purchase: capex with the hosts at delivery, 24 × $1,234.567 of opex, the resale a memo
    // in month 24 (not counted).
    CHECK(lines[27] == "inference,L40S,buy-new,0,96000.50,0.00,0.00,0.00,96000.50,96000.50,0.00\r");
    CHECK(lines[28] == "inference,L40S,buy-new,1,0.00,1234.57,0.00,0.00,1234.57,97235.07,0.00\r");
    CHECK(lines[29] == "inference,L40S,buy-new,2,0.00,1234.56,0.00,0.00,1234.56,98469.63,0.00\r");
    CHECK(lines[51] == "inference,L40S,buy-new,24,0.00,1234.57,0.00,0.00,1234.57,125630.11,40500.00\r");
    CHECK(lines[52] == "inference,L40S,buy-new,total,96000.50,29629.61,0.00,0.00,125630.11,125630.11,40500.00\r");
    // 3,950.00 + 125,630.11: the procurement CSV's total tco_usd.
    CHECK(lines[53] == "total,,,total,96000.50,29629.61,3950.00,0.00,129580.11,129580.11,40500.00\r");
}

TEST_CASE("render::plan csv of a plan with nothing to buy is the header alone", "[render][csv]") {
    PlanReport report = fixture_plan_report();
    report.procurement.clear();
    std::ostringstream out;
    gpusel::render_plan_csv(report, out);
    CHECK(out.str() ==
          "role,item,gpu,gpu_name,acquisition,offer,offer_name,provider,quantity_units,spare_units,gpus_per_unit,gpus,"
          "unit_price_usd,price_per,price_kind,price_as_of,capex_usd,opex_usd_per_month,rent_usd,resale_usd,"
          "resale_subtracted_usd,tco_usd,horizon_months,depreciation_usd_per_month,precision,reason,alternative,"
          "alternative_reason\r\n");
}

// ---------------------------------------------------------------------------------------
// JSON

TEST_CASE("render::plan json has the keys and values of cli.md format 1", "[render][json]") {
    const Json json = Json::parse(json_text(fixture_plan_report()));
    CHECK(first_keys(json, 5) ==
          std::vector<std::string>{"format_version", "project", "roles", "procurement", "assumptions"});
    CHECK(json["format_version"] == 1);
    CHECK(json["project"] == "smart-support");
    REQUIRE(json["roles"].size() == 2);

    const Json& training = json["roles"][0];
    CHECK(first_keys(training, 6) ==
          std::vector<std::string>{"role", "workload", "winner", "alternative", "candidates", "rejected"});
    CHECK(training["role"] == "training");
    CHECK(training["workload"] == "support-bot-finetune");
    CHECK(training["evaluated"] == 412);
    CHECK(training["feasible"] == 57);
    CHECK(training["workload_class"] == "medium training/tuning");

    const Json& winner = training["winner"];
    CHECK(first_keys(winner, 10) == std::vector<std::string>{"gpu", "count", "acquisition", "layout", "score", "memory",
                                                             "perf", "cost", "bottleneck", "reason"});
    CHECK(winner["gpu"] == "A100-80GB-SXM4");
    CHECK(winner["count"] == 4);
    CHECK(winner["acquisition"] == "cloud-on-demand");
    CHECK(first_keys(winner["layout"], 4) ==
          std::vector<std::string>{"tensor_parallel", "pipeline_parallel", "data_parallel", "sharding"});
    CHECK(winner["layout"]["data_parallel"] == 4);
    CHECK(winner["layout"]["sharding"] == "zero1");
    CHECK(winner["score"].get<double>() == 3950);
    CHECK(first_keys(winner["memory"], 4) ==
          std::vector<std::string>{"per_gpu", "capacity_bytes", "fits", "headroom_bytes"});
    CHECK(winner["memory"]["per_gpu"]["total_bytes"] == 41200000000);
    CHECK(winner["memory"]["per_gpu"]["weights_bytes"] == 16060000000);
    CHECK(winner["memory"]["capacity_bytes"] == 80000000000);
    CHECK(winner["memory"]["fits"] == true);
    CHECK(winner["memory"]["headroom_bytes"] == 38800000000);
    CHECK(winner["memory"]["max_batch"].is_null());
    CHECK(winner["perf"]["inference"].is_null());
    CHECK(first_keys(winner["perf"]["training"], 5) ==
          std::vector<std::string>{"step_time_s", "tokens_per_s", "samples_per_s", "mfu", "time_to_train_s"});
    CHECK(winner["perf"]["training"]["time_to_train_s"].get<double>() == 169344);
    CHECK(winner["perf"]["training"]["tokens_per_s"].get<double>() == 11800);
    CHECK(first_keys(winner["cost"], 7) == std::vector<std::string>{"capex_usd", "monthly_opex_usd", "tco_usd",
                                                                    "cloud_equivalent_usd", "break_even_month",
                                                                    "usd_per_unit", "unit"});
    CHECK(winner["cost"]["tco_usd"].get<double>() == 3950);
    CHECK(winner["cost"]["break_even_month"].is_null());
    CHECK(winner["cost"]["usd_per_unit"].get<double>() == Approx(1.975));
    CHECK(winner["cost"]["unit"] == "1M tokens");
    CHECK(winner["cost"]["unit_price_per"] == "unit_hour");
    CHECK(first_keys(winner["bottleneck"], 3) == std::vector<std::string>{"resource", "share", "detail"});
    CHECK(winner["bottleneck"]["resource"] == "compute");
    CHECK(winner["bottleneck"]["share"].get<double>() == Approx(0.71));
    CHECK(winner["reason"] == "1.96 d within the 14 d deadline at the lowest TCO");

    CHECK(training["alternative"]["gpu"] == "H100-SXM5");
    CHECK(training["alternative"]["why_not"] == "H100-SXM5 ×2 cloud on-demand: 8 % faster, $360 more");
    REQUIRE(training["candidates"].size() == 2);
    CHECK(training["candidates"][1]["gpu"] == "H100-SXM5");
    CHECK(keys_of(training["candidates"][1]) == keys_of(winner));
    REQUIRE(training["rejected"].size() == 4);
    CHECK(keys_of(training["rejected"][3]) ==
          std::vector<std::string>{"gpu", "kind", "limit", "needed", "available", "count", "why_not"});
    CHECK(training["rejected"][3]["gpu"] == "RTX-3060");
    CHECK(training["rejected"][3]["count"] == 8);
    CHECK(training["pareto"] == Json::array({0, 1}));

    const Json& inference = json["roles"][1]["winner"];
    CHECK(inference["perf"]["training"].is_null());
    CHECK(inference["perf"]["inference"]["p99_tpot_s"].get<double>() == Approx(0.041));
    CHECK(inference["perf"]["inference"]["batch"] == 16);
    CHECK(inference["memory"]["max_micro_batch"].is_null());
    CHECK(inference["memory"]["max_batch"] == 24);
    CHECK(inference["cost"]["break_even_month"].get<double>() == 14.5);
    CHECK(inference["cost"]["capex_usd"].get<double>() == 96000.5);
    CHECK(inference["bottleneck"]["resource"] == "memory-bandwidth");
    CHECK(json["roles"][1]["candidates"][1]["precision"] == "fp16");
    CHECK(json["roles"][1]["candidates"][1]["precision_fallback"] == true);

    REQUIRE(json["procurement"].size() == 2);
    const Json& line = json["procurement"][0];
    CHECK(first_keys(line, 12) == std::vector<std::string>{"role", "gpu", "gpu_name", "quantity", "acquisition",
                                                           "unit_price_usd", "total_usd", "tco_usd", "horizon_months",
                                                           "reason", "alternative", "alternative_reason"});
    CHECK(line["gpu_name"] == "NVIDIA A100 80GB SXM4, \"datacenter\"");
    CHECK(line["quantity"] == 4);
    CHECK(line["unit_price_usd"].get<double>() == 2.79);
    CHECK(line["total_usd"].get<double>() == 0);
    CHECK(line["horizon_months"].get<double>() == 24);
    CHECK(json["procurement"][1]["reason"] == "-5 % TCO against L40: P99 TPOT 41 ms at 20 req/s");
    // Money to the cent, other numbers to six significant digits (samples_per_s = 11800 / 4096).
    CHECK(json["procurement"][1]["monthly_opex_usd"].get<double>() == 1234.57);
    CHECK(json["procurement"][0]["monthly_opex_usd"].get<double>() == 164.58);
    CHECK(winner["perf"]["training"]["samples_per_s"].get<double>() == 2.88086);

    REQUIRE(json["assumptions"].size() == 3);
    CHECK(keys_of(json["assumptions"][2]) == std::vector<std::string>{"field", "value", "source"});
    CHECK(json["assumptions"][2]["field"] == "chat-api: inference.batch");
    CHECK(json["totals"]["capex_usd"].get<double>() == 96000.5);
    CHECK(json["notes"].empty());
}

TEST_CASE("render::plan json writes null with a note for a value that is not finite", "[render][json]") {
    PlanReport report = fixture_plan_report();
    report.roles[0].winner->cost.usd_per_unit = std::numeric_limits<double>::quiet_NaN();
    report.roles[0].ranked[1].score = std::numeric_limits<double>::infinity();
    report.procurement[1].tco_usd = -std::numeric_limits<double>::infinity();
    const std::string text = json_text(report);
    CHECK_THAT(text, !Catch::Matchers::Contains("NaN"));
    CHECK_THAT(text, !Catch::Matchers::Contains("nan,"));
    CHECK_THAT(text, !Catch::Matchers::Contains("Infinity"));
    const Json json = Json::parse(text);
    CHECK(json["roles"][0]["winner"]["cost"]["usd_per_unit"].is_null());
    CHECK(json["roles"][0]["candidates"][1]["score"].is_null());
    CHECK(json["procurement"][1]["tco_usd"].is_null());
    CHECK(json["notes"] ==
          Json::array(
              {"roles[0].winner.cost.usd_per_unit: the computed value is not a finite number (nan); written as null",
               "roles[0].candidates[1].score: the computed value is not a finite number (inf); written as null",
               "procurement[1].tco_usd: the computed value is not a finite number (-inf); written as null",
               // The GPU line's TCO is the role's less its hosts.
               "procurement[1].lines[0].tco_usd: the computed value is not a finite number (-inf); written as null"}));
}

TEST_CASE("render::plan json: absent values are null, invalid UTF-8 is replaced, not thrown", "[render][json]") {
    PlanReport report = fixture_plan_report();
    report.project = "bad \xff name";
    report.roles[0].winner->perf.training->time_to_train_s.reset();
    report.roles[1].winner->perf.inference->p99_ttft_s.reset();
    report.roles[1].winner.reset();
    report.roles[1].alternative.reset();
    std::string text;
    REQUIRE_NOTHROW(text = json_text(report));
    const Json json = Json::parse(text);
    CHECK(json["project"] == "bad \xef\xbf\xbd name");
    CHECK(json["roles"][0]["winner"]["perf"]["training"]["time_to_train_s"].is_null());
    CHECK(json["roles"][1]["winner"].is_null());
    CHECK(json["roles"][1]["alternative"].is_null());
    CHECK(json["notes"].empty());
}

TEST_CASE("render::plan json: a model without tokens has null token rates, as `perf` writes them", "[render][json]") {
    PlanReport report = fixture_plan_report();
    report.roles[1].workload.model.layers = 0;  // not a transformer: a ranking model, say
    report.roles[0].workload.model.layers = 0;
    const Json json = Json::parse(json_text(report));
    const Json& inference = json["roles"][1]["winner"]["perf"];
    CHECK(inference["inference"]["tpot_s"].is_null());
    CHECK(inference["inference"]["output_tokens_per_s"].is_null());
    CHECK(inference["inference"]["requests_per_s"].get<double>() == 25);
    CHECK(inference["notes"].size() == 1);
    const Json& training = json["roles"][0]["winner"]["perf"];
    CHECK(training["training"]["tokens_per_s"].is_null());
    CHECK(training["notes"] ==
          Json::array({"training.tokens_per_s is null: the model has no tokens; see samples_per_s"}));
    CHECK(json["notes"].empty());
}

// ---------------------------------------------------------------------------------------
// Terminal table

TEST_CASE("render::plan table fits the terminal width", "[render][table]") {
    const PlanReport report = fixture_plan_report();
    const std::size_t width =
        GENERATE(std::size_t{40}, std::size_t{60}, std::size_t{80}, std::size_t{100}, std::size_t{132});
    const bool show_rejected = GENERATE(false, true);
    CAPTURE(width, show_rejected);
    const std::string text = table_text(report, width, false, show_rejected);
    for (const std::string& line : lines_of(text)) {
        CAPTURE(line);
        CHECK(gpusel::display_width(line) <= width);
        CHECK((line.empty() || line.back() != ' '));
    }
    // Everything that matters is there at every width.
    for (const char* needed : {"smart-support", "Assumptions", "training: support-bot-finetune", "inference: chat-api",
                               "A100-80GB-SXM4", "H100-SXM5", "L40S", "Procurement", "Totals:", "Export:",
                               "no native bf16", "$3,950", "$125,630", "$2.79/h", "2 days a quarter: renting wins"}) {
        CHECK(strip_ansi(text).find(needed) != std::string::npos);
    }
    // The narrowest terminals fall back to blocks: no line is cut, nothing is lost.
    CHECK_THAT(text, !Catch::Matchers::Contains("\x1b"));
}

TEST_CASE("render::plan table at 100 columns: the lines a reader acts on, exactly", "[render][table]") {
    const std::string text = table_text(fixture_plan_report(), 100);
    const std::vector<std::string> lines = lines_of(text);
    REQUIRE(!lines.empty());
    CHECK(lines[0] == "smart-support — 2 roles, horizon 24 months, objective: lowest TCO meeting every constraint");
    // Procurement: $2.79 per GPU-hour, nothing bought, 164.58/month → $165, TCO $3,950.
    CHECK(
        contains_line(text, "  role       GPU             qty  acquisition         unit    total  opex/mo  TCO 24 mo"));
    CHECK(
        contains_line(text, "  training   A100-80GB-SXM4    4  cloud on-demand  $2.79/h        —     $165     $3,950"));
    CHECK(
        contains_line(text, "  inference  L40S             12  buy new           $7,500  $96,001   $1,235   $125,630"));
    CHECK(contains_line(text, "             why: 2 days a quarter: renting wins"));
    // 96000.5 → $96,001; 164.58333 + 1234.567 = 1399.15 → $1,399; 3950 + 125629.99 → $129,580.
    CHECK(contains_line(text, "Totals: capex $96,001 · monthly opex $1,399 · 24-month TCO $129,580"));
    // Three rejected shown, then the count of the rest.
    CHECK_THAT(text, Catch::Matchers::Contains("(1 more: --show-rejected)"));
    CHECK_THAT(text, !Catch::Matchers::Contains("RTX-3060"));
    CHECK(contains_line(text, "   * no native bf16: V100-SXM2-32GB runs fp16"));
    CHECK(contains_line(text, "   alternative: H100-SXM5 ×2 cloud on-demand: 8 % faster, $360 more"));
    CHECK(contains_line(text, "   → strategy by horizon: mix renting and owning (6-24 months)"));
}

TEST_CASE("render::plan table --show-rejected lists every rejected GPU", "[render][table]") {
    const std::string text = table_text(fixture_plan_report(), 100, false, true);
    CHECK_THAT(text, !Catch::Matchers::Contains("more: --show-rejected"));
    CHECK(contains_line(text, "   rejected (4):"));
    CHECK(contains_line(text, "     RTX-3060 — needs 13.1 GB per GPU at 8 GPUs, has 12 GB"));
    CHECK(contains_line(text, "     V100-SXM2-32GB — no bf16 support"));
}

TEST_CASE("render::plan table uses ANSI colour only when asked, without moving anything", "[render][table]") {
    const PlanReport report = fixture_plan_report();
    for (const std::size_t width : {std::size_t{60}, std::size_t{100}}) {
        const std::string plain = table_text(report, width, false);
        const std::string colored = table_text(report, width, true);
        CHECK(plain.find('\x1b') == std::string::npos);
        CHECK_THAT(colored, Catch::Matchers::Contains("\x1b["));
        CHECK(strip_ansi(colored) == plain);
    }
}

TEST_CASE("render::plan table says when nothing is feasible or nothing was assumed", "[render][table]") {
    PlanReport report = fixture_plan_report();
    report.roles[1].ranked.clear();
    report.roles[1].winner.reset();
    report.roles[1].alternative.reset();
    report.roles[1].pareto.clear();
    report.roles[1].advice = {"nothing meets every constraint: relax the deadline, SLO or budget, or allow more GPUs"};
    report.procurement.clear();
    report.assumptions.clear();
    const std::string text = table_text(report, 80);
    CHECK(contains_line(text, "   no feasible option: 96 evaluated, none meets every constraint"));
    CHECK(contains_line(text, "Procurement: nothing — no role has a feasible option"));
    CHECK(contains_line(text, "Assumptions: none (every setting was given in the file)"));
    CHECK_THAT(text, !Catch::Matchers::Contains("Totals:"));
}

TEST_CASE("render::plan table --quiet leaves out the assumptions and the export hint", "[render][table]") {
    std::ostringstream out;
    gpusel::PlanTableOptions options;
    options.quiet = true;
    gpusel::render_plan_table(fixture_plan_report(), out, gpusel::TerminalStyle{}, options);
    const std::string text = out.str();
    CHECK_THAT(text, !Catch::Matchers::Contains("Assumptions"));
    CHECK_THAT(text, !Catch::Matchers::Contains("Export:"));
    CHECK_THAT(text, Catch::Matchers::Contains("Totals: capex $96,001"));
    CHECK_THAT(text, Catch::Matchers::Contains("── training: support-bot-finetune"));
}

TEST_CASE("render::plan table says a default all workloads share once", "[render][table]") {
    PlanReport report = fixture_plan_report();
    report.assumptions = {{"support-bot-finetune: deployment.pue", "1.4", "default"},
                          {"support-bot-finetune: training.runs", "1", "default"},
                          {"chat-api: deployment.pue", "1.4", "default"},
                          {"chat-api: inference.batch", "16", "largest batch meeting the SLO"}};
    const std::string text = table_text(report, 100);
    CHECK(contains_line(text, "  all roles: deployment.pue 1.4"));
    CHECK(contains_line(text, "  support-bot-finetune: training.runs 1"));
    CHECK(contains_line(text, "  chat-api: inference.batch 16 (largest batch meeting the SLO)"));
}

TEST_CASE("render::plan table leaves out the cost per unit when there is no unit of work", "[render][table]") {
    PlanReport report = fixture_plan_report();
    for (gpusel::Candidate& candidate : report.roles[0].ranked) {
        candidate.cost.unit.clear();
        candidate.cost.usd_per_unit = 0;
    }
    const std::string text = table_text(report, 132);
    CHECK(contains_line(text,
                        "   #  GPU             n  mode         mem/GPU        speed    time  bottleneck    TCO 24 mo"));
    CHECK(contains_line(text,
                        "   1  A100-80GB-SXM4  4  cloud od  41.2/80 GB  11.8k tok/s  47.0 h  compute 71 %     $3,950"));
    CHECK(markdown_text(report).find("| # | GPU | n | Mode | Mem/GPU | Speed | Time | Bottleneck | TCO (24 mo) |\n") !=
          std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Markdown

TEST_CASE("render::plan markdown: procurement first, GitHub tables with escaped text", "[render][markdown]") {
    const std::string text = markdown_text(fixture_plan_report());
    const std::size_t procurement = text.find("### Procurement");
    const std::size_t training = text.find("### training: support-bot-finetune");
    REQUIRE(procurement != std::string::npos);
    REQUIRE(training != std::string::npos);
    CHECK(procurement < training);
    CHECK(lines_of(text)[0] == "## gpusel plan: smart-support");
    CHECK(contains_line(text,
                        "| Role | GPU | Line | Units | GPUs | Acquisition | Unit price | Per | Price kind | Capex | "
                        "Opex / month | Rent | TCO (24 mo) | Order | Why | Alternative |"));
    CHECK(contains_line(text,
                        "| --- | --- | --- | --: | --: | --- | --- | --- | --- | --: | --: | --: | --: | --- | "
                        "--- | --- |"));
    // '$' escaped (GitHub renders $…$ as math); the alternative's condition names its GPU already.
    CHECK(contains_line(
        text,
        "| training | **A100-80GB-SXM4** | gpus | 4 | 4 | cloud on-demand | \\$2.79/h | unit-hour | list | "
        "\\$0 | \\$0 | \\$3,950 | \\$3,950 | "
        "4 × gpu\\_1x\\_a100\\_80gb (4 × A100-80GB-SXM4), Lambda, on-demand \\$2.79/h (list 2026-09) "
        "\\[lambda/gpu\\_1x\\_a100\\_80gb\\] | 2 days a quarter: renting wins | H100-SXM5 ×2 cloud "
        "on-demand: pays back only if the "
        "horizon exceeds 31 months, at \\$4,310 |"));
    // The hosts: a line of their own, with their own (estimated) price: 2 × $3,000.25.
    CHECK(contains_line(text,
                        "| inference | **L40S** | host: 8-slot PCIe server | 2 | 0 | buy new | \\~\\$3,000 | unit | "
                        "estimate | \\$6,001 | \\$0 | \\$0 | \\$6,001 |  |  |  |"));
    // The totals row: $90,000 + $6,000.50; TCO $3,950 + $119,629.61 + $6,000.50.
    CHECK(contains_line(text,
                        "| **total** |  |  |  | 16 |  |  |  |  | \\$96,001 | \\$1,235 | \\$3,950 | \\$129,580 |  |  "
                        "|  |"));
    // Footnotes from the lines: an instance-hour price for the rental, the estimated host named,
    // the resale not subtracted.
    CHECK(contains_line(text, "- Unit price is per instance-hour rented (unit-hour): gpu\\_1x\\_a100\\_80gb (1 GPU)."));
    CHECK(contains_line(text, "- \\~ marks an estimated price, not published: 8-slot PCIe server."));
    CHECK(contains_line(text,
                        "- The expected resale at the horizon's end, \\$40,500, is not subtracted from the TCO "
                        "(deployment.count\\_resale: false)."));
    CHECK(contains_line(text,
                        "**Totals:** capex \\$96,001 · opex \\$1,235 per month · rent \\$3,950 · 24-month TCO "
                        "\\$129,580"));
    CHECK(contains_line(text,
                        "| 2 | V100-SXM2-32GB\\* | 16 | buy new | 29.8/32 GB | 6400 tok/s | 48.0 ms | memory bw 62 % | "
                        "\\$140,000 | \\$0.42 |"));
    CHECK_THAT(text, Catch::Matchers::Contains("<details><summary>Rejected (4)</summary>"));
    CHECK(contains_line(text, "| JETSON-AGX-ORIN-64GB | 1 | 41 d &gt; 14 d deadline at 1 GPUs |"));
    CHECK(contains_line(text, "| chat-api: deployment.energy\\_price | 0.12 USD/kWh | default |"));

    // Every row of a table has as many cells as its header.
    std::size_t expected_pipes = 0;
    for (const std::string& line : lines_of(text)) {
        if (line.empty() || line[0] != '|') {
            expected_pipes = 0;
            continue;
        }
        if (expected_pipes == 0) {
            expected_pipes = unescaped_pipes(line);
        }
        CAPTURE(line);
        CHECK(unescaped_pipes(line) == expected_pipes);
        CHECK(line.back() == '|');
    }
}

TEST_CASE("render::plan markdown escapes text that would break a table or inject HTML", "[render][markdown]") {
    PlanReport report = fixture_plan_report();
    report.project = "a|b *c* <script> [x](y) `z` $1 & ~d~";
    report.procurement[0].reason = "line one\nline | two";
    const std::string text = markdown_text(report);
    CHECK(lines_of(text)[0] == "## gpusel plan: a\\|b \\*c\\* &lt;script&gt; \\[x\\](y) \\`z\\` \\$1 &amp; \\~d\\~");
    CHECK_THAT(text, !Catch::Matchers::Contains("<script>"));
    CHECK_THAT(text, Catch::Matchers::Contains("| line one line \\| two |"));
}

// ---------------------------------------------------------------------------------------
// XLSX (sheets and formulas are checked from Python: tests/render/check_xlsx.py)

TEST_CASE("render::plan xlsx is a ZIP container, reproducible with a fixed creation time", "[render][xlsx]") {
    gpusel::XlsxOptions options;
    options.created = 1767225600;
    const std::string first = gpusel::render_plan_xlsx(fixture_plan_report(), options);
    REQUIRE(first.size() > 4000);
    CHECK(first.compare(0, 4, "PK\x03\x04") == 0);
    const std::string second = gpusel::render_plan_xlsx(fixture_plan_report(), options);
    CHECK(first == second);
}

TEST_CASE("render::plan table and markdown in another currency print no dollar amount", "[render][currency]") {
    PlanReport report = fixture_plan_report();
    REQUIRE(table_text(report, 120).find('$') != std::string::npos);
    for (gpusel::RolePlan& role : report.roles) {
        role.workload.deployment.currency = gpusel::CurrencySpec{"EUR", 0.86, "2026-11"};
        // The fixture's hand-written sentences stand for the planner's, which it writes in the
        // currency (tests/cli/cases/currency-*); what is left are the renderers' own figures.
        role.alternative_why_not.clear();
    }
    for (gpusel::ProcurementLine& line : report.procurement) {
        line.alternative_reason.clear();
    }
    const std::string table = table_text(report, 120);
    CHECK(table.find('$') == std::string::npos);
    CHECK(table.find("money in EUR at 0.86 per USD (2026-11, user-given)") != std::string::npos);
    std::ostringstream markdown;
    gpusel::render_plan_markdown(report, markdown);
    CHECK(markdown.str().find('$') == std::string::npos);
    CHECK(markdown.str().find("money in EUR at 0.86 per USD (2026-11, user-given)") != std::string::npos);
    // The totals line: the fixture's USD totals × 0.86 in whole euros: capex 96,000.5 × 0.86 =
    // 82,560.43; TCO (3,950 + 125,630.108) × 0.86 = 111,438.89.
    CHECK(table.find("capex €82,560") != std::string::npos);
    CHECK(table.find("TCO €111,439") != std::string::npos);
}
