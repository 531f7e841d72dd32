# Lays out the two install trees of the CLI tests: stub-install/{bin/vramtrace,lib/libvramtrace.so}
# (the stub library is built there) and nolib-install/bin/vramtrace with no lib/ at all.
file(MAKE_DIRECTORY ${VT_STUB_TREE}/bin ${VT_NOLIB_TREE}/bin)
file(REMOVE_RECURSE ${VT_NOLIB_TREE}/lib)
file(COPY_FILE ${VT_EXE} ${VT_STUB_TREE}/bin/vramtrace)
file(COPY_FILE ${VT_EXE} ${VT_NOLIB_TREE}/bin/vramtrace)
if(NOT EXISTS ${VT_STUB_TREE}/lib/libvramtrace.so)
  message(FATAL_ERROR "stub library missing: ${VT_STUB_TREE}/lib/libvramtrace.so (build the vramtrace target)")
endif()
