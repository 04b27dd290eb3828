"""A PTX module as the reader finds it: its directives, functions, variables, section
blocks, and its text comment-masked with the line of each offset."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from ..dwarf.image import SectionImage
from ..dwarf.reprs import counted, short
from ..errors import PtxDwarfError
from .lexer import LineIndex, mask_comments
from .statements import BodyStatements
from .symbols import SymbolTable, symbol_table

__all__ = [
    "FRAGMENT_NOTE",
    "TYPE_SIZES",
    "FileDirective",
    "LazyImages",
    "PtxFunction",
    "PtxModule",
    "PtxVariable",
    "SectionBlock",
    "SectionText",
]


#: What the commands that read a PTX fragment say of it (:attr:`PtxModule.is_fragment`).
FRAGMENT_NOTE = (
    "a PTX fragment (debug sections, no .version directive: a piece cut out of a module, for "
    "injection into another); read as it is, and ptxas cannot compile it alone"
)


@dataclass(slots=True)
class FileDirective:
    """``.file INDEX "path"`` (LLVM 14 writes ``.file INDEX "dir" "name"``)."""

    index: int
    path: str
    line: int
    directory: str | None = None
    timestamp: int | None = None
    size: int | None = None

    def __repr__(self) -> str:
        return f"<FileDirective {self.index} {short(self.full_path)!r} (line {self.line})>"

    @property
    def full_path(self) -> str:
        if self.directory and not self.path.startswith("/"):
            return self.directory.rstrip("/") + "/" + self.path
        return self.path


@dataclass(slots=True)
class PtxVariable:
    """A declared name: a parameter, register, or variable of some state space.

    ``count`` is set for a register range (``.reg .b32 %r<4>`` declares ``%r0`` to
    ``%r3``: name ``%r``, count 4); ``dims`` for arrays (``.b8 x[24]``, ``[]`` is -1).
    """

    name: str
    space: str
    type: str | None
    line: int
    align: int | None = None
    dims: tuple[int, ...] = ()
    count: int | None = None
    pointer_space: str | None = None
    text: str = ""

    def __repr__(self) -> str:
        kind = " ".join(x for x in (self.space, self.type) if x)
        count = f"<{self.count}>" if self.count is not None else ""
        dims = "".join(f"[{d}]" if d >= 0 else "[]" for d in self.dims)
        return f"<PtxVariable .{kind} {short(self.name)}{count}{dims} (line {self.line})>"

    initialized: bool = False
    """Declared with an initializer (``= 1``, ``= {1, 2}``)."""

    def names(self) -> list[str]:
        """Every name declared (each register of a range)."""
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]

    def declares(self, name: str) -> bool:
        if self.count is None:
            return name == self.name
        rest = name[len(self.name) :]
        return (
            name.startswith(self.name)
            and rest.isdigit()
            and int(rest) < self.count
            and (rest == "0" or rest[0] != "0")
        )

    @property
    def byte_size(self) -> int | None:
        """Size in bytes of the declared object, where the type says it."""
        size = TYPE_SIZES.get(self.type or "")
        if size is None:
            return None
        for d in self.dims:
            if d < 0:
                return None
            size *= d
        return size


TYPE_SIZES = {
    ".b8": 1,
    ".s8": 1,
    ".u8": 1,
    ".pred": 1,
    ".b16": 2,
    ".s16": 2,
    ".u16": 2,
    ".f16": 2,
    ".bf16": 2,
    ".b32": 4,
    ".s32": 4,
    ".u32": 4,
    ".f32": 4,
    ".f16x2": 4,
    ".bf16x2": 4,
    ".tf32": 4,
    ".b64": 8,
    ".s64": 8,
    ".u64": 8,
    ".f64": 8,
    ".b128": 16,
    ".texref": 8,
    ".samplerref": 8,
    ".surfref": 8,
}


@dataclass(slots=True)
class PtxFunction:
    """A ``.entry`` or ``.func`` with a body: name, text span, labels defined in it."""

    name: str
    kind: str
    line: int
    header_start: int
    body_start: int = -1
    body_end: int = -1
    end_line: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    """Label name to the line that defines it."""
    params: list[PtxVariable] = field(default_factory=list)
    returns: list[PtxVariable] = field(default_factory=list)
    declarations: list[PtxVariable] = field(default_factory=list)
    """``.reg``, ``.local``, ``.shared``, ``.param`` declared in the body."""

    @property
    def is_kernel(self) -> bool:
        return self.kind == "entry"

    def __repr__(self) -> str:
        return (
            f"<PtxFunction .{self.kind} {short(self.name)} (lines {self.line}-{self.end_line}): "
            f"{counted(len(self.params), 'parameter')}, {counted(len(self.labels), 'label')}>"
        )

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a parameter, label or declared name of this function."""
        if name in self.labels:
            return True
        return any(v.declares(name) for v in (*self.params, *self.returns, *self.declarations))

    def register(self, name: str) -> PtxVariable | None:
        """The ``.reg`` declaration that declares register ``name`` (a linear search; the
        module's symbol table, ``PtxModule.symbols.register``, looks it up by name)."""
        for v in self.declarations:
            if v.space == "reg" and v.declares(name):
                return v
        return None


