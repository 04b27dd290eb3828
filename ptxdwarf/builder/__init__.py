"""The builder code generators call: types, functions, parameters, variables.

Close in spirit to LLVM's ``DIBuilder``, Pythonic in form::

    dbg = DebugInfoBuilder(name="k.cu", comp_dir="/src", producer="mycodegen 1.0")
    int_t = dbg.base_type("int", byte_size=4, encoding="signed")
    f = dbg.function("foo", linkage_name="_Z3fooii", line=1, type=int_t)
    f.parameter("i", int_t, line=1, location=loc.register("%r1"))
    text = ptxdwarf.attach.attach(ptx_text, dbg)

Every call creates DIEs in one compile unit right away (an arena, as in gimli);
attribute forms are left to the encoder unless DWARF or cuda-gdb want a
particular one. Type layout follows the PTX ABI (:mod:`ptxdwarf.layout`) unless
the caller gives sizes and offsets. :meth:`DebugInfoBuilder.finish` returns the
:class:`~ptxdwarf.dwarf.model.DebugInfo` with pubnames and aranges.
"""

from __future__ import annotations

from .core import DebugInfoBuilder
from .scopes import Function, LexicalBlock, Variable
from .types import C_TYPES, PTX_TYPES, RUST_TYPES, Member, Type
from .types import MemberSpec as MemberSpec

__all__ = [
    "C_TYPES",
    "PTX_TYPES",
    "RUST_TYPES",
    "DebugInfoBuilder",
    "Function",
    "LexicalBlock",
    "Member",
    "Type",
    "Variable",
]
