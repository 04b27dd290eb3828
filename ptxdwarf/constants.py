"""Old import path of :mod:`ptxdwarf.dwarf.constants` (the same module object)."""

import sys

from .dwarf import constants as _module

sys.modules[__name__] = _module
