#include <catch2/catch.hpp>

#include <string>

#include "gpusel/text.hpp"

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
    CHECK(xml_escape(std::string("a\x01" "b\x1f" "c")) == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c");
    CHECK(xml_escape(std::string("x\0y", 3), XmlContext::content) == "x\xEF\xBF\xBDy");
    CHECK(xml_escape(std::string("\x1b[31m")) == "\xEF\xBF\xBD[31m");  // no terminal escape gets through
}

TEST_CASE("text::xml_escape passes UTF-8 and DEL through unchanged", "[text]") {
    CHECK(xml_escape("H100 × 8 · 80 GB ≤ µ") == "H100 × 8 · 80 GB ≤ µ");
    CHECK(xml_escape("a\x7f" "b") == "a\x7f" "b");  // DEL is allowed in XML 1.0 (§2.2)
}
