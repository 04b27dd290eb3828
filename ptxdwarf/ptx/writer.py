"""Writing section images as PTX ``.section`` blocks, in three styles.

- ``nvcc``: one value per line, as nvcc writes.
- ``readable`` (default): comma lists on lines of at most 100 characters,
  multi-byte fields as ``.b16``/``.b32``/``.b64`` values, a new line at each
  record (DIE, string, list), no spaces after commas (under 3 characters per
  DWARF byte on nvcc's output).
- ``compact``: the fewest characters: runs of bytes packed into the directive
  widths whose numbers are shortest.

All styles give the same bytes and relocations once ptxas reads them. The
output is ASCII. Modules below PTX ISA 2.0 take no ``.section`` blocks: their debug
sections are ``@@DWARF`` lines (:func:`format_dwarf_lines`), in every style. ptxas (CUDA 13.0) keeps only the low 32 bits of a ``.b64``
number of 2**32 or more, so such values are written as two ``.b32``.

:func:`format_section` has a native twin (``ptxdwarf._native.writer``); the Python here is its
reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from itertools import pairwise
from operator import attrgetter

from .._native import twin
from ..dwarf.image import Reloc, SectionImage
from ..errors import EncodeError

__all__ = ["Style", "format_dwarf_lines", "format_section", "format_sections"]


class Style(str, Enum):
    """How debug sections are laid out as text."""

    NVCC = "nvcc"
    READABLE = "readable"
    COMPACT = "compact"


_LINE = 100  # readable: target line length
# ptxas takes time quadratic in the length of one comma list (a list of 350k values
# took two minutes); 64 values per directive keep it linear (quirk long-list-quadratic).
_MAX_VALUES = 64


def _check_layout(image: SectionImage, labels: dict[int, list[str]]) -> None:
    """What a section block cannot write is an :class:`EncodeError`: a symbolic value not of
    1, 2, 4 or 8 bytes, past the bytes or over another, a label past the bytes or inside a
    symbolic value."""
    name, n = image.name, len(image.data)
    relocs = image.relocs
    if any(a.offset > b.offset for a, b in pairwise(relocs)):
        relocs = sorted(relocs, key=attrgetter("offset"))
    end = 0
    for r in relocs:
        if r.size not in (1, 2, 4, 8):
            raise EncodeError(f"a {r.size}-byte symbolic value at {name}+0x{r.offset:x}: PTX has .b8 to .b64")
        if r.offset < 0 or r.offset + r.size > n:
            raise EncodeError(
                f"the symbolic value at {name}{r.offset:+#x} lies outside the section's {n} bytes"
            )
        if r.offset < end:
            raise EncodeError(f"the symbolic value at {name}+0x{r.offset:x} overlaps the one before it")
        end = r.offset + r.size
        for inside in range(r.offset + 1, end):
            if inside in labels:
                raise EncodeError(
                    f"label {labels[inside][0]} at {name}+0x{inside:x} falls inside the symbolic value at 0x{r.offset:x}"
                )
    for offset, names in labels.items():
        if not 0 <= offset <= n:
            raise EncodeError(f"label {names[0]} at {name}{offset:+#x} lies outside the section's {n} bytes")


def _segments(image: SectionImage) -> Iterable[tuple[str, int, int, object]]:
    """Split a section into ('bytes', start, end, None), ('reloc', off, size, Reloc)
    and ('label', off, 0, name) in offset order."""
    data = image.data
    labels = image.labels_by_offset()
    relocs = image.relocs
    _check_layout(image, labels)
    cuts = sorted(set(labels) | {r.offset for r in relocs})
    reloc_at = {r.offset: r for r in relocs}
    pos = 0
    n = len(data)
    for cut in cuts:
        if cut > pos:
            yield ("bytes", pos, cut, None)
            pos = cut
        for name in labels.get(cut, ()):
            yield ("label", cut, 0, name)
        found = reloc_at.get(cut)
        if found is not None:
            yield ("reloc", cut, found.size, found)
            pos = cut + found.size
    if pos < n:
        yield ("bytes", pos, n, None)


#: The largest number ptxas keeps whole in a ``.b64`` directive (quirk wide-literal-truncated).
B64_LIMIT = 1 << 32


def _width_of(data: bytes, pos: int, width: int) -> int:
    """``width``, or 4 where an 8-byte field's value is too large for ``.b64``."""
    if width == 8 and int.from_bytes(data[pos : pos + 8], "little") >= B64_LIMIT:
        return 4
    return width


def _symbol_text(reloc: Reloc) -> str:
    return str(reloc.symbol)


