"""Old import path of :mod:`ptxdwarf.cuda.cubin` (the same module object)."""

import sys

from .cuda import cubin as _module

sys.modules[__name__] = _module
