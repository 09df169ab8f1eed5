"""TLC's printed values, parsed into Python values.

TLC prints the states of a counterexample as TLA+ expressions: ``/\\ var = value`` lines
whose values are integers, strings, booleans, model values (bare identifiers such as
``c1``), records ``[a |-> 1, b |-> "x"]``, functions ``(c1 :> 0 @@ c2 :> 1)``, sets
``{1, 2}`` and sequences ``<<1, 2>>``. This module turns such text into Python values:

=================  =========================================
TLA+               Python
=================  =========================================
integer            ``int``
string             ``str``
TRUE / FALSE       ``bool``
model value        :class:`ModelValue` (a ``str`` subclass)
record             ``dict[str, Value]`` (:class:`Record`)
function           :class:`Function` (a ``dict`` of keys to values)
set                ``frozenset`` (:class:`TlaSet` keeps order for printing)
sequence / tuple   ``tuple``
=================  =========================================

The grammar is the fragment TLC prints for finite values; anything else is a
:class:`ValueSyntaxError` naming the offset.
"""

from __future__ import annotations

import re
from typing import TypeAlias


class ValueSyntaxError(ValueError):
    """Text that is not a TLC value, with the offset where parsing stopped."""

    def __init__(self, message: str, text: str, offset: int) -> None:
        snippet = text[max(0, offset - 30) : offset + 30].replace("\n", " ")
        super().__init__(f"{message} at offset {offset}: ...{snippet}...")
        self.offset = offset


class ModelValue(str):
    """A TLC model value (an uninterpreted constant such as ``c1`` or ``NoMember``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ModelValue({str(self)!r})"


class Record(dict[str, "Value"]):
    """A TLA+ record ``[field |-> value, ...]`` (hashable, so that sets can hold it; do
    not mutate one that is in a set)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((k, repr(v)) for k, v in self.items())))


class Function(dict["Value", "Value"]):
    """A TLA+ function printed as ``(k1 :> v1 @@ k2 :> v2)`` (hashable, like Record)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((repr(k), repr(v)) for k, v in self.items())))


class TlaSet(frozenset["Value"]):
    """A TLA+ set; a frozenset (so it compares like one)."""


Value: TypeAlias = (
    "int | str | bool | ModelValue | Record | Function | frozenset[Value] | tuple[Value, ...]"
)

_TOKEN = re.compile(
    r"""
    \s*(?:
      (?P<int>-?\d+)
    | (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<punct>\|->|:>|@@|<<|>>|[\[\]{}(),])
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, message: str) -> ValueSyntaxError:
        return ValueSyntaxError(message, self.text, self.pos)

    def peek(self) -> tuple[str, str] | None:
        m = _TOKEN.match(self.text, self.pos)
        if m is None or m.lastgroup is None:
            return None
        return m.lastgroup, m.group(m.lastgroup)

    def take(self) -> tuple[str, str]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None or m.lastgroup is None:
            raise self.error("unexpected character")
        self.pos = m.end()
        return m.lastgroup, m.group(m.lastgroup)

    def expect(self, punct: str) -> None:
        kind, tok = self.take()
        if kind != "punct" or tok != punct:
            raise self.error(f"expected {punct!r}, found {tok!r}")

    def at(self, punct: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "punct" and tok[1] == punct

    def value(self) -> Value:
        kind, tok = self.take()
        if kind == "int":
            return int(tok)
        if kind == "str":
            return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
        if kind == "ident":
            if tok == "TRUE":
                return True
            if tok == "FALSE":
                return False
            return ModelValue(tok)
        if tok == "[":
            return self.record()
        if tok == "{":
            return TlaSet(self.items("}"))
        if tok == "<<":
            return tuple(self.items(">>"))
        if tok == "(":
            return self.function()
        raise self.error(f"unexpected {tok!r}")

    def items(self, close: str) -> list[Value]:
        out: list[Value] = []
        if self.at(close):
            self.take()
            return out
        while True:
            out.append(self.value())
            if self.at(","):
                self.take()
                continue
            self.expect(close)
            return out

    def record(self) -> Record:
        rec = Record()
        if self.at("]"):
            self.take()
            return rec
        while True:
            kind, name = self.take()
            if kind != "ident":
                raise self.error(f"expected a field name, found {name!r}")
            self.expect("|->")
            rec[name] = self.value()
            if self.at(","):
                self.take()
                continue
            self.expect("]")
            return rec

    def function(self) -> Function:
        fn = Function()
        while True:
            key = self.value()
            self.expect(":>")
            fn[key] = self.value()
            if self.at("@@"):
                self.take()
                continue
            self.expect(")")
            return fn


def parse_value(text: str) -> Value:
    """The value TLC printed as ``text``."""
    parser = _Parser(text)
    value = parser.value()
    if parser.text[parser.pos :].strip():
        raise parser.error("text after the value")
    return value


_ASSIGNMENT = re.compile(r"^/\\ ([A-Za-z_][A-Za-z0-9_]*) = ", re.MULTILINE)


def parse_state(text: str) -> dict[str, Value]:
    """The variables of one printed state: lines ``/\\ name = value`` (values may span
    lines). A state of a single variable may be printed without the ``/\\``."""
    starts = list(_ASSIGNMENT.finditer(text))
    if not starts:
        name, sep, rest = text.partition(" = ")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            raise ValueSyntaxError("no variable assignments", text, 0)
        return {name.strip(): parse_value(rest)}
    state: dict[str, Value] = {}
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        state[m.group(1)] = parse_value(text[m.end() : end])
    return state


def to_json(value: Value) -> object:
    """``value`` as plain JSON data (sets and sequences as lists, functions as lists of
    ``[key, value]`` pairs, model values as strings)."""
    if isinstance(value, Function):
        return [[to_json(k), to_json(v)] for k, v in value.items()]
    if isinstance(value, Record):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, frozenset):
        return sorted((to_json(v) for v in value), key=repr)
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    return value
