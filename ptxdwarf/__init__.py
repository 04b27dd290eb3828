"""ptxdwarf: write, read and check the DWARF debug sections inside NVIDIA PTX.

Reading::

    info = ptxdwarf.read("kernel.ptx")          # or a cubin, or read(text=ptx_text)
    for die in info.iter_dies():
        print(die.offset, die.tag_str, die.name)

Checking::

    report = ptxdwarf.lint.lint("kernel.ptx")   # ptxdwarf.lint.RULES: the rules
    result = ptxdwarf.check.check("kernel.ptx") # the ptxas round trip

The tasks are here: :func:`read` and :func:`rewrite`, and the modules :mod:`.attach`,
:mod:`.check`, :mod:`.lint`, :mod:`.fix`, :mod:`.stats` and :mod:`.strip`, each with its
function of the same name; with them the builder and its types, the model and the errors. The DWARF codec is
:mod:`ptxdwarf.dwarf`, the CUDA tools (cubins, fatbins, ptxas, the register map) are
:mod:`ptxdwarf.cuda`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._exports import lazy_exports

__version__ = "0.1.0"

# The public names: each is imported here for type checkers and on first use at run time
# (so that a command line run loads only what its command needs); __all__ and the lazy
# imports are read from this block.
if TYPE_CHECKING:
    from . import attach as attach
    from . import check as check
    from . import fix as fix
    from . import lint as lint
    from . import stats as stats
    from . import strip as strip
    from .abi import ParamDecl as ParamDecl
    from .api import read as read
    from .api import read_all as read_all
    from .api import rewrite as rewrite
    from .attach import SourceLoc as SourceLoc
    from .builder import DebugInfoBuilder as DebugInfoBuilder
    from .builder import Function as Function
    from .builder import LexicalBlock as LexicalBlock
    from .builder import Member as Member
    from .builder import Type as Type
    from .builder import Variable as Variable
    from .check import CheckReport as CheckReport
    from .check import Difference as Difference
    from .cuda.regmap import FunctionRegisters as FunctionRegisters
    from .dwarf.constants import AddressClass as AddressClass
    from .dwarf.lines import LineProgram as LineProgram
    from .dwarf.lines import LineRow as LineRow
    from .dwarf.model import DIE as DIE
    from .dwarf.model import Attribute as Attribute
    from .dwarf.model import DebugInfo as DebugInfo
    from .dwarf.model import Unit as Unit
    from .errors import AttachError as AttachError
    from .errors import BuilderError as BuilderError
    from .errors import CubinError as CubinError
    from .errors import DwarfError as DwarfError
    from .errors import EncodeError as EncodeError
    from .errors import LayoutError as LayoutError
    from .errors import PtxDwarfError as PtxDwarfError
    from .errors import PtxSyntaxError as PtxSyntaxError
    from .errors import RegisterNameError as RegisterNameError
    from .errors import ToolError as ToolError
    from .errors import UsageError as UsageError
    from .fix import FixResult as FixResult
    from .lint import Finding as Finding
    from .loc import Location as Location
    from .loc import LocationListSpec as LocationListSpec
    from .ptx.writer import Style as Style
    from .stats import StatsReport as StatsReport
    from .visibility import RegisterLocation as RegisterLocation


__all__: list[str]  # given by __getattr__ (read from the block above when first asked for)
__getattr__, __dir__ = lazy_exports(__name__, __file__, globals())
