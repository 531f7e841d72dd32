# vramtrace_split_debug(TARGET): after each link, TARGET's debug info goes to FILE.debug beside it
# and FILE gets a .gnu_debuglink to it, so the installed, stripped FILE still finds its debug info
# in DIR/.debug/ (packaging/CMakeLists.txt installs it there, component debuginfo).
find_program(VT_OBJCOPY NAMES objcopy)
function(vramtrace_split_debug target)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${VT_OBJCOPY} --only-keep-debug $<TARGET_FILE_NAME:${target}> $<TARGET_FILE_NAME:${target}>.debug
    COMMAND ${VT_OBJCOPY} --remove-section=.gnu_debuglink $<TARGET_FILE_NAME:${target}>
    COMMAND ${VT_OBJCOPY} --add-gnu-debuglink=$<TARGET_FILE_NAME:${target}>.debug $<TARGET_FILE_NAME:${target}>
    WORKING_DIRECTORY $<TARGET_FILE_DIR:${target}>
    VERBATIM)
endfunction()
