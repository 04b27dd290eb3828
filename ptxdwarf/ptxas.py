"""Old import path of :mod:`ptxdwarf.cuda.ptxas` (the same module object)."""

import sys

from .cuda import ptxas as _module

sys.modules[__name__] = _module
