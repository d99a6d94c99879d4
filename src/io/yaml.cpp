#include "io/yaml.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "base/text.hpp"

namespace gpusel {

const YamlNode* YamlNode::find(std::string_view key) const {
    for (const auto& [k, v] : entries) {
        if (k.scalar == key) {
            return &v;
        }
    }
    return nullptr;
}

std::string_view kind_name(YamlNode::Kind kind) {
    switch (kind) {
        case YamlNode::Kind::null:
            return "an empty value";
        case YamlNode::Kind::scalar:
            return "a single value";
        case YamlNode::Kind::sequence:
            return "a list";
        case YamlNode::Kind::mapping:
            return "a mapping";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------
// Reading files

namespace {

Diagnostic file_problem(const std::string& path, std::string message) {
    return Diagnostic{path, {}, {}, std::move(message)};
}

InputError too_large(const std::string& path, std::size_t limit_bytes) {
    return InputError(file_problem(path, fmt::format("file is larger than the limit of {} MiB", limit_bytes >> 20)));
}

std::string read_descriptor(int descriptor, const std::string& path, std::size_t limit_bytes) {
    std::string content;
    char buffer[65536];
    while (true) {
        const ssize_t got = ::read(descriptor, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw InputError(file_problem(path, fmt::format("cannot read: {}", std::strerror(errno))));
        }
        if (got == 0) {
            break;
        }
        content.append(buffer, static_cast<std::size_t>(got));
        if (content.size() > limit_bytes) {
            throw too_large(path, limit_bytes);
        }
    }
    return content;
}

}  // namespace

std::string read_input_file(const std::string& path, std::size_t limit_bytes) {
    if (path == "-") {
        // Standard input can be read only once, and a command may look at it twice (`validate -`
        // reads it to tell the kind of document, then loads it): later reads get the same text.
        static std::mutex mutex;
        static std::optional<std::string> standard_input;
        const std::lock_guard<std::mutex> lock(mutex);
        if (!standard_input) {
            standard_input = read_descriptor(STDIN_FILENO, "<stdin>", limit_bytes);
        } else if (standard_input->size() > limit_bytes) {
            throw too_large("<stdin>", limit_bytes);
        }
        return *standard_input;
    }
    // O_NONBLOCK so that a FIFO without a writer cannot hang the open; it is refused below.
    const int descriptor = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (descriptor < 0) {
        const int error = errno;
        if (error == ENOENT) {
            throw InputError(file_problem(path, "no such file"));
        }
        throw InputError(file_problem(path, fmt::format("cannot open: {}", std::strerror(error))));
    }
    struct Closer {
        int descriptor;
        ~Closer() { ::close(descriptor); }
    } closer{descriptor};
    struct stat status {};
    if (::fstat(descriptor, &status) != 0) {
        throw InputError(file_problem(path, fmt::format("cannot stat: {}", std::strerror(errno))));
    }
    if (S_ISDIR(status.st_mode)) {
        throw InputError(file_problem(path, "is a directory, not a file"));
    }
    if (!S_ISREG(status.st_mode)) {
        throw InputError(file_problem(path, "is not a regular file (a device, pipe or socket)"));
    }
    if (static_cast<unsigned long long>(status.st_size) > limit_bytes) {
        throw too_large(path, limit_bytes);
    }
    const int flags = ::fcntl(descriptor, F_GETFL);
    ::fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK);
    return read_descriptor(descriptor, path, limit_bytes);
}

// ---------------------------------------------------------------------------------------
// Byte-level checks

namespace {

// Validates UTF-8 and control characters; returns the first problem or an empty diagnostic.
std::optional<Diagnostic> check_bytes(std::string_view text, const std::string& file) {
    if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff'))) {
        return Diagnostic{file, {1, 1}, {}, "file is UTF-16; save it as UTF-8"};
    }
    int line = 1;
    int column = 1;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const Position here{line, column};
        if (byte == '\n') {
            ++line;
            column = 1;
            ++i;
            continue;
        }
        if (byte < 0x80) {
            if (byte == 0) {
                return Diagnostic{file, here, {}, "NUL byte in file; is it a binary file?"};
            }
            if ((byte < 0x20 && byte != '\t' && byte != '\r') || byte == 0x7f) {
                return Diagnostic{file, here, {}, fmt::format("control character 0x{:02x} in file", byte)};
            }
            ++i;
            ++column;
            continue;
        }
        std::size_t length = 0;
        unsigned int code = 0;
        if ((byte & 0xe0) == 0xc0) {
            length = 2;
            code = byte & 0x1fu;
        } else if ((byte & 0xf0) == 0xe0) {
            length = 3;
            code = byte & 0x0fu;
        } else if ((byte & 0xf8) == 0xf0) {
            length = 4;
            code = byte & 0x07u;
        } else {
            return Diagnostic{file, here, {}, "invalid UTF-8 byte sequence"};
        }
        if (i + length > text.size()) {
            return Diagnostic{file, here, {}, "invalid UTF-8 byte sequence (truncated)"};
        }
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xc0) != 0x80) {
                return Diagnostic{file, here, {}, "invalid UTF-8 byte sequence"};
            }
            code = (code << 6) | (next & 0x3fu);
        }
        static constexpr unsigned int minimum[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < minimum[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
            return Diagnostic{file, here, {}, "invalid UTF-8 byte sequence (overlong or out of range)"};
        }
        i += length;
        ++column;
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Event handler that builds the tree and enforces the structural rules.

Position to_position(const YAML::Mark& mark) {
    if (mark.is_null()) {
        return {};
    }
    return Position{mark.line + 1, mark.column + 1};
}

struct Abort {};

class TreeBuilder : public YAML::EventHandler {
public:
    TreeBuilder(Diagnostics& diagnostics, Diagnostics& fatal) : m_diagnostics(diagnostics), m_fatal(fatal) {}

    YamlNode root;
    bool saw_document = false;

    void OnDocumentStart(const YAML::Mark&) override { saw_document = true; }
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
        // Empty values count too: a file of 2 million "-" lines was 2 million nodes
        // (fuzz/regressions/yaml/empty-values-over-node-limit.yaml).
        count_node(mark);
        YamlNode node;
        node.position = to_position(mark);
        add(std::move(node));
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
        count_node(mark);
        m_diagnostics.error(to_position(mark), {}, "aliases (*name) are not supported; write the value out");
        YamlNode node;
        node.position = to_position(mark);
        node.alias = true;
        add(std::move(node));
    }
    void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
        m_diagnostics.error(to_position(mark), {},
                            fmt::format("anchors (&{}) are not supported; write each value out", name));
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t, const std::string& value) override {
        count_node(mark);
        YamlNode node;
        node.position = to_position(mark);
        if (value.size() > max_scalar_bytes) {
            m_fatal.error(node.position, {},
                          fmt::format("value is longer than the limit of {} KiB", max_scalar_bytes >> 10));
            throw Abort{};
        }
        if (tag != "?" && tag != "!") {
            m_diagnostics.error(node.position, {}, fmt::format("YAML tags ({}) are not supported", tag));
        }
        node.quoted = tag == "!";
        if (!node.quoted && (value == "~" || value == "null" || value == "Null" || value == "NULL")) {
            node.kind = YamlNode::Kind::null;
        } else {
            node.kind = YamlNode::Kind::scalar;
            node.scalar = value;
        }
        add(std::move(node));
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        open(mark, tag, YamlNode::Kind::sequence);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        open(mark, tag, YamlNode::Kind::mapping);
    }
    void OnMapEnd() override { close(); }

