# gpusel_embed_text(<out_var> <symbol> <file> [<symbol> <file>]...)
# Generates one C++ source per file defining `std::string_view gpusel::embedded::<symbol>()`
# with the file's bytes, so an installed binary carries its default data.
function(gpusel_embed_text out_var)
  set(outputs)
  set(args ${ARGN})
  list(LENGTH args count)
  math(EXPR last "${count} - 1")
  foreach(index RANGE 0 ${last} 2)
    math(EXPR file_index "${index} + 1")
    list(GET args ${index} symbol)
    list(GET args ${file_index} file)
    set(output ${CMAKE_BINARY_DIR}/generated/${symbol}.cpp)
    add_custom_command(
      OUTPUT ${output}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${file} -DOUTPUT=${output} -DSYMBOL=${symbol}
              -P ${PROJECT_SOURCE_DIR}/cmake/EmbedOne.cmake
      DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/EmbedOne.cmake
      COMMENT "Embedding ${file}")
    list(APPEND outputs ${output})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
