"""Old import path of :mod:`ptxdwarf.dwarf.forms` (the same module object)."""

import sys

from .dwarf import forms as _module

sys.modules[__name__] = _module
