#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/csv.hpp"

using gpusel::csv_text_cell;
using gpusel::CsvWriter;
using gpusel::format_fixed;

namespace {

using Rows = std::vector<std::vector<std::string>>;

// A minimal RFC 4180 reader written independently of the writer: strict about CRLF, about
// quotes inside unquoted fields and about bare CR or LF. Throws std::runtime_error.
Rows parse_rfc4180(std::string_view text) {
    Rows rows;
    std::vector<std::string> row;
    std::size_t i = 0;
    while (i < text.size()) {
        std::string field;
        if (text[i] == '"') {
            ++i;
            while (true) {
                if (i >= text.size()) {
                    throw std::runtime_error("unterminated quoted field");
                }
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        field.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field.push_back(text[i++]);
            }
        } else {
            while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
                if (text[i] == '"') {
                    throw std::runtime_error("quote inside an unquoted field");
                }
                field.push_back(text[i++]);
            }
        }
        row.push_back(std::move(field));
        if (i >= text.size()) {
            throw std::runtime_error("record without CRLF");
        }
        if (text[i] == ',') {
            ++i;
            if (i >= text.size()) {
                throw std::runtime_error("record without CRLF");
            }
            continue;
        }
        if (text.substr(i, 2) != "\r\n") {
            throw std::runtime_error("bare CR or LF outside quotes");
        }
        rows.push_back(std::move(row));
        row.clear();
        i += 2;
    }
    return rows;
}

// What a text cell must read back as: the value, with a leading ' when it looks like a formula.
std::string expected_cell(const std::string& value) {
    return gpusel::starts_like_formula(value) ? "'" + value : value;
}

// Random text built from the characters that matter to CSV and to spreadsheets.
std::string random_text(std::mt19937& generator) {
    static const std::vector<std::string> pieces{
        ",", "\"", "\r", "\n", "\r\n", "=", "+", "-",  "@",    "\t",  " ",           "a",
        "Z", "7",  ".",  "'",  ";",    "é", "€", "漢", "\"\"", ",\"", "=SUM(A1:A9)", "\xF0\x9F\x98\x80"};
    std::uniform_int_distribution<std::size_t> length(0, 8);
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::string text;
    for (std::size_t n = length(generator); n > 0; --n) {
        text += pieces[pick(generator)];
    }
    return text;
}

}  // namespace

TEST_CASE("a procurement table is written as RFC 4180 with CRLF", "[csv]") {
    CsvWriter writer;
    writer.text("role").text("gpu").text("quantity").text("unit_price_usd").text("reason").end_row();
    writer.text("training").text("H100, SXM5").integer(8).money(25000).text("fits with \"headroom\"").end_row();
    writer.text("inference").text("L40S").integer(12).money(std::nullopt).text("").end_row();
    CHECK(writer.str() ==
          "role,gpu,quantity,unit_price_usd,reason\r\n"
          "training,\"H100, SXM5\",8,25000.00,\"fits with \"\"headroom\"\"\"\r\n"
          "inference,L40S,12,,\r\n");
    CHECK(writer.rows() == 3);
}

