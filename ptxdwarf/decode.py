"""Old import path of :mod:`ptxdwarf.dwarf.decode` (the same module object)."""

import sys

from .dwarf import decode as _module

sys.modules[__name__] = _module
