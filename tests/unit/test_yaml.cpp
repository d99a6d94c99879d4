#include <catch2/catch.hpp>

#include "io/yaml.hpp"
#include "support/test_support.hpp"

using gpusel::parse_yaml_text;
using gpusel::YamlNode;
using gpusel::test::input_errors;

namespace {
std::vector<std::string> parse_errors(const std::string& text) {
    return input_errors([&] { parse_yaml_text(text, "w.yaml"); });
}
}  // namespace

TEST_CASE("yaml::parse_yaml_text builds a tree with 1-based positions", "[yaml]") {
    const YamlNode root = parse_yaml_text("name: x\nmodel:\n  preset: gpt2\nlist: [a, 'b']\nempty:\n", "w.yaml");
    REQUIRE(root.kind == YamlNode::Kind::mapping);
    REQUIRE(root.entries.size() == 4);
    CHECK(root.entries[0].key.scalar == "name");
    CHECK(root.entries[0].key.position.line == 1);
    CHECK(root.entries[0].key.position.column == 1);
    CHECK(root.entries[0].value.position.column == 7);
    const YamlNode* model = root.find("model");
    REQUIRE(model != nullptr);
    CHECK(model->find("preset")->position.line == 3);
    CHECK(model->find("preset")->position.column == 11);
    const YamlNode* list = root.find("list");
    REQUIRE(list->items.size() == 2);
    CHECK_FALSE(list->items[0].quoted);
    CHECK(list->items[1].quoted);
    // An empty value takes its key's position (yaml-cpp would report the next token).
    const YamlNode* empty = root.find("empty");
    CHECK(empty->kind == YamlNode::Kind::null);
    CHECK(empty->position.line == 5);
    CHECK(empty->position.column == 1);
}

TEST_CASE("yaml::parse_yaml_text refuses what the loaders must never see", "[yaml]") {
    CHECK(parse_errors("a: 1\na: 2\n") == std::vector<std::string>{"w.yaml:2:1: duplicate key 'a' (first at line 1)"});
    CHECK(parse_errors("base: &b 1\nother: *b\n") ==
          std::vector<std::string>{"w.yaml:1:7: anchors (&b) are not supported; write each value out",
                                   "w.yaml:2:8: aliases (*name) are not supported; write the value out"});
    CHECK(parse_errors("<<: {a: 1}\n") ==
          std::vector<std::string>{"w.yaml:1:1: merge keys (<<) are not supported; write each field out"});
    CHECK(parse_errors("a: 1\n---\nb: 2\n") ==
          std::vector<std::string>{"w.yaml:2:1: more than one YAML document ('---'); put one document in each file"});
    CHECK(parse_errors("") == std::vector<std::string>{"w.yaml: file is empty (no YAML content)"});
    CHECK(parse_errors("# only a comment\n") == std::vector<std::string>{"w.yaml: file is empty (no YAML content)"});
    CHECK(parse_errors("a: \"x\0y\"\n") ==  // the C string stops at the NUL: an unterminated quote
          std::vector<std::string>{"w.yaml:1:6: YAML syntax error: illegal EOF in scalar"});
    CHECK(parse_errors(std::string("a: x\0y\n", 7)) ==
          std::vector<std::string>{"w.yaml:1:5: NUL byte in file; is it a binary file?"});
    CHECK(parse_errors("a: \x07\n") == std::vector<std::string>{"w.yaml:1:4: control character 0x07 in file"});
    CHECK(parse_errors("a: \xff\xfe\n") == std::vector<std::string>{"w.yaml:1:4: invalid UTF-8 byte sequence"});
    CHECK(parse_errors("a: \xc0\xaf\n") ==
          std::vector<std::string>{"w.yaml:1:4: invalid UTF-8 byte sequence (overlong or out of range)"});
    CHECK(parse_errors("\xff\xfe"
                       "a\0:\0") == std::vector<std::string>{"w.yaml:1:1: file is UTF-16; save it as UTF-8"});
    CHECK(parse_errors("a: !!str 80\n") ==
          std::vector<std::string>{"w.yaml:1:4: YAML tags (tag:yaml.org,2002:str) are not supported"});
    CHECK(parse_errors("? [a]\n: 1\n") ==
          std::vector<std::string>{"w.yaml:1:3: keys must be plain words, not lists or mappings"});
    CHECK(parse_errors("a: [1, 2\n") ==
          std::vector<std::string>{"w.yaml:2:1: YAML syntax error: end of sequence flow not found"});
    CHECK(parse_errors("a:\n\tb: 1\n").front().rfind("w.yaml:2:", 0) == 0);
}

TEST_CASE("yaml::parse_yaml_text accepts a UTF-8 byte order mark", "[yaml]") {
    const YamlNode root = parse_yaml_text("\xef\xbb\xbfname: caf\xc3\xa9\n", "w.yaml");
    CHECK(root.find("name")->scalar == "caf\xc3\xa9");
}

TEST_CASE("yaml::parse_yaml_text bounds nesting, size and node count", "[yaml]") {
    std::string deep_flow(100, '[');
    deep_flow += std::string(100, ']');
    CHECK(parse_errors(deep_flow) == std::vector<std::string>{"w.yaml:1:65: nesting deeper than 64 levels"});
    std::string deep_block;
    for (int i = 0; i < 80; ++i) {
        deep_block += std::string(static_cast<std::size_t>(i) * 2, ' ') + "k:\n";
    }
    CHECK(parse_errors(deep_block) == std::vector<std::string>{"w.yaml:65:129: nesting deeper than 64 levels"});
    CHECK(parse_errors("a: " + std::string(70000, 'x') + "\n") ==
          std::vector<std::string>{"w.yaml:1:4: value is longer than the limit of 64 KiB"});
    CHECK(parse_errors(std::string(5u << 20, ' ')) ==
          std::vector<std::string>{"w.yaml: file is larger than the limit of 4 MiB"});
    std::string many = "[";
    for (int i = 0; i < 200001; ++i) {
        many += "1,";
    }
    many += "1]";
    CHECK_THAT(parse_errors(many).front(), Catch::Matchers::Contains("more than 200000 values in one file"));
}

