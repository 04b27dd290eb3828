"""Old import path of :mod:`ptxdwarf.dwarf.model` (the same module object)."""

import sys

from .dwarf import model as _module

sys.modules[__name__] = _module
