"""A small, careful Itanium C++ ABI demangler for the function names PTX producers write.

:func:`demangle` turns ``_Z9clamp_addIiET_S0_S0_S0_S0_`` into
``int clamp_add<int>(int, int, int, int)``, spelled exactly as GNU ``c++filt``
(binutils 2.40) spells it: qualifiers after the type (``char const*``), ``> >``
between closing template brackets, ``std::basic_string<char, ...>`` for ``Ss``.

It covers what nvcc, clang and numba-cuda produce for device functions and
kernels: nested names (``N...E``, with ``K``/``V``/``r`` and ``&``/``&&``
qualifiers of member functions), ``std::`` and its abbreviations
(``St Sa Sb Ss Si So Sd``), every builtin type, pointers, references, const,
volatile, restrict, function and array types (``void (*)(int)``,
``int (*) [3]``), template arguments (types, ``Li3E``-style literals, packs
``J...E``), template parameters ``T_``/``T0_``, substitutions ``S_``/``S0_``,
constructors and destructors, operator names, ABI tags (``B2v1`` ->
``[abi:v1]``, numba writes them), the anonymous namespace and local names
(``_ZZ...E5s_buf`` -> ``f(int)::s_buf``).

Anything else (expressions ``X...E``, lambdas, pointers to members, decltype,
pack expansions, vendor qualifiers, clone suffixes ``.cold`` ...) makes it return
``None``: it never guesses. It does not run ``c++filt``; the tests compare it
with ``c++filt`` on every name of the fixtures.
"""

from __future__ import annotations

__all__ = ["demangle", "is_mangled"]


class _Fail(Exception):
    """The name uses something this demangler does not handle (or is not valid)."""


# --- nodes ------------------------------------------------------------------------


class _Name:
    """A (qualified) name, a builtin type, or a template argument written as text."""

    __slots__ = ("base", "ctor", "templated", "text")

    def __init__(self, text: str, base: str | None = None, templated: bool = False, ctor: bool = False) -> None:
        self.text = text
        self.base = base if base is not None else text  # unqualified name without template args
        self.templated = templated  # ends with template arguments
        self.ctor = ctor  # a constructor or destructor (no return type is mangled)


class _Qual:
    __slots__ = ("inner", "quals")

    def __init__(self, inner: object, quals: str) -> None:
        self.inner = inner
        self.quals = quals


class _Ptr:
    __slots__ = ("inner", "sym")

    def __init__(self, inner: object, sym: str) -> None:
        self.inner = inner
        self.sym = sym


class _Func:
    __slots__ = ("params", "ret", "suffix")

    def __init__(self, ret: object, params: list[object], suffix: str = "") -> None:
        self.ret = ret
        self.params = params
        self.suffix = suffix


class _Array:
    __slots__ = ("dim", "inner")

    def __init__(self, inner: object, dim: str) -> None:
        self.inner = inner
        self.dim = dim


class _Pack:
    """A template argument pack (``J...E``)."""

    __slots__ = ("args",)

    def __init__(self, args: list[object]) -> None:
        self.args = args


def _left(t: object) -> str:
    if isinstance(t, _Name):
        return t.text
    if isinstance(t, _Qual):
        if isinstance(t.inner, (_Func, _Array)):
            raise _Fail("qualified function or array type")
        return _left(t.inner) + t.quals
    if isinstance(t, _Ptr):
        inner = t.inner
        if isinstance(inner, _Func):
            return _left(inner) + "(" + t.sym
        if isinstance(inner, _Array):
            return _left(inner) + " (" + t.sym
        return _left(inner) + t.sym
    if isinstance(t, _Func):
        if _right(t.ret):
            raise _Fail("function returning a function or array pointer")
        return _str(t.ret) + " "
    if isinstance(t, _Array):
        return _left(t.inner)
    raise _Fail(f"cannot print {t!r}")


def _right(t: object) -> str:
    if isinstance(t, _Name):
        return ""
    if isinstance(t, _Qual):
        return _right(t.inner)
    if isinstance(t, _Ptr):
        return (")" if isinstance(t.inner, (_Func, _Array)) else "") + _right(t.inner)
    if isinstance(t, _Func):
        return "(" + _params(t.params) + ")" + t.suffix
    if isinstance(t, _Array):
        inner = _right(t.inner)
        if isinstance(t.inner, _Array):
            inner = inner[1:]  # "int [3][4]", not "int [3] [4]"
        return " [" + t.dim + "]" + inner
    raise _Fail(f"cannot print {t!r}")