private:
    struct Frame {
        YamlNode node;
        bool has_key = false;
        YamlNode key;
        // Key text -> line of its first occurrence. A linear scan of the entries made a
        // 100,000-key mapping (1 MB) take minutes.
        std::unordered_map<std::string, int> key_lines;
    };

    void count_node(const YAML::Mark& mark) {
        if (++m_nodes > max_nodes) {
            m_fatal.error(to_position(mark), {}, fmt::format("more than {} values in one file", max_nodes));
            throw Abort{};
        }
    }

    void open(const YAML::Mark& mark, const std::string& tag, YamlNode::Kind kind) {
        count_node(mark);
        if (m_stack.size() >= static_cast<std::size_t>(max_depth)) {
            m_fatal.error(to_position(mark), {}, fmt::format("nesting deeper than {} levels", max_depth));
            throw Abort{};
        }
        if (tag != "?" && tag != "!" && !tag.empty()) {
            m_diagnostics.error(to_position(mark), {}, fmt::format("YAML tags ({}) are not supported", tag));
        }
        Frame frame;
        frame.node.kind = kind;
        frame.node.position = to_position(mark);
        m_stack.push_back(std::move(frame));
    }

    void close() {
        YamlNode node = std::move(m_stack.back().node);
        m_stack.pop_back();
        add(std::move(node));
    }

    void add(YamlNode node) {
        if (m_stack.empty()) {
            root = std::move(node);
            return;
        }
        Frame& top = m_stack.back();
        if (top.node.kind == YamlNode::Kind::sequence) {
            top.node.items.push_back(std::move(node));
            return;
        }
        if (!top.has_key) {
            if (node.kind != YamlNode::Kind::scalar) {
                m_diagnostics.error(node.position, {}, "keys must be plain words, not lists or mappings");
                node.kind = YamlNode::Kind::scalar;
            } else if (node.scalar == "<<" && !node.quoted) {
                m_diagnostics.error(node.position, {}, "merge keys (<<) are not supported; write each field out");
            } else {
                const auto [first, inserted] = top.key_lines.emplace(node.scalar, node.position.line);
                if (!inserted) {
                    m_diagnostics.error(
                        node.position, {},
                        fmt::format("duplicate key '{}' (first at line {})", node.scalar, first->second));
                }
            }
            top.key = std::move(node);
            top.has_key = true;
            return;
        }
        // "key:" with nothing after reports the next token's mark; the key's is the useful one.
        if (node.kind == YamlNode::Kind::null) {
            node.position = top.key.position;
        }
        top.node.entries.push_back(YamlEntry{std::move(top.key), std::move(node)});
        top.has_key = false;
    }

    Diagnostics& m_diagnostics;
    Diagnostics& m_fatal;
    std::vector<Frame> m_stack;
    std::size_t m_nodes = 0;
};