def _head(name: str, style: Style) -> list[str]:
    if style == Style.NVCC:
        return [f"\t.section\t{name}", "\t{"]
    return [f".section {name}", "{"]


def _tail(style: Style) -> str:
    return "\t}" if style == Style.NVCC else "}"


@twin("writer")
def format_section(image: SectionImage, style: Style | str = Style.READABLE) -> str:
    """The PTX text of one section block (ending with a newline)."""
    style = Style(style)
    if style == Style.COMPACT:
        lines = _compact(image)
    elif style == Style.NVCC:
        lines = _nvcc(image)
    else:
        lines = _readable(image)
    return "\n".join(_head(image.name, style) + lines + [_tail(style)]) + "\n"


def format_sections(images: Iterable[SectionImage], style: Style | str = Style.READABLE) -> str:
    """Several section blocks, one after the other."""
    return "".join(format_section(img, style) for img in images)


def format_dwarf_lines(image: SectionImage) -> str:
    """One section as ``@@DWARF`` lines (PTX ISA 1.x; ending with a newline): ``.byte``
    lists of 16 values, ``.4byte``/``.quad`` for symbolic values. These lines have no
    label definitions: an image with labels is an :class:`EncodeError`."""
    out = [f'\t@@DWARF .section {image.name}, "",@progbits']
    data = image.data
    for kind, start, end, extra in _segments(image):
        if kind == "label":
            raise EncodeError(
                f"label {extra} in {image.name}: @@DWARF lines (PTX ISA 1.x) cannot define labels"
            )
        if kind == "reloc":
            directive = {4: ".4byte", 8: ".quad"}.get(end)
            if directive is None:
                raise EncodeError(
                    f"a {end}-byte symbolic value at {image.name}+0x{start:x}: @@DWARF lines have only "
                    ".4byte and .quad for symbols"
                )
            out.append(f"\t@@DWARF {directive}\t{_symbol_text(extra)}")  # type: ignore[arg-type]
            continue
        for pos in range(start, end, 16):
            values = ", ".join(f"0x{b:02x}" for b in data[pos : min(pos + 16, end)])
            out.append(f"\t@@DWARF .byte\t{values}")
    return "\n".join(out) + "\n"


# --- nvcc -----------------------------------------------------------------


def _nvcc(image: SectionImage) -> list[str]:
    data = image.data
    fields = image.fields
    out: list[str] = []
    for kind, start, end, extra in _segments(image):
        if kind == "label":
            out.append(f"{extra}:")
        elif kind == "reloc":
            out.append(f".b{end * 8} {_symbol_text(extra)}")  # type: ignore[arg-type]
        else:
            pos = start
            while pos < end:
                width = _width_of(data, pos, fields.get(pos, 1))
                if width > 1 and pos + width <= end:
                    out.append(f".b{width * 8} {int.from_bytes(data[pos : pos + width], 'little')}")
                    pos += width
                else:
                    out.append(f".b8 {data[pos]}")
                    pos += 1
    return out


# --- readable -------------------------------------------------------------


class _Lines:
    """Output lines: comma lists of one directive width, labels and symbols on lines of their own."""

    def __init__(self, line_length: int | None) -> None:
        self.out: list[str] = []
        self.width = 0  # width of the directive on the open line, 0: no open line
        self.values: list[str] = []
        self.length = 0
        self.line_length = line_length

    def flush(self) -> None:
        if self.values:
            self.out.append(f".b{self.width * 8} " + ",".join(self.values))
        self.values, self.length, self.width = [], 0, 0

    def value(self, width: int, text: str) -> None:
        if (
            self.width != width
            or len(self.values) >= _MAX_VALUES
            or (self.line_length is not None and self.length + len(text) + 1 > self.line_length)
        ):
            self.flush()
            self.width = width
        self.values.append(text)
        self.length += len(text) + 1

    def line(self, text: str) -> None:
        self.flush()
        self.out.append(text)

    def segment(self, kind: str, end: int, extra: object) -> bool:
        """Write a label or a symbol; False for bytes, which the caller writes."""
        if kind == "label":
            self.line(f"{extra}:")
        elif kind == "reloc":
            # ptxas takes a symbol only as the sole value of its directive.
            self.line(f".b{end * 8} {_symbol_text(extra)}")  # type: ignore[arg-type]
        else:
            return False
        return True


_DEC = tuple(str(i) for i in range(256))
_DEC_COST = tuple(len(t) + 1 for t in _DEC)  # a byte value's characters plus its comma