TEST_CASE("cells that a spreadsheet would evaluate are neutralised", "[csv]") {
    // The example of the OWASP CSV Injection page.
    CHECK(csv_text_cell("=1+2\";=1+2") == "\"'=1+2\"\";=1+2\"");
    CHECK(csv_text_cell("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
    CHECK(csv_text_cell("+1") == "\"'+1\"");
    CHECK(csv_text_cell("-1") == "\"'-1\"");
    CHECK(csv_text_cell("@SUM(A1)") == "\"'@SUM(A1)\"");
    CHECK(csv_text_cell("\tx") == "\"'\tx\"");
    CHECK(csv_text_cell("\rx") == "\"'\rx\"");
    CHECK(csv_text_cell("\nx") == "\"'\nx\"");
    CHECK(csv_text_cell(std::string_view("\0x", 2)) == std::string("\"'\0x\"", 5));
    // Not at the start: plain text.
    CHECK(csv_text_cell("a=b") == "a=b");
    CHECK(csv_text_cell("A100-80GB") == "A100-80GB");
    CHECK(csv_text_cell("") == "");
    CHECK(csv_text_cell("'quoted'") == "'quoted'");
}

TEST_CASE("text cells are quoted only when RFC 4180 or trimming readers need it", "[csv]") {
    CHECK(csv_text_cell("plain") == "plain");
    CHECK(csv_text_cell("a,b") == "\"a,b\"");
    CHECK(csv_text_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_text_cell("two\r\nlines") == "\"two\r\nlines\"");
    CHECK(csv_text_cell("line\n") == "\"line\n\"");
    CHECK(csv_text_cell(" padded") == "\" padded\"");
    CHECK(csv_text_cell("padded ") == "\"padded \"");
    CHECK(csv_text_cell("semi;colon") == "semi;colon");
    CHECK(csv_text_cell("café €") == "café €");
}

TEST_CASE("numbers are fixed-point, locale-free, without exponent or negative zero", "[csv]") {
    CHECK(format_fixed(1234567.891, 2) == "1234567.89");
    CHECK(format_fixed(0.1 + 0.2, 2) == "0.30");
    CHECK(format_fixed(1e20, 2) == "100000000000000000000.00");
    CHECK(format_fixed(1.5e-7, 2) == "0.00");
    CHECK(format_fixed(-0.0, 2) == "0.00");
    CHECK(format_fixed(-0.004, 2) == "0.00");
    CHECK(format_fixed(-0.0, 0) == "0");
    CHECK(format_fixed(-12.5, 2) == "-12.50");
    CHECK(format_fixed(3.0, 0) == "3");
    CHECK(format_fixed(0.125, 3) == "0.125");
    CHECK(format_fixed(std::numeric_limits<double>::max(), 0).size() == 309);
    CHECK_THROWS_AS(format_fixed(std::nan(""), 2), std::invalid_argument);
    CHECK_THROWS_AS(format_fixed(std::numeric_limits<double>::infinity(), 2), std::invalid_argument);
    CHECK_THROWS_AS(format_fixed(-std::numeric_limits<double>::infinity(), 2), std::invalid_argument);
    CHECK_THROWS_AS(format_fixed(1.0, -1), std::invalid_argument);
    CHECK_THROWS_AS(format_fixed(1.0, 18), std::invalid_argument);

    CsvWriter writer;
    writer.money(-0.0).money(1234.5).number(0.5, 1).integer(-3).number(std::optional<double>{}, 2).end_row();
    CHECK(writer.str() == "0.00,1234.50,0.5,-3,\r\n");
    CHECK_THROWS_AS(CsvWriter().money(std::nan("")), std::invalid_argument);
}

TEST_CASE("every row has the header's width", "[csv]") {
    CsvWriter writer;
    writer.text("a").text("b").end_row();
    writer.text("1");
    CHECK_THROWS_AS(writer.end_row(), std::logic_error);
    CHECK(writer.str() == "a,b\r\n");
    CHECK_THROWS_AS(CsvWriter().end_row(), std::logic_error);

    // A row of one empty cell must not become an empty line, which readers skip.
    CsvWriter single;
    single.text("note").end_row();
    single.text("").end_row();
    CHECK(single.str() == "note\r\n\"\"\r\n");
    CHECK(parse_rfc4180(single.str()) == Rows{{"note"}, {""}});
}

TEST_CASE("a byte order mark is written only when asked for", "[csv]") {
    CsvWriter plain;
    plain.text("gpu").end_row();
    CHECK(plain.str() == "gpu\r\n");
    CsvWriter excel(gpusel::CsvOptions{true});
    excel.text("gpu").end_row();
    CHECK(excel.str() == "\xEF\xBB\xBFgpu\r\n");
}

TEST_CASE("random text survives a round trip through an independent RFC 4180 reader", "[csv][property]") {
    for (unsigned seed = 1; seed <= 300; ++seed) {
        std::mt19937 generator(seed);
        std::uniform_int_distribution<std::size_t> width(1, 6);
        std::uniform_int_distribution<std::size_t> height(1, 5);
        const std::size_t columns = width(generator);
        CsvWriter writer;
        Rows expected;
        for (std::size_t r = height(generator); r > 0; --r) {
            std::vector<std::string> row;
            for (std::size_t c = 0; c < columns; ++c) {
                const std::string value = random_text(generator);
                writer.text(value);
                row.push_back(expected_cell(value));
            }
            writer.end_row();
            expected.push_back(std::move(row));
        }
        CAPTURE(seed, writer.str());
        const Rows parsed = parse_rfc4180(writer.str());
        REQUIRE(parsed == expected);
        for (const auto& row : parsed) {
            for (const std::string& cell : row) {
                CHECK_FALSE(gpusel::starts_like_formula(cell));
            }
        }
    }
}

TEST_CASE("Python's csv module reads back exactly what was written", "[csv][property]") {
    std::mt19937 generator(20261130);
    std::uniform_real_distribution<double> amount(-1e7, 1e7);
    CsvWriter writer(gpusel::CsvOptions{true});
    nlohmann::json expected = nlohmann::json::array();
    writer.text("name").text("note").text("total_usd").end_row();
    expected.push_back({"name", "note", "total_usd"});
    for (int r = 0; r < 500; ++r) {
        const std::string name = random_text(generator);
        const std::string note = random_text(generator);
        const double total = amount(generator);
        writer.text(name).text(note).money(total).end_row();
        expected.push_back({expected_cell(name), expected_cell(note), format_fixed(total, 2)});
    }
    std::string directory_pattern = (std::filesystem::temp_directory_path() / "gpusel-csv-XXXXXX").string();
    REQUIRE(::mkdtemp(directory_pattern.data()) != nullptr);
    const std::filesystem::path directory = directory_pattern;
    {
        std::ofstream csv(directory / "out.csv", std::ios::binary);
        csv << writer.str();
        std::ofstream json(directory / "expected.json", std::ios::binary);
        json << expected.dump();
    }
    const std::string command = "python3 " GPUSEL_SOURCE_DIR "/tests/tools/csv_roundtrip.py '" +
                                (directory / "out.csv").string() + "' '" + (directory / "expected.json").string() + "'";
    const int status = std::system(command.c_str());
    std::filesystem::remove_all(directory);
    CHECK(status == 0);
}
