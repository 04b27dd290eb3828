"""Old import path of :mod:`ptxdwarf.dwarf.expr` (the same module object)."""

import sys

from .dwarf import expr as _module

sys.modules[__name__] = _module
