"""Old import path of :mod:`ptxdwarf.dwarf.image` (the same module object)."""

import sys

from .dwarf import image as _module

sys.modules[__name__] = _module
