# Script mode: writes OUTPUT, a C++ source that returns the bytes of INPUT as SYMBOL().
# The text is split into raw-string chunks of at most 16000 bytes (a portable literal size).
file(READ ${INPUT} content HEX)
string(LENGTH "${content}" hex_length)
set(body "")
set(chunk_hex_size 32000)
set(offset 0)
while(offset LESS hex_length)
  string(SUBSTRING "${content}" ${offset} ${chunk_hex_size} chunk)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${chunk}")
  string(APPEND body "    \"${escaped}\"\n")
  math(EXPR offset "${offset} + ${chunk_hex_size}")
endwhile()
math(EXPR byte_length "${hex_length} / 2")
file(WRITE ${OUTPUT}.tmp
"// Generated from ${INPUT} by cmake/EmbedOne.cmake. Do not edit.
#include <string_view>
namespace gpusel::embedded {
namespace {
constexpr char data[] =
${body}    \"\";
}  // namespace
std::string_view ${SYMBOL}() { return std::string_view(data, ${byte_length}); }
}  // namespace gpusel::embedded
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
