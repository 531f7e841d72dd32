# cmake -DCLI=PATH -DDEST=DIR -P bundle_libs.cmake: copies the CLI's shared libraries that
# distributions version differently (libfmt, libsimdjson: Ubuntu 24.04 has libsimdjson.so.19, not
# .so.14) into DEST, the wheel's vramtrace/lib, where the CLI's RUNPATH ($ORIGIN/../lib) finds
# them. glibc, libstdc++, libgcc_s, zlib and ncurses are on every system the wheel targets.
# Only the CLI loads them: the traced program gets LD_PRELOAD=libvramtrace.so alone.
file(GET_RUNTIME_DEPENDENCIES EXECUTABLES ${CLI}
  RESOLVED_DEPENDENCIES_VAR resolved UNRESOLVED_DEPENDENCIES_VAR unresolved
  PRE_INCLUDE_REGEXES "^libfmt\\.so" "^libsimdjson\\.so" PRE_EXCLUDE_REGEXES ".*")
if(unresolved)
  message(FATAL_ERROR "the CLI's libraries ${unresolved} are not found")
endif()
foreach(lib IN LISTS resolved)
  get_filename_component(name ${lib} NAME)
  # The soname the CLI asks for, as resolved: a copy of the file behind the symlink.
  file(COPY_FILE ${lib} ${DEST}/${name} ONLY_IF_DIFFERENT)
  message(STATUS "bundled ${name}")
endforeach()