# Kinds of the marks _readable walks, in the order they apply at one offset.
_BREAK, _LABEL, _SYMBOL, _FIELD = 0, 1, 2, 3
_LINE_START = {1: "\n.b8 ", 2: "\n.b16 ", 4: "\n.b32 ", 8: "\n.b64 "}


def _marks(image: SectionImage, labels: dict[int, list[str]], hints: bool) -> list[int]:
    """Every offset where something other than a plain byte happens, as ``offset << 4 | kind``
    (a field's kind is ``_FIELD`` plus its width), sorted, then an end mark past the data."""
    marks = [r.offset << 4 | _SYMBOL for r in image.relocs]
    if labels:
        marks += [p << 4 | _LABEL for p in labels]
    if hints:
        marks += [p << 4 for p in image.breaks]
        marks += [p << 4 | _FIELD + w for p, w in image.fields.items() if w > 1]
    marks.sort()
    marks.append((max(len(image.data), marks[-1] >> 4 if marks else 0) + 1) << 4)
    return marks


def _readable(image: SectionImage) -> list[str]:
    labels = image.labels_by_offset()
    _check_layout(image, labels)
    reloc_at = {r.offset: r for r in image.relocs}
    if image.breaks or image.fields:
        return _readable_records(image.data, _marks(image, labels, True), labels, reloc_at)
    return _readable_plain(image.data, _marks(image, labels, False), labels, reloc_at)


def _readable_records(  # noqa: C901 - one loop over a section's record marks, run per value: kept inline for speed
    data: bytes, marks: list[int], labels: dict[int, list[str]], reloc_at: dict[int, Reloc]
) -> list[str]:
    """The readable lines of a section with record hints: a new line at each record,
    fields as values of their width."""
    # One pass over the marks, writing text fragments: a line starts with "\n.bN ",
    # values follow with commas. A run of plain bytes between two marks that fits the
    # open line is joined in one C-level call; only a run split over lines goes byte
    # by byte (with the same rule, so the lines are the same either way).
    n = len(data)
    dec = _DEC
    cost = _DEC_COST
    getdec = dec.__getitem__
    starts = _LINE_START
    parts: list[str] = []
    put = parts.append
    ncur = 0  # values on the open line
    cur_len = 0  # their characters, a comma each
    cur_width = 0  # width of the open line's directive, 0: no open line
    pos = 0
    i = 0
    m = marks[0]
    while True:
        at = m >> 4
        if at > n:
            at = n
        if pos < at:
            # Plain bytes [pos, at).
            count = at - pos
            if count == 1:
                b = data[pos]
                c = cost[b]
                if cur_width != 1 or cur_len + c > _LINE or ncur >= _MAX_VALUES:
                    put("\n.b8 ")
                    put(dec[b])
                    cur_len, ncur, cur_width = c, 1, 1
                else:
                    put(",")
                    put(dec[b])
                    cur_len += c
                    ncur += 1
            else:
                text = ",".join(map(getdec, data[pos:at]))
                c = len(text) + 1
                if cur_width == 1 and cur_len + c <= _LINE and ncur + count <= _MAX_VALUES:
                    put(",")
                    put(text)
                    cur_len += c
                    ncur += count
                elif c <= _LINE and count <= _MAX_VALUES:
                    put("\n.b8 ")
                    put(text)
                    cur_len, ncur, cur_width = c, count, 1
                else:
                    cur_len, ncur = _spread(data, pos, at, put, cur_len, ncur, cur_width == 1)
                    cur_width = 1
            pos = at
        elif at < pos:
            i += 1
            m = marks[i]
            continue  # inside a field or symbol already written
        if at == n and m >> 4 > n:
            break  # the end mark
        i += 1
        kind = m & 15
        m = marks[i]
        if kind > _FIELD:
            width = kind - _FIELD
            end = at + width
            if width == 8 and int.from_bytes(data[at:end], "little") >= B64_LIMIT:
                width = 4
                end = at + 4
            # A field must end inside the section and before the next symbol or label.
            if end <= n and (m >> 4 >= end or _clear(marks, i, end)):
                text = str(int.from_bytes(data[at:end], "little"))
                c = len(text) + 1
                if cur_width != width or cur_len + c > _LINE or ncur >= _MAX_VALUES:
                    put(starts[width])
                    cur_len, ncur, cur_width = c, 1, width
                else:
                    put(",")
                    cur_len += c
                    ncur += 1
                put(text)
                pos = end
            continue
        cur_width = 0
        if kind == _SYMBOL:
            # ptxas takes a symbol only as the sole value of its directive.
            found = reloc_at[at]
            put(f"\n.b{found.size * 8} {_symbol_text(found)}")
            pos = at + found.size
        elif kind == _LABEL:
            for name in labels[at]:
                put(f"\n{name}:")
    return ["".join(parts)[1:]] if parts else []


