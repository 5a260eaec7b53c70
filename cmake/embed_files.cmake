# paradnn_embed_files: files built into a binary as read-only bytes, for
# what a program must carry rather than read from beside itself (the CLI's
# sweep presets and report template, the coordinator's dashboard).
#
#   paradnn_embed_files(TARGET <target> NAME <name> FILES <file>...
#                       [MISSING_HINT <text>])
#
# The assembler's .incbin puts each file's bytes, then one NUL byte that the
# size leaves out, into <build dir>/<name>_embedded.S, a source of <target>:
# no file becomes C++ text (the dashboard's Vega builds are megabytes), and
# a changed file reassembles that one object, with no reconfigure. A file
# that is missing stops the configure, with MISSING_HINT saying how to get
# it. Sets, in the caller's scope, for the table the caller writes:
#   <name>_DECLARATIONS  the C++ declarations of every file's symbols
#                        (extern "C", at namespace scope)
#   <name>_SPAN_<i>      the i-th file (from 0, in FILES order) as a
#                        {pointer, size} initializer, e.g. of a string_view
#   <name>_COUNT         how many files there are

# .incbin is the GNU assembler's (and clang's integrated one's).
enable_language(ASM)

function(paradnn_embed_files)
  cmake_parse_arguments(E "" "TARGET;NAME;MISSING_HINT" "FILES" ${ARGN})
  if(NOT E_TARGET OR NOT E_NAME OR NOT E_FILES)
    message(FATAL_ERROR "paradnn_embed_files: TARGET, NAME and FILES are required")
  endif()
  set(asm "  .section .rodata\n")
  set(declarations "extern \"C\" {\n")
  set(index 0)
  foreach(file ${E_FILES})
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "paradnn_embed_files(${E_NAME}): ${file} is missing. ${E_MISSING_HINT}")
    endif()
    set(symbol paradnn_embedded_${E_NAME}_${index})
    string(APPEND asm "  .global ${symbol}\n  .balign 16\n${symbol}:\n  .incbin \"${file}\"\n"
           "  .global ${symbol}_end\n${symbol}_end:\n  .byte 0\n")
    string(APPEND declarations "extern const char ${symbol}[];\n"
           "extern const char ${symbol}_end[];\n")
    set(${E_NAME}_SPAN_${index}
        "{${symbol}, static_cast<size_t>(${symbol}_end - ${symbol})}" PARENT_SCOPE)
    math(EXPR index "${index} + 1")
  endforeach()
  # No executable stack: the object says so, as the compiler's objects do.
  string(APPEND asm "  .section .note.GNU-stack,\"\",@progbits\n")
  string(APPEND declarations "}  // extern \"C\"\n")
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${E_NAME}_embedded.S)
  file(CONFIGURE OUTPUT ${source} CONTENT "${asm}")
  set_source_files_properties(${source} PROPERTIES OBJECT_DEPENDS "${E_FILES}")
  target_sources(${E_TARGET} PRIVATE ${source})
  set(${E_NAME}_DECLARATIONS "${declarations}" PARENT_SCOPE)
  set(${E_NAME}_COUNT ${index} PARENT_SCOPE)
endfunction()
