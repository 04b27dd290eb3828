"""DIEs made by the builder: attributes kept as a shared shape and a tuple of values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import BuilderError
from .forms import AUTO_FORM, value_kind
from .model import DIE, Attribute, cached_at_code, cached_form_code

__all__ = ["BuiltDIE", "shape_of"]

_ATTRIBUTES_SLOT = DIE.__dict__["attributes"]  # DIE's own storage, under BuiltDIE's property


def _built_spec(name: int, value: Any, form: str | int | None) -> tuple[int, int] | None:
    """The ``(name, form)`` spec of a built attribute; None for a value of no stated form
    that the compact form does not know."""
    if form is None:
        kind = value_kind(name, value)
        if kind is None:
            return None
    else:
        kind = form if type(form) is int else cached_form_code(form) if isinstance(form, str) else int(form)
    return (name if type(name) is int else int(name), kind)


def shape_of(specs: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The one shared tuple of these ``(name, form)`` specs (DIEs of a shape share it)."""
    found = _SHAPES.get(specs)
    if found is None:
        found = _SHAPES[specs] = tuple(_SPECS.setdefault(spec, spec) for spec in specs)
    return found


_SPECS: dict[tuple[int, int], tuple[int, int]] = {}
_SHAPES: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = {}
_NO_SPECS: tuple[tuple[int, int], ...] = ()


class BuiltDIE(DIE):
    """A DIE made by :class:`~ptxdwarf.DebugInfoBuilder`.

    It keeps its attributes as two tuples: ``specs``, the ``(name, form)`` pairs
    (shared by every DIE of that shape, see :func:`shape_of`; a form left to the
    encoder is held as the value's kind, see :func:`~.forms.value_kind`), and ``values``, each
    of its spec's kind. This is the shape the encoder writes from, taking the kinds at their word. :attr:`attributes` turns them into
    :class:`Attribute` objects on first use, after which the DIE is an ordinary one.
    (Builder-made modules hold hundreds of thousands of DIEs; an object per attribute
    made them several times slower to build and encode.)
    """

    __slots__ = ("specs", "values")

    def __init__(
        self, tag: int, specs: tuple[tuple[int, int], ...] = _NO_SPECS, values: tuple[Any, ...] = ()
    ) -> None:
        self.tag = tag if type(tag) is int else int(tag)  # an IntEnum hashes in Python, slowly
        self.specs: tuple[tuple[int, int], ...] | None = specs
        self.values: tuple[Any, ...] = values
        self.children = []
        self.offset = -1
        self.size = -1
        self.abbrev_code = None
        self.has_children = False
        self.parent = None

    @classmethod
    def make(cls, tag: int, items: Sequence[tuple[int, Any, str | int | None]]) -> BuiltDIE:
        """A DIE with the attributes ``(name, value, form)`` (form None: the encoder's choice)."""
        specs = []
        for name, value, form in items:
            spec = _built_spec(name, value, form)
            if spec is None:  # a value the compact form does not know
                die = cls(tag)
                for item in items:
                    die.put(*item)
                return die
            specs.append(spec)
        return cls(tag, shape_of(tuple(specs)), tuple([item[1] for item in items]))

    @property
    def attributes(self) -> list[Attribute]:
        specs = self.specs
        if specs is not None:
            if len(specs) != len(self.values):
                raise BuilderError(
                    f"{self.describe()}: {len(specs)} attribute specs but {len(self.values)} values"
                )
            attrs = [
                Attribute(n, None if f < 0 or f & AUTO_FORM else f, v)
                for (n, f), v in zip(specs, self.values, strict=False)
            ]
            _ATTRIBUTES_SLOT.__set__(self, attrs)
            self.specs = None
            self.values = ()
            return attrs
        return _ATTRIBUTES_SLOT.__get__(self, BuiltDIE)  # type: ignore[no-any-return]

    @attributes.setter
    def attributes(self, attrs: list[Attribute]) -> None:
        _ATTRIBUTES_SLOT.__set__(self, attrs)
        self.specs = None
        self.values = ()

    def put(
        self, name: int, value: Any, form: str | int | None = None, *, position: int | None = None
    ) -> None:
        """Add an attribute at the end (or at ``position``); ``form`` None: the encoder's choice.

        Unlike :meth:`DIE.add`, it returns nothing: it keeps the DIE compact."""
        specs = self.specs
        spec = _built_spec(name, value, form)
        if specs is not None and spec is not None:
            if position is None:
                position = len(specs)
            self.specs = shape_of((*specs[:position], spec, *specs[position:]))
            self.values = (*self.values[:position], value, *self.values[position:])
            return
        if form is not None and type(form) is not int:
            form = cached_form_code(form) if isinstance(form, str) else int(form)
        attr = Attribute(int(name), form, value)
        if position is None:
            self.attributes.append(attr)
        else:
            self.attributes.insert(position, attr)

    def get(self, name: str | int, default: Any = None) -> Any:
        specs = self.specs
        if specs is None:
            return DIE.get(self, name, default)
        code = cached_at_code(name)
        for (n, _), v in zip(specs, self.values, strict=False):
            if n == code:
                return v
        return default

    def __contains__(self, name: str | int) -> bool:
        specs = self.specs
        if specs is None:
            return DIE.__contains__(self, name)
        code = cached_at_code(name)
        return any(n == code for n, _ in specs)

    def without(self, names: tuple[int, ...]) -> None:
        """Drop the attributes ``names``."""
        specs = self.specs
        if specs is None:
            self.attributes = [a for a in self.attributes if a.name not in names]
            return
        keep = [i for i, (n, _) in enumerate(specs) if n not in names]
        if len(keep) != len(specs):
            values = self.values
            self.specs = shape_of(tuple(specs[i] for i in keep))
            self.values = tuple(values[i] for i in keep)
