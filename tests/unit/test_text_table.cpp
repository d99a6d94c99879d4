#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report/text_table.hpp"

using gpusel::display_width;
using gpusel::TextTable;
using gpusel::wrap_items;
using gpusel::wrap_text;

using Lines = std::vector<std::string>;

TEST_CASE("text_table::display_width counts code points and skips ANSI sequences", "[text_table]") {
    CHECK(display_width("") == 0);
    CHECK(display_width("abc") == 3);
    CHECK(display_width("41 d > 14 d · —") == 15);
    CHECK(display_width("\x1b[1;32m1\x1b[0m") == 1);
    CHECK(display_width("µs ×2") == 5);
}

TEST_CASE("text_table::wrap_text breaks at spaces and keeps separators at line ends", "[text_table]") {
    CHECK(wrap_text("", 10).empty());
    CHECK(wrap_text("   ", 10).empty());
    CHECK(wrap_text("one two three", 7) == Lines{"one two", "three"});
    CHECK(wrap_text("one  two", 20) == Lines{"one two"});
    // "·", "—" and "%" never start a line.
    CHECK(wrap_text("aaaa · bbbb", 6) == Lines{"aaaa ·", "bbbb"});
    CHECK(wrap_text("T4 — no bf16", 5) == Lines{"T4 —", "no", "bf16"});
    CHECK(wrap_text("compute 71 %", 10) == Lines{"compute", "71 %"});
    // A word wider than the line is cut, after a hyphen in the second half of the piece.
    CHECK(wrap_text("A100-80GB-SXM4", 10) == Lines{"A100-80GB-", "SXM4"});
    CHECK(wrap_text("abcdefghij", 4) == Lines{"abcd", "efgh", "ij"});
    CHECK(wrap_text("x", 0) == Lines{"x"});
}

TEST_CASE("text_table::wrap_items keeps each item whole where it fits", "[text_table]") {
    CHECK(wrap_items({}, 10).empty());
    CHECK(wrap_items({"capex $1", "opex $2", "TCO $3"}, 40) == Lines{"capex $1 · opex $2 · TCO $3"});
    CHECK(wrap_items({"capex $1", "opex $2", "TCO $3"}, 20) == Lines{"capex $1 · opex $2 ·", "TCO $3"});
    CHECK(wrap_items({"capex $1", "opex $2", "TCO $3"}, 10) == Lines{"capex $1 ·", "opex $2 ·", "TCO $3"});
    // An item wider than the line wraps on its own lines.
    CHECK(wrap_items({"a", "one two three four"}, 9) == Lines{"a ·", "one two", "three", "four"});
}

namespace {

TextTable sample_table() {
    TextTable table;
    table.add_column("role");
    table.add_column("qty", TextTable::Align::right);
    table.add_column("reason");
    table.set_wrap(2, 12);
    table.add_row({"training", "4", "renting wins over two days"});
    table.add_note("alternative: buy four");
    table.add_row({"inference", "12", "lowest TCO"});
    return table;
}

}  // namespace

TEST_CASE("text_table::render pads columns and prints notes under the second column", "[text_table]") {
    CHECK(sample_table().render(2) ==
          "  role       qty  reason\n"
          "  training     4  renting wins over two days\n"
          "             alternative: buy four\n"
          "  inference   12  lowest TCO\n");
}

TEST_CASE("text_table::render_fitted wraps wrappable columns, then stacks", "[text_table]") {
    const TextTable table = sample_table();
    CHECK(table.natural_width(0) == 9 + 2 + 3 + 2 + 26);
    // Wide enough: as render(), notes wrapped to the width.
    CHECK(table.render_fitted(0, 60) == table.render(0));
    // 30 columns: the reason column narrows to 14 and wraps; 30 − 11 leaves too narrow a measure
    // for the note under the second column, so it starts three in.
    CHECK(table.fits_as_columns(0, 30));
    CHECK(table.fits_as_columns(0, 30, 2));
    CHECK_FALSE(table.fits_as_columns(0, 30, 1));
    CHECK(table.render_fitted(0, 30) ==
          "role       qty  reason\n"
          "training     4  renting wins\n"
          "                over two days\n"
          "   alternative: buy four\n"
          "inference   12  lowest TCO\n");
    // Below the sum of the minimum widths (9 + 2 + 3 + 2 + 12 = 28): one block per row.
    CHECK_FALSE(table.fits_as_columns(0, 24));
    CHECK(table.render_fitted(0, 24) ==
          "training\n"
          "   qty 4 ·\n"
          "   reason renting wins\n"
          "   over two days\n"
          "   alternative: buy four\n"
          "inference\n"
          "   qty 12 ·\n"
          "   reason lowest TCO\n");
}