// Counts the start of a second document without building it.
class DocumentProbe : public YAML::EventHandler {
public:
    bool started = false;
    YAML::Mark mark;
    void OnDocumentStart(const YAML::Mark& at) override {
        started = true;
        mark = at;
        throw Abort{};
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

}  // namespace

YamlNode parse_yaml_text(std::string_view text, const std::string& file_name, Diagnostics* soft) {
    if (text.size() > max_input_bytes) {
        throw too_large(file_name, max_input_bytes);
    }
    if (const std::optional<Diagnostic> problem = check_bytes(text, file_name)) {
        throw InputError(*problem);
    }
    if (text.size() >= 3 && text.substr(0, 3) == "\xef\xbb\xbf") {
        text.remove_prefix(3);
    }
    // Structural problems found while building the tree are "soft": the tree is still usable.
    Diagnostics local(file_name);
    Diagnostics& diagnostics = soft != nullptr ? *soft : local;
    Diagnostics fatal(file_name);
    std::istringstream stream{std::string(text)};
    TreeBuilder builder(diagnostics, fatal);
    try {
        YAML::Parser parser(stream);
        parser.HandleNextDocument(builder);
        if (builder.saw_document && builder.root.kind != YamlNode::Kind::null) {
            DocumentProbe probe;
            try {
                parser.HandleNextDocument(probe);
            } catch (const Abort&) {
            }
            if (probe.started) {
                diagnostics.error(to_position(probe.mark), {},
                                  "more than one YAML document ('---'); put one document in each file");
            }
        }
    } catch (const Abort&) {
    } catch (const YAML::DeepRecursion&) {
        fatal.error({}, {}, fmt::format("nesting deeper than {} levels", max_depth));
    } catch (const YAML::Exception& error) {
        fatal.error(to_position(error.mark), {}, fmt::format("YAML syntax error: {}", error.msg));
    } catch (const std::bad_alloc&) {
        fatal.error({}, {}, "out of memory while parsing");
    }
    if (!fatal.empty()) {
        // A broken tree cannot be validated further: report the soft problems found so far too.
        for (const Diagnostic& diagnostic : diagnostics.list()) {
            if (&diagnostics != &fatal) {
                fatal.error(diagnostic.position, diagnostic.path, diagnostic.message);
            }
        }
        if (soft != nullptr) {
            soft->clear();
        }
        fatal.throw_if_any();
    }
    local.throw_if_any();
    if (builder.root.kind == YamlNode::Kind::null) {
        throw InputError(file_problem(file_name, "file is empty (no YAML content)"));
    }
    return std::move(builder.root);
}

YamlNode read_yaml_file(const std::string& path, Diagnostics* soft) {
    const std::string content = read_input_file(path);
    return parse_yaml_text(content, path == "-" ? "<stdin>" : path, soft);
}

// ---------------------------------------------------------------------------------------
// Multi-document streams

namespace {

// "---" or "..." at column 0 followed by the end of the line or a blank (YAML's c-forbidden);
// "---x" is a plain scalar, and a comment needs a blank in front of it.
bool is_document_marker(std::string_view line, std::string_view marker) {
    return line.substr(0, 3) == marker && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

// Whether anything but blanks and a comment follows `from`.
bool has_content_from(std::string_view line, std::size_t from) {
    const std::size_t first = line.find_first_not_of(" \t\r", from);
    return first != std::string_view::npos && line[first] != '#';
}

void shift_lines(YamlNode& node, int lines) {
    if (node.position.line > 0) {
        node.position.line += lines;
    }
    for (YamlNode& item : node.items) {
        shift_lines(item, lines);
    }
    for (YamlEntry& entry : node.entries) {
        shift_lines(entry.key, lines);
        shift_lines(entry.value, lines);
    }
}

}  // namespace

std::vector<YamlDocumentText> split_yaml_documents(std::string_view text) {
    std::vector<YamlDocumentText> documents;
    std::size_t start = 0;  // the current document's text starts here
    int start_line = 1;
    bool has_marker = false;   // it has its "---" already: the next one starts another
    bool has_content = false;  // it has more than blanks, comments, directives and markers
    const auto close = [&](std::size_t end, std::size_t next, int next_line) {
        if (has_content) {
            documents.push_back(YamlDocumentText{text.substr(start, end - start), start_line});
        }
        start = next;
        start_line = next_line;
        has_marker = false;
        has_content = false;
    };
    int line_number = 1;
    for (std::size_t line_start = 0; line_start < text.size(); ++line_number) {
        const std::size_t line_end = std::min(text.find('\n', line_start), text.size());
        const std::size_t next_line_start = std::min(line_end + 1, text.size());
        std::string_view line = text.substr(line_start, line_end - line_start);
        if (line_start == 0 && line.substr(0, 3) == "\xef\xbb\xbf") {
            line.remove_prefix(3);
        }
        if (is_document_marker(line, "---")) {
            // Directives and comments in front of the first "---" belong to its document.
            if (has_marker || has_content) {
                close(line_start, line_start, line_number);
            }
            has_marker = true;
            has_content = has_content_from(line, 3);  // "--- |" starts a block scalar on the marker's line
        } else if (is_document_marker(line, "...")) {
            // The end marker stays with its document: the parser judges what follows it on the line.
            close(next_line_start, next_line_start, line_number + 1);
        } else if (!line.empty() && line.front() == '%') {
            // A directive begins the next document's prefix; after content it is the parser's error.
            if (has_marker && !has_content) {
                close(line_start, line_start, line_number);
            }
        } else {
            has_content = has_content || has_content_from(line, 0);
        }
        line_start = next_line_start;
    }
    close(text.size(), text.size(), line_number);
    return documents;
}

YamlNode parse_yaml_document(const YamlDocumentText& document, const std::string& file_name) {
    // Parsed on its own and shifted after, rather than padded with a newline per line in front:
    // padding made a stream of n documents cost O(n²) (issue 38: 20,000 documents took 113 s).
    const int lines_in_front = document.first_line - 1;
    try {
        YamlNode root = parse_yaml_text(document.text, file_name);
        shift_lines(root, lines_in_front);
        return root;
    } catch (const InputError& error) {
        std::vector<Diagnostic> shifted = error.diagnostics();
        for (Diagnostic& diagnostic : shifted) {
            if (diagnostic.position.line > 0) {
                diagnostic.position.line += lines_in_front;
            }
        }
        throw InputError(std::move(shifted));
    }
}

// ---------------------------------------------------------------------------------------
// Diagnostics and MapReader

void Diagnostics::error(Position position, std::string path, std::string message) {
    // Loaders record mostly in file order, so keeping a margin over what is shown is enough
    // for the shown ones to be the first in the file.
    if (m_list.size() >= 10 * max_reported_diagnostics) {
        ++m_dropped;
        return;
    }
    m_list.push_back(Diagnostic{m_file, position, std::move(path), std::move(message)});
}

void Diagnostics::clear() {
    m_list.clear();
}

void Diagnostics::throw_if_any() const {
    if (m_list.empty()) {
        return;
    }
    std::vector<Diagnostic> sorted = m_list;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.position.line, a.position.column) < std::tie(b.position.line, b.position.column);
    });
    if (sorted.size() > max_reported_diagnostics) {
        const std::size_t hidden = sorted.size() - max_reported_diagnostics + m_dropped;
        sorted.resize(max_reported_diagnostics);
        sorted.push_back(Diagnostic{m_file, {}, {}, fmt::format("{} more problems not shown", hidden)});
    }
    throw InputError(std::move(sorted));
}

