#pragma once
// Small string helpers shared by loaders and renderers.

#include <string>
#include <string_view>
#include <vector>

namespace gpusel {

// ASCII case-insensitive equality.
bool equals_ignore_case(std::string_view a, std::string_view b);
std::string to_lower(std::string_view text);

// Levenshtein distance (ASCII case-insensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a plausible typo
// (distance ≤ max(2, length/3)), or a candidate that starts with/contains `word`;
// empty otherwise.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// ", did you mean 'x'?" or "" — for appending to a message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// The length in bytes (1 to 4) of the well-formed UTF-8 character that starts at text[at], or 0
// when the bytes there are not one: a stray continuation byte, a truncated sequence, an
// overlong form, a UTF-16 surrogate or a code point above U+10FFFF (RFC 3629 §4). ASCII
// control characters are well-formed (length 1). Requires at < text.size().
std::size_t utf8_character_length(std::string_view text, std::size_t at);

// `text` with every byte that is not part of a well-formed UTF-8 character
// (utf8_character_length), and every control character (C0, DEL), written as \xNN. Printable
// UTF-8 is unchanged. For messages that quote input: they go to terminals, JSON and GitHub
// annotations, which need valid UTF-8 and must not receive escape sequences or line breaks
// from a file.
std::string printable_text(std::string_view text);

// Where XML-escaped text goes. In an attribute value a raw tab or line break would be read as a
// space (attribute-value normalisation, XML 1.0 §3.3.3), so there they are written as character
// references; in element content they survive as they are and stay readable.
enum class XmlContext { attribute, content };

// `text` for XML 1.0 and HTML (JUnit reports, SVG, the HTML report): & < > " ' as &amp; &lt;
// &gt; &quot; &apos;; CR as &#13; (end-of-line handling, §2.11, would turn it into LF); tab and
// LF as &#9; and &#10; in an attribute, unchanged in content; every other C0 control character,
// which XML 1.0 cannot hold at all, as U+FFFD. Every other byte (UTF-8 included) is unchanged.
std::string xml_escape(std::string_view text, XmlContext context = XmlContext::attribute);

}  // namespace gpusel