def _str(t: object) -> str:
    if isinstance(t, _Pack):
        return ", ".join(_str(a) for a in t.args)
    return _left(t) + _right(t)


_NO_PARAMS = _Name("void")  # a parameter list that is exactly "v": printed "()"


def _params(params: list[object]) -> str:
    if len(params) == 1 and params[0] is _NO_PARAMS:
        return ""
    return ", ".join(_str(p) for p in params)


def _template_args(args: list[object]) -> str:
    if any(isinstance(a, _Pack) and not a.args for a in args) and len(args) > 1:
        raise _Fail("empty pack among other arguments")  # c++filt's spacing is irregular there
    text = ", ".join(_str(a) for a in args)
    return "<" + text + (" >" if text.endswith(">") else ">")


# --- tables -----------------------------------------------------------------------

_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
    "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long",
    "m": "unsigned long", "x": "long long", "y": "unsigned long long", "n": "__int128",
    "o": "unsigned __int128", "f": "float", "d": "double", "e": "long double", "g": "__float128",
    "z": "...",
}
_BUILTIN_D = {
    "d": "decimal64", "e": "decimal128", "f": "decimal32", "h": "half", "i": "char32_t",
    "s": "char16_t", "u": "char8_t", "a": "auto", "c": "decltype(auto)", "n": "decltype(nullptr)",
}
_INTEGER_BUILTINS = frozenset("wbcahstijlmxyno")
# Literal suffixes c++filt writes for template arguments of these types; others get a cast.
_LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}

_STD_STRING = "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"
_ABBREVIATIONS = {
    "a": ("std::allocator", "allocator"),
    "b": ("std::basic_string", "basic_string"),
    "s": (_STD_STRING, "basic_string"),
    "i": ("std::basic_istream<char, std::char_traits<char> >", "basic_istream"),
    "o": ("std::basic_ostream<char, std::char_traits<char> >", "basic_ostream"),
    "d": ("std::basic_iostream<char, std::char_traits<char> >", "basic_iostream"),
}

_OPERATORS = {
    "nw": "new", "na": "new[]", "dl": "delete", "da": "delete[]", "ps": "+", "ng": "-", "ad": "&",
    "de": "*", "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&", "or": "|",
    "eo": "^", "aS": "=", "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=", "aN": "&=",
    "oR": "|=", "eO": "^=", "ls": "<<", "rs": ">>", "lS": "<<=", "rS": ">>=", "eq": "==", "ne": "!=",
    "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "ss": "<=>", "nt": "!", "aa": "&&", "oo": "||",
    "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->", "cl": "()", "ix": "[]", "qu": "?",
}
_WORD_OPERATORS = {"nw", "na", "dl", "da"}

