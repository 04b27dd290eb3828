"""Old import path of :mod:`ptxdwarf.dwarf.schemas` (the same module object)."""

import sys

from .dwarf import schemas as _module

sys.modules[__name__] = _module
