/* A stand-in for libvramtrace.so in the CLI tests of `vramtrace run`: preloading it does nothing,
 * which is all those tests need (the library itself is tested elsewhere). */
int vramtrace_cli_test_stub_loaded = 1;
