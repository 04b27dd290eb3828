"""Old import path of :mod:`ptxdwarf.dwarf.encode` (the same module object)."""

import sys

from .dwarf import encode as _module

sys.modules[__name__] = _module
