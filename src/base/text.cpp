#include "base/text.hpp"

#include <algorithm>
#include <cctype>

namespace gpusel {

namespace {
char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}
}  // namespace

bool equals_ignore_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::string to_lower(std::string_view text) {
    std::string result(text);
    std::transform(result.begin(), result.end(), result.begin(), lower);
    return result;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> previous(b.size() + 1);
    std::vector<std::size_t> current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        previous[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = previous[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    if (word.empty() || word.size() > 200) {
        return {};
    }
    // A prefix ("H100" for "H100-SXM5") says more about intent than a small edit distance
    // ("H100" is two edits from "A10"); take the first candidate it starts, in the caller's
    // order (the catalog lists the flagship variant first).
    const std::string prefix = to_lower(word);
    for (const std::string& candidate : candidates) {
        if (candidate.size() > word.size() && to_lower(candidate).rfind(prefix, 0) == 0) {
            return candidate;
        }
    }
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    std::string best;
    std::size_t best_distance = limit + 1;
    for (const std::string& candidate : candidates) {
        const std::size_t distance = edit_distance(word, candidate);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    if (!best.empty()) {
        return best;
    }
    // A prefix or fragment ("h100" for "H100-SXM5") is also a plausible intent.
    const std::string needle = to_lower(word);
    if (needle.size() >= 2) {
        for (const std::string& candidate : candidates) {
            if (to_lower(candidate).find(needle) != std::string::npos) {
                return candidate;
            }
        }
    }
    return {};
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    const std::string match = closest_match(word, candidates);
    return match.empty() ? std::string() : ", did you mean '" + match + "'?";
}

std::size_t utf8_character_length(std::string_view text, std::size_t at) {
    const auto lead = static_cast<unsigned char>(text[at]);
    std::size_t length = 0;
    if (lead < 0x80) {
        return 1;
    }
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
    } else {
        return 0;  // a continuation byte, C0/C1 (overlong two-byte forms) or F5-FF
    }
    if (at + length > text.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < length; ++k) {
        if ((static_cast<unsigned char>(text[at + k]) & 0xc0) != 0x80) {
            return 0;
        }
    }
    // The second byte's range rules out overlong three- and four-byte forms, the surrogates
    // U+D800-DFFF (ED A0-BF) and code points above U+10FFFF (F4 90-BF): RFC 3629 §4.
    const auto second = static_cast<unsigned char>(text[at + 1]);
    if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second >= 0xa0) || (lead == 0xf0 && second < 0x90) ||
        (lead == 0xf4 && second >= 0x90)) {
        return 0;
    }
    return length;
}

std::string printable_text(std::string_view text) {
    std::string printable;
    printable.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool control = byte < 0x20 || byte == 0x7f;
        const std::size_t length = control ? 0 : utf8_character_length(text, i);
        if (length > 0) {
            printable.append(text.substr(i, length));
            i += length;
        } else {
            static constexpr char hex[] = "0123456789abcdef";
            printable += "\\x";
            printable.push_back(hex[byte >> 4]);
            printable.push_back(hex[byte & 0x0f]);
            ++i;
        }
    }
    return printable;
}

std::string xml_escape(std::string_view text, XmlContext context) {
    const bool attribute = context == XmlContext::attribute;
    std::string out;
    out.reserve(text.size());
    for (const char character : text) {
        switch (character) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            case '\t':
                out += attribute ? "&#9;" : "\t";
                break;
            case '\n':
                out += attribute ? "&#10;" : "\n";
                break;
            case '\r':
                out += "&#13;";
                break;
            default:
                if (static_cast<unsigned char>(character) < 0x20) {
                    out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
                } else {
                    out += character;
                }
        }
    }
    return out;
}

}  // namespace gpusel
