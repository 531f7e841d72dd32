# Replaced by the CMake build with the project's version when it stages the wheel.
__version__ = "0+source"
