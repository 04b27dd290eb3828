"""DWARF: constants, record schemas, forms, section images, the DIE model, decoding, encoding
and location expressions. Imports nothing from the PTX or CUDA layers.

The codec's types are here: constants (:class:`TAG`, :class:`AT`, :class:`FORM`, ...), section
images with their symbolic relocations, the model's records, :func:`decode_sections` and
:func:`encode_sections`, and location expressions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports

# The public names, imported on first use (see ptxdwarf._exports).
if TYPE_CHECKING:
    from .built import BuiltDIE as BuiltDIE
    from .constants import AT as AT
    from .constants import ATE as ATE
    from .constants import FORM as FORM
    from .constants import LANG as LANG
    from .constants import OP as OP
    from .constants import TAG as TAG
    from .constants import AddressClass as AddressClass
    from .constants import address_class_name as address_class_name
    from .decode import decode_sections as decode_sections
    from .encode import Encoded as Encoded
    from .encode import EncodeOptions as EncodeOptions
    from .encode import encode_sections as encode_sections
    from .expr import ExpressionError as ExpressionError
    from .expr import Op as Op
    from .expr import decode_expression as decode_expression
    from .expr import encode_expression as encode_expression
    from .expr import register_name as register_name
    from .expr import register_number as register_number
    from .image import Block as Block
    from .image import Reloc as Reloc
    from .image import SectionImage as SectionImage
    from .image import Symbol as Symbol
    from .model import AbbrevDecl as AbbrevDecl
    from .model import AbbrevTable as AbbrevTable
    from .model import ArangeSet as ArangeSet
    from .model import LocationList as LocationList
    from .model import NameSet as NameSet
    from .model import RangeList as RangeList
    from .model import StringTable as StringTable

__all__: list[str]  # given by __getattr__ (read from the block above when first asked for)
__getattr__, __dir__ = lazy_exports(__name__, __file__, globals())