@dataclass(slots=True)
class SectionText:
    """What a section block's text says beyond its bytes: its labels, label differences,
    ``label+N`` values, and values ptxas cannot parse (none of which the image keeps)."""

    labels: list[tuple[str, int]] = field(default_factory=list)
    """Labels defined in the block, with their lines."""
    differences: list[tuple[str, str, int]] = field(default_factory=list)
    """``a-b`` values: the two labels and the line."""
    addends: list[tuple[str, int]] = field(default_factory=list)
    """``label+N`` values as written, with their offsets in the block's image."""
    syntax: list[tuple[str, int]] = field(default_factory=list)
    """Values ptxas cannot parse: what is wrong, and the line."""

    def __repr__(self) -> str:
        return (
            f"<SectionText {counted(len(self.labels), 'label')}, {counted(len(self.differences), 'difference')}, "
            f"{counted(len(self.addends), 'addend')}, {len(self.syntax)} not parsed>"
        )


@dataclass(slots=True)
class SectionBlock:
    """One ``.section NAME { ... }`` block: its place in the text and its image.

    The image is read from the text on first use (``image``), so that sections a
    reader does not need (``.debug_loc`` when only DIEs are wanted) cost nothing.
    """

    name: str
    start: int
    end: int
    line: int
    end_line: int
    loader: Callable[[], SectionImage] | None = field(default=None, repr=False)
    labels_possible: bool = True
    _image: SectionImage | None = field(default=None, repr=False)
    _text: SectionText | None = field(default=None, repr=False)
    dwarf_lines: bool = False
    """Written as ``@@DWARF`` lines (PTX ISA before 2.0), not as a ``.section`` block."""

    def __repr__(self) -> str:
        return f"<SectionBlock {short(self.name)} (lines {self.line}-{self.end_line})>"

    @property
    def image(self) -> SectionImage:
        if self._image is None:
            assert self.loader is not None
            self._image, self.loader = self.loader(), None
        return self._image

    @property
    def text(self) -> SectionText:
        """What the block's text says beyond its bytes (read with the image)."""
        _ = self.image
        return self._text if self._text is not None else SectionText()