namespace {
// Each document of a stream as "first line: text".
std::vector<std::string> documents_of(std::string_view stream) {
    std::vector<std::string> documents;
    for (const gpusel::YamlDocumentText& document : gpusel::split_yaml_documents(stream)) {
        documents.push_back(std::to_string(document.first_line) + ": " + std::string(document.text));
    }
    return documents;
}
}  // namespace

TEST_CASE("yaml::split_yaml_documents splits at column-0 markers only", "[yaml]") {
    // helm template's separators carry a comment; the marker stays with the document it opens.
    CHECK(documents_of("--- # Source: c/a.yaml\na: 1\n--- # Source: c/b.yaml\nb: 2\n") ==
          std::vector<std::string>{"1: --- # Source: c/a.yaml\na: 1\n", "3: --- # Source: c/b.yaml\nb: 2\n"});
    // Comments, directives and empty documents in front belong to the next document or none.
    CHECK(documents_of("# top\n---\n---\t\n%YAML 1.2\n---\r\na: 1\n...\n# end\n") ==
          std::vector<std::string>{"4: %YAML 1.2\n---\r\na: 1\n...\n"});
    // After an end marker a document may start bare; a marker's line may hold the content.
    CHECK(documents_of("a: 1\n... # end\nb: 2\n--- |\n  text\n") ==
          std::vector<std::string>{"1: a: 1\n... # end\n", "3: b: 2\n", "4: --- |\n  text\n"});
    // Not markers: an indented "---" (a block scalar's line), "---x", "----", "...x".
    CHECK(documents_of("data:\n  k: |\n    ---\n    ...\n---x: 1\n----: 2\n...x: 3\n") ==
          std::vector<std::string>{"1: data:\n  k: |\n    ---\n    ...\n---x: 1\n----: 2\n...x: 3\n"});
    CHECK(documents_of("\xef\xbb\xbf---\na: 1\n---\nb: 2") ==
          std::vector<std::string>{"1: \xef\xbb\xbf---\na: 1\n", "3: ---\nb: 2"});
    CHECK(documents_of("").empty());
    CHECK(documents_of("---\n# only comments\n...\n").empty());
}

TEST_CASE("yaml::parse_yaml_document counts positions in lines of the whole stream", "[yaml]") {
    const std::string stream = "a: 1\n--- # Source: b.yaml\nkind: Pod\nspec:\n  x: 2\n---\nbad: [1\n";
    const std::vector<gpusel::YamlDocumentText> documents = gpusel::split_yaml_documents(stream);
    REQUIRE(documents.size() == 3);
    const YamlNode second = gpusel::parse_yaml_document(documents[1], "m.yaml");
    CHECK(second.find("kind")->position.line == 3);
    CHECK(second.find("spec")->find("x")->position.line == 5);
    CHECK(second.find("spec")->find("x")->position.column == 6);
    CHECK(input_errors([&] { gpusel::parse_yaml_document(documents[2], "m.yaml"); }) ==
          std::vector<std::string>{"m.yaml:8:1: YAML syntax error: end of sequence flow not found"});
}

TEST_CASE("yaml::read_input_file refuses what is not a regular file", "[yaml]") {
    CHECK(input_errors([] { gpusel::read_input_file("/nonexistent/w.yaml"); }) ==
          std::vector<std::string>{"/nonexistent/w.yaml: no such file"});
    CHECK(input_errors([] { gpusel::read_input_file("/tmp"); }) ==
          std::vector<std::string>{"/tmp: is a directory, not a file"});
    CHECK(input_errors([] { gpusel::read_input_file("/dev/zero"); }) ==
          std::vector<std::string>{"/dev/zero: is not a regular file (a device, pipe or socket)"});
}

TEST_CASE("yaml::MapReader reports unknown keys with a suggestion and wrong kinds", "[yaml]") {
    const YamlNode root = parse_yaml_text("optimiser: adamw\nrank: [1]\nflag: yes\nsize: 80Gb\nwhat: 1\n", "w.yaml");
    gpusel::Diagnostics diagnostics("w.yaml");
    gpusel::MapReader reader(root, "training", diagnostics);
    int rank = 0;
    bool flag = false;
    double size = 0;
    std::string optimizer;
    reader.text("optimizer", optimizer);
    CHECK_FALSE(reader.integer("rank", rank, 1, 10));
    CHECK_FALSE(reader.boolean("flag", flag));
    CHECK_FALSE(reader.number("size", size, gpusel::UnitKind::bytes, 0, 1e15));
    reader.finish();
    std::vector<std::string> lines;
    for (const auto& diagnostic : diagnostics.list()) {
        lines.push_back(gpusel::format_diagnostic(diagnostic));
    }
    CHECK(lines == std::vector<std::string>{
                       "w.yaml:2:7: training.rank: expected a single value, got a list",
                       "w.yaml:3:7: training.flag: 'yes' is not a boolean; write true or false",
                       "w.yaml:4:7: training.size: '80Gb' has an unknown unit 'Gb'; expected a size such as 80GB, "
                       "24GiB or 512MiB (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
                       "w.yaml:1:1: training.optimiser: unknown field 'optimiser', did you mean 'optimizer'?",
                       "w.yaml:5:1: training.what: unknown field 'what'; known fields: optimizer, rank, flag, size"});
}
