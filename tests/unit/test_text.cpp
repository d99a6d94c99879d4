#include <catch2/catch.hpp>

#include <string>

#include "base/text.hpp"

using gpusel::xml_escape;
using gpusel::XmlContext;

TEST_CASE("text::xml_escape writes the five XML specials as entities", "[text]") {
    CHECK(xml_escape("a<b>&\"c\"'d'") == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
    CHECK(xml_escape("a<b>&\"c\"'d'", XmlContext::content) == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
    CHECK(xml_escape("&amp;") == "&amp;amp;");  // escaped once more, never taken as already escaped
    CHECK(xml_escape("") == "");
}

TEST_CASE("text::xml_escape keeps tab and line breaks through attribute normalisation", "[text]") {
    CHECK(xml_escape("line1\nline2\tx\r") == "line1&#10;line2&#9;x&#13;");
    // In element content tab and LF survive as they are; CR would become LF (XML 1.0 §2.11).
    CHECK(xml_escape("line1\nline2\tx\r", XmlContext::content) == "line1\nline2\tx&#13;");
}

TEST_CASE("text::xml_escape replaces the C0 controls XML 1.0 cannot hold with U+FFFD", "[text]") {
    CHECK(xml_escape(std::string("a\x01"
                                 "b\x1f"
                                 "c")) ==
          "a\xEF\xBF\xBD"
          "b\xEF\xBF\xBD"
          "c");
    CHECK(xml_escape(std::string("x\0y", 3), XmlContext::content) == "x\xEF\xBF\xBDy");
    CHECK(xml_escape(std::string("\x1b[31m")) == "\xEF\xBF\xBD[31m");  // no terminal escape gets through
}

TEST_CASE("text::xml_escape passes UTF-8 and DEL through unchanged", "[text]") {
    CHECK(xml_escape("H100 × 8 · 80 GB ≤ µ") == "H100 × 8 · 80 GB ≤ µ");
    CHECK(xml_escape("a\x7f"
                     "b") ==
          "a\x7f"
          "b");  // DEL is allowed in XML 1.0 (§2.2)
}

TEST_CASE("text::utf8_character_length accepts well-formed UTF-8 only (RFC 3629)", "[text]") {
    using gpusel::utf8_character_length;
    CHECK(utf8_character_length("a", 0) == 1);
    CHECK(utf8_character_length(std::string("\x01", 1), 0) == 1);  // a control character is well-formed
    CHECK(utf8_character_length("µ", 0) == 2);                     // C2 B5
    CHECK(utf8_character_length("≤", 0) == 3);                     // E2 89 A4
    CHECK(utf8_character_length("\xF0\x9F\x98\x80", 0) == 4);      // U+1F600
    CHECK(utf8_character_length("\xF4\x8F\xBF\xBF", 0) == 4);      // U+10FFFF, the last code point
    CHECK(utf8_character_length("x\xE2\x89\xA4", 1) == 3);         // from the middle of a string
    CHECK(utf8_character_length("\x80", 0) == 0);                  // stray continuation byte
    CHECK(utf8_character_length("\xC0\xAF", 0) == 0);              // overlong '/'
    CHECK(utf8_character_length("\xE0\x80\xAF", 0) == 0);          // overlong '/' in three bytes
    CHECK(utf8_character_length("\xF0\x80\x80\xAF", 0) == 0);      // overlong '/' in four bytes
    CHECK(utf8_character_length("\xED\xA0\x80", 0) == 0);          // U+D800, a UTF-16 surrogate
    CHECK(utf8_character_length("\xF4\x90\x80\x80", 0) == 0);      // U+110000, beyond Unicode
    CHECK(utf8_character_length("\xF5\x80\x80\x80", 0) == 0);
    CHECK(utf8_character_length("\xE2\x89", 0) == 0);      // truncated
    CHECK(utf8_character_length("\xE2\x41\xA4", 0) == 0);  // interrupted
}

TEST_CASE("text::printable_text escapes what is not well-formed, printable UTF-8", "[text]") {
    using gpusel::printable_text;
    CHECK(printable_text("H100 × 8 ≤ µ") == "H100 × 8 ≤ µ");
    CHECK(printable_text("a\x1b[31mb\x7f") == "a\\x1b[31mb\\x7f");
    CHECK(printable_text("line\nnext\t") == "line\\x0anext\\x09");
    CHECK(printable_text("bad \xff byte") == "bad \\xff byte");
    CHECK(printable_text("cut \xE2\x89") == "cut \\xe2\\x89");
    // A surrogate or an overlong form is not UTF-8 either: JSON writers would refuse it.
    CHECK(printable_text("\xED\xA0\x80") == "\\xed\\xa0\\x80");
    CHECK(printable_text("\xE0\x80\xAF") == "\\xe0\\x80\\xaf");
}
