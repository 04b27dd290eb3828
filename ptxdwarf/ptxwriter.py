"""Old import path of :mod:`ptxdwarf.ptx.writer` (the same module object)."""

import sys

from .ptx import writer as _module

sys.modules[__name__] = _module