MapReader::MapReader(const YamlNode& node, std::string path, Diagnostics& diagnostics)
    : m_node(node), m_path(std::move(path)), m_diagnostics(diagnostics) {
    if (node.kind != YamlNode::Kind::mapping) {
        m_valid = false;
        m_diagnostics.error(node.position, m_path,
                            fmt::format("expected a mapping of fields, got {}", kind_name(node.kind)));
    }
}

std::string MapReader::child_path(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
}

bool MapReader::has(std::string_view key) const {
    return m_valid && m_node.find(key) != nullptr;
}

const YamlNode* MapReader::node(std::string_view key) {
    if (std::find(m_known.begin(), m_known.end(), key) == m_known.end()) {
        m_known.emplace_back(key);
    }
    const YamlNode* found = m_valid ? m_node.find(key) : nullptr;
    return found != nullptr && found->alias ? nullptr : found;
}

Position MapReader::position_of(std::string_view key) const {
    if (!m_valid) {
        return m_node.position;
    }
    for (const auto& [k, v] : m_node.entries) {
        if (k.scalar == key) {
            return v.position.line > 0 ? v.position : k.position;
        }
    }
    return m_node.position;
}

void MapReader::error(std::string_view key, std::string message) {
    m_diagnostics.error(position_of(key), child_path(key), std::move(message));
}

