# Interface targets linked PRIVATE by every target of the project. -Werror comes from the
# presets (CMAKE_COMPILE_WARNING_AS_ERROR), not from here.
add_library(gpusel_warnings INTERFACE)
target_compile_options(gpusel_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough)

add_library(gpusel_settings INTERFACE)
if(GPUSEL_SANITIZE)
  target_compile_options(gpusel_settings INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(gpusel_settings INTERFACE -fsanitize=address,undefined)
endif()
target_compile_definitions(gpusel_settings INTERFACE $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>)
