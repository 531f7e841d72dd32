# cmake -DFILE=PATH -P set_runpath.cmake: gives the wheel's CLI the RUNPATH it has once installed
# ($ORIGIN/../lib, where the wheel bundles libfmt and libsimdjson). The build tree's binary holds a
# placeholder of that length for `cmake --install` to fill; the wheel is staged from the build
# tree, so the stage fills it here.
file(RPATH_SET FILE "${FILE}" NEW_RPATH "$ORIGIN/../lib")
