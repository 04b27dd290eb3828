"""Old import path of :mod:`ptxdwarf.dwarf.shapes` (the same module object)."""

import sys

from .dwarf import shapes as _module

sys.modules[__name__] = _module
