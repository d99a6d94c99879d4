#pragma once
// The YAML boundary (io layer). Input files are read strictly:
//  - regular files only, at most max_input_bytes; strict UTF-8 (a UTF-8 BOM is skipped),
//    no NUL or control characters other than tab, LF, CR;
//  - exactly one document; no anchors, aliases, merge keys or complex keys;
//  - nesting at most max_depth levels, at most max_nodes nodes, scalars at most max_scalar_bytes;
//  - duplicate keys are errors.
// The result is a plain tree with 1-based positions. No other layer sees yaml-cpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/units.hpp"

namespace gpusel {

inline constexpr std::size_t max_input_bytes = 4u << 20;
inline constexpr std::size_t max_scalar_bytes = 64u << 10;
inline constexpr int max_depth = 64;
inline constexpr std::size_t max_nodes = 200000;

struct YamlEntry;

struct YamlNode {
    enum class Kind { null, scalar, sequence, mapping };
    Kind kind = Kind::null;
    Position position;
    std::string scalar;  // for scalars (and the key text of mapping keys)
    bool quoted = false;
    bool alias = false;              // an alias (*name): already reported, readers skip it
    std::vector<YamlNode> items;     // sequence items
    std::vector<YamlEntry> entries;  // mapping: key, value (file order)

    const YamlNode* find(std::string_view key) const;
};

// One key: value pair of a mapping. A named struct rather than std::pair<YamlNode, YamlNode>:
// a pair of a type still being defined is not allowed by the standard library (clang with
// libstdc++ rejects it), while a vector of an incomplete type is (C++17).
struct YamlEntry {
    YamlNode key;
    YamlNode value;
};

std::string_view kind_name(YamlNode::Kind kind);  // "a mapping", "a list", ...

class Diagnostics;

// Reads and parses a file ("-" = standard input). Throws InputError (with file:line:col).
// Problems that leave a usable tree (duplicate keys, anchors, aliases, merge keys, tags, a second
// document) go to `soft` when given, so that the caller can report them together with its own
// field errors; without `soft` they are thrown too.
YamlNode read_yaml_file(const std::string& path, Diagnostics* soft = nullptr);
// Parses text already in memory. Throws InputError; `soft` as above.
YamlNode parse_yaml_text(std::string_view text, const std::string& file_name, Diagnostics* soft = nullptr);

// One document of a multi-document YAML stream (a Kubernetes manifest): its text, the document
// markers that open and close it included, and the line of the stream its text starts on.
struct YamlDocumentText {
    std::string_view text;
    int first_line = 1;
};

// Splits a YAML stream into its documents, in order, leaving out those without content (only
// blank lines, comments, directives and markers). A document marker is a line that starts at
// column 0 with "---" (starts a document) or "..." (ends one), followed by the end of the line,
// a blank or a comment: as `helm template` writes "--- # Source: chart/templates/x.yaml".
// YAML forbids such a line inside any scalar, so an indented "---" (a line of a block scalar's
// text) never splits. Linear in the size of `text`; the views point into it.
std::vector<YamlDocumentText> split_yaml_documents(std::string_view text);

// Parses one document of a stream as parse_yaml_text does (one document, the same limits), with
// every position, in the tree and in the errors, counted in lines of the whole stream.
YamlNode parse_yaml_document(const YamlDocumentText& document, const std::string& file_name);

// Reads a whole file with the same checks on size and type as read_yaml_file (no UTF-8 or
// YAML checks); "-" is standard input, read once per process (a later read of "-" gets the same
// text). Throws InputError.
std::string read_input_file(const std::string& path, std::size_t limit_bytes = max_input_bytes);

// Collects diagnostics for one file.
// At most this many problems are reported for one file, the first in file order, followed by
// one line counting the rest: a file of 100,000 unknown keys must not print 100,000 lines.
inline constexpr std::size_t max_reported_diagnostics = 100;

class Diagnostics {
public:
    explicit Diagnostics(std::string file) : m_file(std::move(file)) {}
    void error(Position position, std::string path, std::string message);
    bool empty() const { return m_list.empty(); }
    void clear();
    const std::string& file() const { return m_file; }
    const std::vector<Diagnostic>& list() const { return m_list; }
    // Throws InputError with the diagnostics sorted by position (at most
    // max_reported_diagnostics, then "N more problems not shown"), when any was recorded.
    void throw_if_any() const;

private:
    std::string m_file;
    std::vector<Diagnostic> m_list;  // the first 10 × max_reported_diagnostics recorded
    std::size_t m_dropped = 0;       // recorded beyond that
};

// Reads the fields of one mapping against a schema the caller states field by field.
// Every accessor marks its key as known; finish() reports the keys nobody asked for, with a
// "did you mean". Wrong kinds, bad units and out-of-range values become diagnostics, and the
// accessor returns false / nullopt without touching the target.
class MapReader {
public:
    // `node` must be a mapping; otherwise a diagnostic is recorded and every read is empty.
    MapReader(const YamlNode& node, std::string path, Diagnostics& diagnostics);

    bool has(std::string_view key) const;
    const YamlNode* node(std::string_view key);        // marks known; nullptr when absent
    Position position_of(std::string_view key) const;  // the value's position (or the key's)
    Position position() const { return m_node.position; }
    const std::string& path() const { return m_path; }
    std::string child_path(std::string_view key) const;
    Diagnostics& diagnostics() { return m_diagnostics; }

    // Each returns true when the key was present and valid (and assigns `into`).
    bool text(std::string_view key, std::string& into);
    bool number(std::string_view key, double& into, UnitKind kind, double min, double max, bool min_exclusive = false);
    bool integer(std::string_view key, int& into, int min, int max);
    bool boolean(std::string_view key, bool& into);
    // The file-format version under `format` (optional; every gpusel file is format 1): another
    // version is an error at its position.
    void format_version();
    bool text_list(std::string_view key, std::vector<std::string>& into);
    template <typename Enum, std::size_t N>
    bool choice(std::string_view key, Enum& into, const std::pair<Enum, std::string_view> (&table)[N]) {
        std::vector<std::pair<int, std::string_view>> options;
        for (const auto& [value, name] : table) {
            options.emplace_back(static_cast<int>(value), name);
        }
        int chosen = 0;
        if (!choice_index(key, chosen, options)) {
            return false;
        }
        into = static_cast<Enum>(chosen);
        return true;
    }
    // A required key that is absent: records "missing required field".
    void require(std::string_view key);
    void error(std::string_view key, std::string message);

    // Reports unknown keys. Call once, after all reads.
    void finish();

private:
    bool choice_index(std::string_view key, int& into, const std::vector<std::pair<int, std::string_view>>& options);
    const YamlNode* scalar_node(std::string_view key);

    const YamlNode& m_node;
    std::string m_path;
    Diagnostics& m_diagnostics;
    std::vector<std::string> m_known;
    std::vector<std::string> m_required;
    bool m_valid = true;
};

// Reads a scalar value as a quantity of `kind` within [min, max]; records a diagnostic at
// `node` and returns false otherwise.
bool read_number(const YamlNode& node, const std::string& path, Diagnostics& diagnostics, double& into, UnitKind kind,
                 double min, double max, bool min_exclusive = false);

}  // namespace gpusel
