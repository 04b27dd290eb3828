"""Old import path of :mod:`ptxdwarf.cuda.fatbin` (the same module object)."""

import sys

from .cuda import fatbin as _module

sys.modules[__name__] = _module