@dataclass
class PtxModule:
    """A PTX module as far as debug info cares."""

    text: str
    filename: str
    version: tuple[int, int] | None = None
    version_line: int = 0
    target: list[str] = field(default_factory=list)
    target_span: tuple[int, int] | None = None
    target_line: int = 0
    address_size: int | None = None
    files: list[FileDirective] = field(default_factory=list)
    sections: list[SectionBlock] = field(default_factory=list)
    _functions: list[PtxFunction] = field(default_factory=list, repr=False)
    _variables: list[PtxVariable] = field(default_factory=list, repr=False)
    _prototypes: list[str] = field(default_factory=list, repr=False)
    _pending: Callable[[], PtxModule] | None = field(default=None, repr=False, compare=False)
    _symbols: SymbolTable | None = field(default=None, repr=False, compare=False)
    _masked: str | None = field(default=None, repr=False, compare=False)
    _lines: LineIndex | None = field(default=None, repr=False, compare=False)
    kept_statements: dict[int, BodyStatements] = field(default_factory=dict, repr=False, compare=False)
    """The split bodies of the functions (by ``id``) a reader kept for another to read: lint
    keeps those it reports a label of, for the repairs of the same text (kept only for those,
    as a large module's statements take more memory than its text)."""

    def __repr__(self) -> str:
        version = f" .version {self.version[0]}.{self.version[1]}" if self.version else ""
        target = f" .target {','.join(self.target)}" if self.target else ""
        return (
            f"<PtxModule {short(self.filename)!r}{version}{target}: {counted(len(self.text), 'character')}, "
            f"{counted(len(self.sections), 'section')}>"
        )

    def _complete(self) -> None:
        # The functions, their declarations and labels are read on first use:
        # reading the debug sections does not need them.
        if self._pending is not None:
            full, self._pending = self._pending, None
            other = full()
            self._functions, self._variables, self._prototypes, self._masked = (
                other._functions,
                other._variables,
                other._prototypes,
                other._masked,
            )
            for block in other.sections:
                block.loader = None  # its copy of the body text (the first reading's blocks stay)

    @property
    def masked(self) -> str:
        """The text with every comment blanked (:func:`~ptxdwarf.ptx.lexer.mask_comments`),
        as the reader read it: what every scan of the code reads."""
        self._complete()
        if self._masked is None:
            self._masked = mask_comments(self.text, self.filename)
        return self._masked

    @property
    def lines(self) -> LineIndex:
        """The line of each offset of the text, and where each line starts."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    @property
    def functions(self) -> list[PtxFunction]:
        """Functions with a body (``.entry``, ``.func``), with parameters, declarations, labels."""
        self._complete()
        return self._functions

    @property
    def variables(self) -> list[PtxVariable]:
        """Module-level ``.global``, ``.const``, ``.shared`` ... variables."""
        self._complete()
        return self._variables

    @property
    def prototypes(self) -> list[str]:
        """Functions declared without a body (``.extern .func``)."""
        self._complete()
        return self._prototypes

    @property
    def has_debug_target(self) -> bool:
        """``.target`` lists ``debug``."""
        return "debug" in self.target

    @property
    def is_fragment(self) -> bool:
        """Debug sections without a ``.version`` directive: a piece of a module (an injector's
        fragment), which can be read but not compiled."""
        return self.version is None and any(b.name.startswith(".debug_") for b in self.sections)

    def require_whole(self, what: str) -> None:
        """:class:`~ptxdwarf.errors.PtxDwarfError` for a fragment (:attr:`is_fragment`), which
        ``what`` (``check``: something that runs ptxas) cannot compile."""
        if self.is_fragment:
            raise PtxDwarfError(
                f"{what}: ptxas cannot compile a PTX fragment (no .version directive)",
                where=self.filename,
            )

    def images(self, *, debug_only: bool = False) -> LazyImages:
        """Section images by name, each read on first use; blocks of the same name are joined in order.

        ``debug_only``: only the ``.debug_*`` sections."""
        groups: dict[str, list[SectionBlock]] = {}
        for block in self.sections:
            if not debug_only or block.name.startswith(".debug_"):
                groups.setdefault(block.name, []).append(block)

        def loader(blocks: list[SectionBlock]) -> Callable[[], SectionImage]:
            def load() -> SectionImage:
                image = blocks[0].image
                for block in blocks[1:]:
                    image = _join(image, block.image)
                return image

            return load

        return LazyImages(
            {name: loader(blocks) for name, blocks in groups.items()},
            {name: any(b.labels_possible for b in blocks) for name, blocks in groups.items()},
        )

    def read_sections(self) -> PtxModule:
        """Read every section block's text now (raising its errors now); ``self``."""
        for block in self.sections:
            _ = block.image
        return self

    @property
    def symbols(self) -> SymbolTable:
        """What each name of the module stands for (made on first use, then kept)."""
        return symbol_table(self)

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a function, prototype, module variable, code label, or a
        parameter or non-register name declared in a function."""
        return self.symbols.declares(name)

    def variable(self, name: str) -> PtxVariable | None:
        """The module-level variable ``name``."""
        return self.symbols.variables.get(name)

    def function(self, name: str) -> PtxFunction | None:
        return self.symbols.functions.get(name)

    def function_of_label(self, label: str) -> PtxFunction | None:
        """The function whose body defines ``label``."""
        return self.symbols.code_labels.get(label)


class LazyImages(Mapping[str, SectionImage]):
    """Section images by name, each made by its loader on first access."""

    def __init__(
        self, loaders: dict[str, Callable[[], SectionImage]], labels_possible: dict[str, bool] | None = None
    ) -> None:
        self._loaders = dict(loaders)
        self._images: dict[str, SectionImage] = {}
        self._labels_possible = labels_possible or {}

    def __getitem__(self, name: str) -> SectionImage:
        image = self._images.get(name)
        if image is None:
            image = self._images[name] = self._loaders[name]()
        return image

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __repr__(self) -> str:
        return f"<LazyImages {counted(len(self._loaders), 'section')}, {len(self._images)} read>"

    def __len__(self) -> int:
        return len(self._loaders)

    def loaded(self, name: str) -> bool:
        return name in self._images

    def may_define_labels(self, name: str) -> bool:
        """Whether section ``name`` may define labels (read it only then, for a label lookup)."""
        if name in self._images:
            return bool(self._images[name].labels)
        return self._labels_possible.get(name, True)


def _join(a: SectionImage, b: SectionImage) -> SectionImage:
    a.ensure_lines()
    b.ensure_lines()
    shift = len(a.data)
    labels = dict(a.labels)
    labels.update({k: v + shift for k, v in b.labels.items()})
    return SectionImage(
        a.name,
        a.data + b.data,
        a.relocs + [r.moved(shift) for r in b.relocs],
        labels,
        fields={**a.fields, **{k + shift: v for k, v in b.fields.items()}},
        breaks=a.breaks + [o + shift for o in b.breaks],
        line_offsets=a.line_offsets + array("q", [o + shift for o in b.line_offsets]),
        line_numbers=a.line_numbers + b.line_numbers,
        wide_values={**a.wide_values, **{o + shift: v for o, v in b.wide_values.items()}},
        filename=a.filename,
    )