def _spread(
    data: bytes, pos: int, at: int, put: Callable[[str], None], cur_len: int, ncur: int, open_b8: bool
) -> tuple[int, int]:
    """Write bytes [pos, at) as ``.b8`` values over as many lines as they take, the first
    continuing the open line if it is a ``.b8`` one (``cur_len`` characters, ``ncur``
    values); the last line's length and count."""
    if not open_b8:
        cur_len, ncur = _LINE, 0  # forces a new line
    cost = _DEC_COST
    dec = _DEC
    for b in data[pos:at]:
        c = cost[b]
        if cur_len + c > _LINE or ncur >= _MAX_VALUES:
            put("\n.b8 ")
            cur_len, ncur = 0, 0
        elif ncur:
            put(",")
        put(dec[b])
        cur_len += c
        ncur += 1
    return cur_len, ncur


def _clear(marks: list[int], i: int, end: int) -> bool:
    """No label or symbol among the marks from ``marks[i]`` up to offset ``end``."""
    while marks[i] >> 4 < end:
        if marks[i] & 15 in (_LABEL, _SYMBOL):
            return False
        i += 1
    return True


def _readable_plain(
    data: bytes, marks: list[int], labels: dict[int, list[str]], reloc_at: dict[int, Reloc]
) -> list[str]:
    """The readable lines of a section without record hints: plain bytes 30 to a line,
    labels and symbols on lines of their own."""
    n = len(data)
    getdec = _DEC.__getitem__
    parts: list[str] = []
    put = parts.append
    pos = 0
    for m in marks:
        at = m >> 4
        if at > n:
            at = n
        if pos < at:
            for k in range(pos, at, 30):
                put("\n.b8 " + ",".join(map(getdec, data[k : min(k + 30, at)])))
            pos = at
        elif at < pos:
            continue  # inside a symbol already written
        if at == n and m >> 4 > n:
            break  # the end mark
        kind = m & 15
        if kind == _SYMBOL:
            found = reloc_at[at]
            put(f"\n.b{found.size * 8} {_symbol_text(found)}")
            pos = at + found.size
        elif kind == _LABEL:
            for name in labels[at]:
                put(f"\n{name}:")
    return ["".join(parts)[1:]] if parts else []


# --- compact --------------------------------------------------------------


def _num(value: int) -> str:
    dec = str(value)
    if value < 10**6:
        return dec
    hx = f"0x{value:x}"
    return hx if len(hx) < len(dec) else dec


def _compact(image: SectionImage) -> list[str]:
    data = image.data
    lines = _Lines(None)
    for kind, start, end, extra in _segments(image):
        if lines.segment(kind, end, extra):
            continue
        for width, text in _pack(data, start, end, lines.width):
            lines.value(width, text)
    lines.flush()
    return lines.out


_SWITCH = 6  # characters a new directive costs: "\n.b32 " (5 or 6)


def _pack(data: bytes, start: int, end: int, open_width: int) -> list[tuple[int, str]]:
    """Choose directive widths for ``data[start:end]`` minimising characters (dynamic programming)."""
    n = end - start
    if n <= 0:
        return []
    widths = (1, 2, 4, 8)
    inf = float("inf")
    # best[i][w]: least cost to write bytes[i:] when the open directive has width w (0: none)
    best = [dict.fromkeys((0, 1, 2, 4, 8), inf) for _ in range(n + 1)]
    choice: list[dict[int, tuple[int, str]]] = [{} for _ in range(n + 1)]
    for w in (0, 1, 2, 4, 8):
        best[n][w] = 0
    for i in range(n - 1, -1, -1):
        texts = {}
        for w in widths:
            if i + w <= n:
                value = int.from_bytes(data[start + i : start + i + w], "little")
                if w == 8 and value >= B64_LIMIT:
                    continue
                texts[w] = _num(value)
        row = best[i]
        for open_w in (0, 1, 2, 4, 8):
            bc = inf
            bt: tuple[int, str] = (1, "")
            for w, text in texts.items():
                cost = len(text) + (1 if open_w == w else _SWITCH) + best[i + w][w]
                if cost < bc:
                    bc = cost
                    bt = (w, text)
            row[open_w] = bc
            choice[i][open_w] = bt
    out = []
    i = 0
    w_open = open_width if open_width in (1, 2, 4, 8) else 0
    while i < n:
        w, text = choice[i][w_open]
        out.append((w, text))
        i += w
        w_open = w
    return out
