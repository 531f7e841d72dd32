# The wheel carries native binaries (the CLI and libvramtrace.so) but no Python extension module,
# so it is tagged py3-none-<platform>: any CPython 3 on this architecture, not a pure wheel.
from setuptools import setup
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # the build then fails in setuptools with its own message
    bdist_wheel = None


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


cmdclass = {}
if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):
        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = PlatformWheel

setup(distclass=BinaryDistribution, cmdclass=cmdclass)