_SEQ_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --- the parser ---------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.pos = 0
        self.subs: list[object] = []
        self.template_params: list[object] | None = None

    # -- primitives
    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.s[i] if i < len(self.s) else ""

    def eat(self, prefix: str) -> bool:
        if self.s.startswith(prefix, self.pos):
            self.pos += len(prefix)
            return True
        return False

    def expect(self, prefix: str) -> None:
        if not self.eat(prefix):
            raise _Fail(f"expected {prefix!r} at {self.pos}")

    def number(self) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if start == self.pos:
            raise _Fail(f"expected a number at {start}")
        return int(self.s[start : self.pos])

    def seq_id(self) -> int:
        """``S<seq-id>_`` / ``T<seq-id>_``: empty means 0, else base-36 plus one."""
        if self.eat("_"):
            return 0
        value = 0
        start = self.pos
        while self.peek() and self.peek() in _SEQ_DIGITS:
            value = value * 36 + _SEQ_DIGITS.index(self.peek())
            self.pos += 1
        if start == self.pos:
            raise _Fail("bad sequence id")
        self.expect("_")
        return value + 1

    # -- encodings
    def encoding(self, top: bool) -> str:
        saved = self.template_params
        self.template_params = None
        name, cv = self.name()
        if not self.peek() or self.peek() == "E" and not top:
            if cv:
                raise _Fail("qualifiers on a data name")
            self.template_params = saved
            return name.text
        if name.templated:
            self.template_params = self._last_template_args
        else:
            self.template_params = None
        ret: object | None = None
        if name.templated and not name.ctor:
            ret = self.type()
        params = self.parameter_types(stop=("E", "."))
        if not params:
            raise _Fail("function without parameter types")
        text = name.text + "(" + _params(params) + ")" + cv
        if ret is not None and top:  # c++filt leaves it out inside a local name
            if _right(ret):
                raise _Fail("return type needs declarator syntax")
            text = _str(ret) + " " + text
        self.template_params = saved
        return text

    # -- names
    _last_template_args: list[object] | None = None

    def name(self) -> tuple[_Name, str]:
        """A <name>; returns it and the member-function qualifiers of a nested name."""
        c = self.peek()
        if c == "N":
            return self.nested_name()
        if c == "Z":
            return self.local_name(), ""
        if c == "S" and self.peek(1) != "t":
            sub = self.substitution()
            if self.peek() != "I":
                raise _Fail("a substitution as a name must be a template")
            return self.with_template_args(sub, record=True), ""
        name = self.unscoped_name()
        if self.peek() == "I":
            self.subs.append(name)
            return self.with_template_args(name, record=True), ""
        return name, ""

    def with_template_args(self, name: object, record: bool) -> _Name:
        if not isinstance(name, _Name):
            raise _Fail("template arguments on a non-name")
        args = self.template_args()
        if record:
            self._last_template_args = args
        sep = " " if name.text.endswith("<") else ""  # "operator< <int>"
        return _Name(name.text + sep + _template_args(args), name.base, templated=True, ctor=name.ctor)

    def unscoped_name(self) -> _Name:
        if self.eat("St"):
            n = self.unqualified_name(None)
            return _Name("std::" + n.text, n.base)
        return self.unqualified_name(None)

    def nested_name(self) -> tuple[_Name, str]:
        self.expect("N")
        cv = self.cv_qualifiers()
        if self.eat("R"):
            cv += " &"
        elif self.eat("O"):
            cv += " &&"
        so_far: _Name | None = None
        if self.eat("St"):
            so_far = _Name("std")
        count = 0
        # c++filt names a constructor after the last source name it read, wherever that
        # was: only accept one right after a source name (or std:: abbreviation) of this name.
        ctor_ok = False
        while not self.eat("E"):
            if not self.peek():
                raise _Fail("unterminated nested name")
            c = self.peek()
            if c == "I":
                if so_far is None or (count == 0 and so_far.text == "std"):
                    raise _Fail("template arguments without a name")
                so_far = self.with_template_args(so_far, record=True)
                self.subs.append(so_far)
                count += 1
                continue
            if c == "S" and self.peek(1) != "t":
                if so_far is not None:
                    raise _Fail("substitution inside a nested name")
                ctor_ok = self.peek(1) in _ABBREVIATIONS
                sub = self.substitution()
                if not isinstance(sub, _Name):
                    raise _Fail("a type substitution as a name prefix")
                so_far = sub
                continue
            if c in "TM" or (c == "C" and self.peek(1) == "I") or (c == "D" and self.peek(1) not in "01245"):
                raise _Fail("unsupported nested-name component")
            if (c == "C" or c == "D") and not ctor_ok:
                raise _Fail("constructor or destructor not right after its class name")
            comp = self.unqualified_name(so_far)
            ctor_ok = not comp.ctor and bool(comp.base) and comp.text != "(anonymous namespace)"
            if so_far is None:
                so_far = comp
            else:
                so_far = _Name(so_far.text + "::" + comp.text, comp.base, ctor=comp.ctor)
            self.subs.append(so_far)
            count += 1
        if so_far is None or count == 0:
            raise _Fail("empty nested name")
        self.subs.pop()  # the whole name is not a substitution candidate
        return so_far, cv

    def local_name(self) -> _Name:
        self.expect("Z")
        function = self.encoding(top=False)
        self.expect("E")
        if self.peek() in ("s", "d"):
            raise _Fail("string literal or default argument in a local name")
        entity, cv = self.name()
        if cv:
            raise _Fail("qualified local entity")
        # discriminator: _ <number> or __ <number> _ (read as c++filt reads it)
        if self.eat("_"):
            long_form = self.eat("_")
            if self.number() >= 10 and long_form:
                self.expect("_")
        return _Name(function + "::" + entity.text, entity.base, entity.templated, entity.ctor)

    def unqualified_name(self, scope: _Name | None) -> _Name:
        if self.eat("L") and not self.peek().isdigit():  # internal-linkage marker (GCC): not printed
            raise _Fail("L before something other than a source name")
        c = self.peek()
        if c.isdigit():
            n = self.source_name()
            text = "(anonymous namespace)" if _is_anonymous_namespace(n) else n
            name = _Name(text)
        elif c == "C" and self.peek(1) in "12345":
            if scope is None or not scope.base or scope.base == "std":
                raise _Fail("constructor outside a class")
            self.pos += 2
            name = _Name(scope.base, ctor=True)
        elif c == "D" and self.peek(1) in "01245":
            if scope is None or not scope.base or scope.base == "std":
                raise _Fail("destructor outside a class")
            self.pos += 2
            name = _Name("~" + scope.base, ctor=True)
        elif c.islower() and self.s[self.pos : self.pos + 2] in _OPERATORS:
            code = self.s[self.pos : self.pos + 2]
            self.pos += 2
            op = _OPERATORS[code]
            name = _Name("operator " + op if code in _WORD_OPERATORS else "operator" + op, base="")
        else:
            raise _Fail(f"unsupported unqualified name at {self.pos}")
        tags = ""
        while self.eat("B"):
            tags += "[abi:" + self.source_name() + "]"
        if tags:
            name = _Name(name.text + tags, name.base, name.templated, name.ctor)
        return name

    def source_name(self) -> str:
        length = self.number()
        if length <= 0 or self.pos + length > len(self.s):
            raise _Fail("bad source name length")
        text = self.s[self.pos : self.pos + length]
        self.pos += length
        return text

    def substitution(self) -> object:
        self.expect("S")
        c = self.peek()
        if c in _ABBREVIATIONS:
            self.pos += 1
            text, base = _ABBREVIATIONS[c]
            return _Name(text, base)
        index = self.seq_id()
        if index >= len(self.subs):
            raise _Fail("substitution out of range")
        return self.subs[index]

    def cv_qualifiers(self) -> str:
        """``r``, ``V``, ``K`` in any order; c++filt prints them last to first."""
        seen: list[str] = []
        while self.peek() in ("r", "V", "K") and self.peek():
            q = {"r": " restrict", "V": " volatile", "K": " const"}[self.peek()]
            if q in seen:
                raise _Fail("repeated qualifier")
            seen.append(q)
            self.pos += 1
        return "".join(reversed(seen))

    # -- template arguments
    def template_args(self) -> list[object]:
        self.expect("I")
        args: list[object] = []
        while not self.eat("E"):
            if not self.peek():
                raise _Fail("unterminated template arguments")
            args.append(self.template_arg())
        return args

    def template_arg(self) -> object:
        c = self.peek()
        if c == "L":
            return self.literal()
        if c == "J":
            self.pos += 1
            items: list[object] = []
            while not self.eat("E"):
                if not self.peek():
                    raise _Fail("unterminated pack")
                item = self.template_arg()
                if isinstance(item, _Pack):
                    raise _Fail("pack inside a pack")
                items.append(item)
            return _Pack(items)
        if c == "X":
            # Only the simplest expression: a template parameter (V<T, N> -> "XT0_E").
            self.pos += 1
            if not self.eat("T"):
                raise _Fail("expression template argument")
            index = self.seq_id()
            self.expect("E")
            if self.template_params is None or index >= len(self.template_params):
                raise _Fail("template parameter out of range")
            value = self.template_params[index]
            if isinstance(value, _Pack):
                raise _Fail("pack in an expression")
            return value
        return self.type()

    def literal(self) -> _Name:
        self.expect("L")
        code = self.peek()
        if code in _INTEGER_BUILTINS:
            self.pos += 1
            type_name = _BUILTIN[code]
        elif code.isdigit() or code in ("N", "S"):
            t = self.type()  # an enumeration
            if not isinstance(t, _Name):
                raise _Fail("literal of a compound type")
            code = ""
            type_name = t.text
        else:
            raise _Fail("literal of an unsupported type (floating point, external name ...)")
        negative = self.eat("n")
        start = self.pos
        self.number()
        value = self.s[start : self.pos]  # c++filt keeps the digits as written (leading zeros too)
        self.expect("E")
        if negative:
            value = "-" + value
        if code == "b" and value in ("0", "1"):
            return _Name("true" if value == "1" else "false")
        if code in _LITERAL_SUFFIX:
            return _Name(value + _LITERAL_SUFFIX[code])
        return _Name("(" + type_name + ")" + value)

    # -- types
    def type(self) -> object:
        c = self.peek()
        if c in _BUILTIN:
            self.pos += 1
            return _Name(_BUILTIN[c])
        if c == "D":
            d = self.peek(1)
            if d in _BUILTIN_D:
                self.pos += 2
                return _Name(_BUILTIN_D[d])
            if d == "F":
                self.pos += 2
                bits = self.number()
                self.expect("_")
                if bits not in (16, 32, 64, 128):
                    raise _Fail("unusual _FloatN")
                return _Name(f"_Float{bits}")
            raise _Fail("unsupported D type")
        if c in "rVK":
            quals = self.cv_qualifiers()
            inner = self.type()
            if isinstance(inner, _Qual) or (isinstance(inner, _Ptr) and inner.sym != "*"):
                raise _Fail("qualifiers on a qualified type or a reference")
            result: object = _Qual(inner, quals)
        elif c in "PRO":
            self.pos += 1
            from_param = self.peek() == "T"
            inner = self.type()
            sym = {"P": "*", "R": "&", "O": "&&"}[c]
            if isinstance(inner, _Qual) and isinstance(inner.inner, _Ptr) and inner.inner.sym != "*":
                raise _Fail("qualified reference")
            if isinstance(inner, _Ptr) and inner.sym != "*":
                if sym == "*" or not from_param:
                    raise _Fail("pointer or reference to a reference")
                # reference collapsing (a T_ or substitution that is itself a reference)
                result = _Ptr(inner.inner, "&" if "&" in (sym, inner.sym) else "&&")
            else:
                result = _Ptr(inner, sym)
        elif c == "F":
            result = self.function_type()
        elif c == "A":
            result = self.array_type()
        elif c == "T":
            self.pos += 1
            index = self.seq_id()
            if self.template_params is None or index >= len(self.template_params):
                raise _Fail("template parameter out of range")
            result = self.template_params[index]
            if isinstance(result, _Pack):
                raise _Fail("template parameter pack used as a type")
            if self.peek() == "I":
                raise _Fail("template template parameter")
        elif c == "S":
            if self.peek(1) == "t":
                result, _ = self.name()
            else:
                sub = self.substitution()
                if self.peek() != "I":
                    return sub
                result = self.with_template_args(sub, record=False)
        elif c == "N" or c == "Z" or c.isdigit():
            name, cv = self.name()
            if cv:
                raise _Fail("qualified nested name as a type")
            result = name
        else:
            raise _Fail(f"unsupported type at {self.pos}")
        self.subs.append(result)
        return result

    def parameter_types(self, stop: tuple[str, ...]) -> list[object]:
        if self.peek() == "v" and (self.pos + 1 == len(self.s) or self.s[self.pos + 1] in stop):
            self.pos += 1
            return [_NO_PARAMS]
        params: list[object] = []
        while self.peek() and self.peek() not in stop:
            params.append(self.type())
        return params

    def function_type(self) -> _Func:
        self.expect("F")
        self.eat("Y")
        ret = self.type()
        for end, suffix in (("vE", ""), ("vRE", " &"), ("vOE", " &&")):
            if self.s.startswith(end, self.pos):
                self.pos += len(end)
                return _Func(ret, [_NO_PARAMS], suffix)
        params: list[object] = []
        suffix = ""
        while not self.eat("E"):
            if self.s.startswith("RE", self.pos):
                self.pos += 2
                suffix = " &"
                break
            if self.s.startswith("OE", self.pos):
                self.pos += 2
                suffix = " &&"
                break
            if not self.peek():
                raise _Fail("unterminated function type")
            params.append(self.type())
        if not params:
            raise _Fail("function type without parameters")
        return _Func(ret, params, suffix)

    def array_type(self) -> _Array:
        self.expect("A")
        dim = ""
        if self.peek().isdigit():
            start = self.pos
            self.number()
            dim = self.s[start : self.pos]  # as written, like c++filt
        elif self.peek() != "_":
            raise _Fail("array bound expression")
        self.expect("_")
        return _Array(self.type(), dim)


def _is_anonymous_namespace(name: str) -> bool:
    return name.startswith("_GLOBAL_") and len(name) > 9 and name[8] in "._$" and name[9] == "N"


def is_mangled(name: str) -> bool:
    """Whether ``name`` looks like an Itanium C++ mangled name (``_Z...``)."""
    return name.startswith("_Z") and len(name) > 2


def demangle(name: str) -> str | None:
    """The C++ name ``c++filt`` prints for ``name``, or None when ``name`` is not an
    Itanium-mangled name this demangler fully understands."""
    if not is_mangled(name) or not name.isascii():
        return None
    parser = _Parser(name)
    parser.pos = 2
    try:
        text = parser.encoding(top=True)
    except (_Fail, RecursionError, ValueError, IndexError):
        return None
    if parser.pos != len(name):
        return None
    return text