void MapReader::require(std::string_view key) {
    node(key);
    m_required.emplace_back(key);
    if (m_valid && !has(key)) {
        m_diagnostics.error(m_node.position, m_path.empty() ? std::string(key) : child_path(key),
                            "missing required field");
    }
}

const YamlNode* MapReader::scalar_node(std::string_view key) {
    const YamlNode* found = node(key);
    if (found == nullptr) {
        return nullptr;
    }
    if (found->kind == YamlNode::Kind::null) {
        error(key, std::find(m_required.begin(), m_required.end(), key) != m_required.end()
                       ? "empty value; this field is required"
                       : "empty value; remove the line to use the default");
        return nullptr;
    }
    if (found->kind != YamlNode::Kind::scalar) {
        error(key, fmt::format("expected a single value, got {}", kind_name(found->kind)));
        return nullptr;
    }
    return found;
}

bool MapReader::text(std::string_view key, std::string& into) {
    const YamlNode* found = scalar_node(key);
    if (found == nullptr) {
        return false;
    }
    into = found->scalar;
    return true;
}

bool read_number(const YamlNode& node, const std::string& path, Diagnostics& diagnostics, double& into, UnitKind kind,
                 double min, double max, bool min_exclusive) {
    if (node.kind != YamlNode::Kind::scalar) {
        diagnostics.error(node.position, path,
                          fmt::format("expected {}, got {}", unit_examples(kind), kind_name(node.kind)));
        return false;
    }
    const ParsedNumber parsed = parse_quantity(node.scalar, kind);
    if (!parsed.value) {
        diagnostics.error(node.position, path, parsed.error);
        return false;
    }
    const double value = *parsed.value;
    if (min_exclusive ? value <= min : value < min) {
        diagnostics.error(node.position, path,
                          min_exclusive && min == 0
                              ? fmt::format("'{}' must be greater than zero", node.scalar)
                              : fmt::format("'{}' is below the minimum of {:g}", node.scalar, min));
        return false;
    }
    if (value > max) {
        diagnostics.error(node.position, path, fmt::format("'{}' is above the maximum of {:g}", node.scalar, max));
        return false;
    }
    into = value;
    return true;
}

