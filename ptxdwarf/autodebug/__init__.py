"""``ptxdwarf attach``: source-level debugging of PTX that has no debug info.

The PTX itself becomes the source. :func:`attach_ptx` reads a module without
debug info (hand-written, or from a generator that writes no DWARF) and writes:

- ``.target ..., debug`` and ``.file 1 "OUTPUT"``, naming the output file itself;
- ``.loc 1 N 1`` before the first line of every instruction, N being that line's
  number in the output (the ``.loc`` lines themselves shift the lines; the debug
  sections are appended at the end, so they shift nothing);
- labels ``$L__ptxdwarf_beginK`` / ``$L__ptxdwarf_endK`` at each function's first
  instruction and before its closing brace (the begin label right after the first
  ``.loc``, so ptxas puts it at offset 0, not after a kernel's prologue);
- a compile unit named after the output file, producer ``ptxdwarf attach``, with a
  subprogram per ``.entry``/``.func`` (linkage name = the PTX symbol, name = the
  demangled C++ name when the symbol is Itanium-mangled, type = the return
  parameter's type), formal parameters, a variable per register the code uses
  (address class 2; ptxas -g maps no other register), ``.local`` (6) and ``.shared`` (8) object of each function,
  and per module ``.global`` (5), ``.const`` (4), ``.shared`` (8), ``.texref``
  (10), ``.samplerref`` (11) and ``.surfref`` (9) variable; base types named after
  the PTX types (``.u32``: 4 bytes unsigned, ``.f32`` float, ``.pred`` boolean),
  arrays for ``x[24]``, pointers (with the state space as address class) for
  ``.ptr`` kernel parameters.

Parameters. A kernel's parameter is its ``.param`` symbol (``DW_OP_addr``, class 7;
ptxas turns it into the constant-bank offset). A device function's parameter has no
address ptxas can keep (it writes 0 for a ``.func`` parameter's ``DW_OP_addr``), so it
is described by the register(s) its ``ld.param`` loads go to (class 2): the register
when one ``ld.param`` loads it (or all loads of it go to the same register at offset
0); ``DW_OP_regx``/``DW_OP_piece`` pieces when loads of disjoint parts go to
different registers (an aggregate loaded field by field), with empty pieces for the
bytes never loaded; and no location at all (a warning names it) when it is never
loaded by ``ld.param`` from its symbol or the loads disagree (two registers for the
same bytes). The location names where the value was loaded; it does not follow
later writes to that register.

Registers. ``DW_OP_regx`` can carry at most 8 characters of a register name
(:data:`ptxdwarf.dwarf.expr.MAX_REGISTER_NAME`). Longer names are skipped with one warning
that counts them, unless ``rename_registers`` renames every long-named register
(all registers of a ``<N>`` range together, the same long name to the same short
name across functions) to ``%Ra0...`` (ranges) or ``%Sa`` (single registers), names
the module does not use; the map is :attr:`AttachResult.renamed`. Only the names
change: ptxas makes the same code.

Predicates. ``.pred`` registers are not described unless ``predicates`` asks for up to
:data:`~ptxdwarf.autodebug.describe.MAX_PREDICATES` (51) per function (the first declared,
with one warning naming the others): ptxas 12.9 to 13.5 ``-g`` crashes (SIGSEGV) on a
function whose debug info describes 52 or more predicates that guard branches, and on some
functions with as few as 4 (quirk ``predicate-count``). No producer in the corpus
describes a predicate.

A budget. ptxas ``-g`` keeps every described register live through its function, and needs
memory growing with their number times the function's register operands (quirk
``described-registers-memory``). By default (``max_registers="auto"``) a function gets at most
the registers :func:`ptxdwarf.cuda.memory.register_budgets` allows, which keeps ptxas ``-g``
within twice the memory of the code alone (a function of up to 256 registers keeps them unless
its code is very long): its parameters, then the registers that live longest (first to last
use); one warning names the rest (:attr:`AttachResult.left_out`). ``max_registers=N`` or ``"all"`` describes more.

ptxas 13.0 does not parse ``DW_OP_piece`` operands; pieces are sized so that it does
not trip over them (see :mod:`ptxdwarf.autodebug.params`).

``.target ..., debug`` makes ptxas compile the module as with ``-g`` (unoptimized)
even when ``-g`` is not given; ``debug_target=False`` leaves ``.target`` alone, for
output that compiles without ``-g`` to exactly the input's code.

A module that already has debug info (a ``.debug_*`` section, ``.loc``, ``.file`` or
``.target ..., debug``) is refused unless ``replace``: then those are removed
first (and labels an earlier ``attach`` inserted).

The modules: :mod:`~ptxdwarf.autodebug.scan` (reading the text),
:mod:`~ptxdwarf.autodebug.existing` (debug info already there),
:mod:`~ptxdwarf.autodebug.registers` (renaming), :mod:`~ptxdwarf.autodebug.params`
(``ld.param`` analysis), :mod:`~ptxdwarf.autodebug.typemap` (types),
:mod:`~ptxdwarf.autodebug.plan` (the edits of the text),
:mod:`~ptxdwarf.autodebug.describe` (the compile unit) and
:mod:`~ptxdwarf.autodebug.entry` (:func:`attach_ptx`). The command line
is :func:`ptxdwarf.cli.main_attach`.
"""

from __future__ import annotations

from .describe import PRODUCER
from .entry import AttachResult, attach_ptx, default_output_name

__all__ = ["PRODUCER", "AttachResult", "attach_ptx", "default_output_name"]
