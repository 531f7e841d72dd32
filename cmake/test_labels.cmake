# ctest labels, so that a part of the suite runs alone (`ctest -L unit` in seconds):
#   unit        the Catch2 programs of tests/unit and the static checks (abi:, docs:, standin:,
#               bench: the benchmark suite's driver on made-up figures)
#   cli         the command-line tool driven as a user runs it (cli:, cli security:)
#   e2e         programs under the library (e2e:, live view:, the stand-in self-check)
#   browser     the HTML report in chromium
#   monitoring  Prometheus and node_exporter on loopback
#   packaging   the installed tree, the wheel and the .deb as users install them
#   slow        a minute or more (the libFuzzer smoke run, the locked-tree rerun, packaging)
# The Catch2 programs label their tests where they are discovered; every other test is labelled by
# its name at the end of the folder that adds it (set_tests_properties reaches only that folder).
function(vramtrace_label_tests)
  get_property(names DIRECTORY PROPERTY TESTS)
  foreach(name IN LISTS names)
    if(name MATCHES "^(abi|docs|standin|bench): " OR name STREQUAL "standin_selfcheck")
      set(labels unit)
    elseif(name MATCHES "^cli( security)?: ")
      set(labels cli)
    elseif(name MATCHES "^(e2e|live view): ")
      set(labels e2e)
    elseif(name MATCHES "^browser: ")
      set(labels browser)
    elseif(name MATCHES "^prometheus: ")
      set(labels monitoring)
    elseif(name MATCHES "^fuzz: every target")
      set(labels slow)
    elseif(name MATCHES "^fuzz: ")
      set(labels unit)
    elseif(name MATCHES "^packaging: ")
      set(labels "packaging;slow")
    elseif(name MATCHES "^locked tree: ")
      set(labels "cli;e2e;slow")
    else()
      message(FATAL_ERROR "test \"${name}\" matches no label rule (tests/CMakeLists.txt)")
    endif()
    set_tests_properties("${name}" PROPERTIES LABELS "${labels}")
  endforeach()
endfunction()
