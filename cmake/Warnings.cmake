# Interface targets linked PRIVATE by every target of the project. -Werror comes from the
# presets (CMAKE_COMPILE_WARNING_AS_ERROR), not from here.
# -Wnull-dereference is left out and -Wrestrict is turned off: at -O2 GCC 12 reports both inside
# libstdc++'s std::string (known false positives, GCC bug 105329), which would break optimised
# builds under -Werror and clutter the release build's output.
add_library(gpusel_warnings INTERFACE)
target_compile_options(gpusel_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)

add_library(gpusel_settings INTERFACE)
if(GPUSEL_SANITIZE)
  target_compile_options(gpusel_settings INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(gpusel_settings INTERFACE -fsanitize=address,undefined)
endif()
target_compile_definitions(gpusel_settings INTERFACE $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>)