bool MapReader::number(std::string_view key, double& into, UnitKind kind, double min, double max, bool min_exclusive) {
    const YamlNode* found = node(key);
    if (found == nullptr) {
        return false;
    }
    if (found->kind == YamlNode::Kind::null) {
        error(key, "empty value; remove the line to use the default");
        return false;
    }
    return read_number(*found, child_path(key), m_diagnostics, into, kind, min, max, min_exclusive);
}

void MapReader::format_version() {
    int format = 1;
    if (integer("format", format, 1, 1000) && format != 1) {
        error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
    }
}

bool MapReader::integer(std::string_view key, int& into, int min, int max) {
    const YamlNode* found = scalar_node(key);
    if (found == nullptr) {
        return false;
    }
    const ParsedNumber parsed = parse_integer(found->scalar);
    if (!parsed.value) {
        error(key, parsed.error);
        return false;
    }
    if (*parsed.value < min || *parsed.value > max) {
        error(key, fmt::format("'{}' is out of range; expected {} to {}", found->scalar, min, max));
        return false;
    }
    into = static_cast<int>(*parsed.value);
    return true;
}

bool MapReader::boolean(std::string_view key, bool& into) {
    const YamlNode* found = scalar_node(key);
    if (found == nullptr) {
        return false;
    }
    if (found->scalar == "true" && !found->quoted) {
        into = true;
        return true;
    }
    if (found->scalar == "false" && !found->quoted) {
        into = false;
        return true;
    }
    error(key, fmt::format("'{}' is not a boolean; write true or false", found->scalar));
    return false;
}

bool MapReader::text_list(std::string_view key, std::vector<std::string>& into) {
    const YamlNode* found = node(key);
    if (found == nullptr) {
        return false;
    }
    if (found->kind != YamlNode::Kind::sequence) {
        error(key, fmt::format("expected a list such as [a, b], got {}", kind_name(found->kind)));
        return false;
    }
    std::vector<std::string> values;
    bool ok = true;
    for (std::size_t i = 0; i < found->items.size(); ++i) {
        const YamlNode& item = found->items[i];
        if (item.kind != YamlNode::Kind::scalar || item.scalar.empty()) {
            m_diagnostics.error(item.position, fmt::format("{}[{}]", child_path(key), i),
                                fmt::format("expected a name, got {}", kind_name(item.kind)));
            ok = false;
            continue;
        }
        values.push_back(item.scalar);
    }
    if (ok) {
        into = std::move(values);
    }
    return ok;
}

bool MapReader::choice_index(std::string_view key, int& into,
                             const std::vector<std::pair<int, std::string_view>>& options) {
    const YamlNode* found = scalar_node(key);
    if (found == nullptr) {
        return false;
    }
    std::vector<std::string> names;
    for (const auto& [value, name] : options) {
        if (name == found->scalar) {
            into = value;
            return true;
        }
        names.emplace_back(name);
    }
    std::string message = fmt::format("'{}' is not one of {}", found->scalar, fmt::join(names, ", "));
    const std::string match = closest_match(found->scalar, names);
    if (!match.empty()) {
        message =
            fmt::format("'{}' is not one of {}; did you mean '{}'?", found->scalar, fmt::join(names, ", "), match);
    }
    error(key, message);
    return false;
}

void MapReader::finish() {
    if (!m_valid) {
        return;
    }
    for (const auto& [key, value] : m_node.entries) {
        if (std::find(m_known.begin(), m_known.end(), key.scalar) != m_known.end() ||
            (key.scalar == "<<" && !key.quoted)) {  // merge keys are reported by the parser
            continue;
        }
        std::string message = fmt::format("unknown field '{}'", key.scalar);
        const std::string match = closest_match(key.scalar, m_known);
        if (!match.empty()) {
            message += fmt::format(", did you mean '{}'?", match);
        } else if (!m_known.empty()) {
            message += fmt::format("; known fields: {}", fmt::join(m_known, ", "));
        }
        m_diagnostics.error(key.position, child_path(key.scalar), message);
    }
}

}  // namespace gpusel
