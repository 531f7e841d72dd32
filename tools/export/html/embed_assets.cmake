# Writes OUT, a C++ file that holds the viewer's JavaScript and CSS as byte arrays, so the HTML
# report embeds them without reading any file at run time. Run as
#   cmake "-DJS=viewer_base.js;viewer_timeline.js;..." -DCSS=viewer.css -DOUT=viewer_assets.cpp -P embed_assets.cmake
# JS is the viewer's parts in order: they are joined into one script (one function scope that the
# first part opens and the last closes).
function(vt_byte_array path name result)
  file(READ "${path}" text)
  # An asset that held "</script" or "</style" would end its element early in the page.
  string(TOLOWER "${text}" lower)
  string(FIND "${lower}" "</script" at_script)
  string(FIND "${lower}" "</style" at_style)
  if(NOT at_script EQUAL -1 OR NOT at_style EQUAL -1)
    message(FATAL_ERROR "${path} contains </script or </style")
  endif()
  file(READ "${path}" hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
  set(${result} "extern const unsigned char ${name}[] = {\n${bytes}0x00};\nextern const size_t ${name}_size = ${size};\n" PARENT_SCOPE)
endfunction()
set(joined "")
foreach(part IN LISTS JS)
  file(READ "${part}" text)
  string(APPEND joined "${text}")
endforeach()
file(WRITE "${OUT}.js.tmp" "${joined}")
vt_byte_array("${OUT}.js.tmp" kViewerJs js)
file(REMOVE "${OUT}.js.tmp")
vt_byte_array("${CSS}" kViewerCss css)
file(WRITE "${OUT}.tmp" "// Generated from tools/export/html/viewer_*.js and viewer.css by embed_assets.cmake.\n#include <cstddef>\nnamespace vramtrace::exporter::html {\n${js}${css}}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
