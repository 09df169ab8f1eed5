"""Columnar Parquet written from trace events a column at a time.

:func:`groupspec.trace.columnar.lines_to_table` makes a batch's table a row at a time: a
dict per event and per nested value, which ``pa.array`` then converts back into columns.
:func:`events_table` makes the same table from the event objects a column at a time: the
events are put in order of their kind, API and record type, so that each struct column
(``req_JoinGroup``, ``rec_GroupMetadataValue``) is one run of values between nulls; each
column's values are read off the objects with one getter per field (``map`` in C) and
converted by one ``pa.array`` per leaf column (nested values the same way, their children
flattened); and one ``take`` puts the rows back in line order.

The values and types are the layout's (:mod:`groupspec.trace.columnar`, whose module
docstring documents it): the Arrow type of every column is the layout's and each leaf
value is converted by the layout's own encoder of its type (:attr:`Conv.encode`), so
only the way the columns are assembled differs; tests/test_generate_fast.py compares the
two writers on events of every kind, API and record type.

It holds for events whose canonical JSON line decodes back to the same event (every event
a writer of this package makes; not, for instance, an int in a float field): for those
:func:`groupspec.trace.columnar.write_events` stores no raw text either.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, chain
from operator import attrgetter, itemgetter
from typing import Any, Union, cast, get_args, get_origin

from groupspec.trace.codec import type_hints
from groupspec.trace.columnar import (
    BATCH_ROWS,
    FLAT,
    _identity,
    canonical,
    conv_for,
    layout,
    lines_to_table,
    write_tables,
)
from groupspec.trace.events import (
    APIS,
    KINDS,
    RECORD_TYPES,
    Event,
    RecordEvent,
    WireExchange,
    group_getter,
)

#: values (None for a null) -> an Arrow array of them
Build = Callable[[Sequence[Any]], Any]


def _pa() -> Any:
    import pyarrow as pa

    return pa


@dataclasses.dataclass(frozen=True)
class Column:
    """How one column is made: its Arrow type and the builder of an array of its values."""

    type: Any
    build: Build


def column_for(tp: Any) -> Column:
    """The :class:`Column` of Python type ``tp`` (cached): :func:`groupspec.trace.columnar.conv_for`'s
    Arrow type, built from lists of values instead of a value at a time."""
    got = _COLUMNS.get(tp)
    if got is None:
        got = _COLUMNS[tp] = _column(tp)
    return got


_COLUMNS: dict[Any, Column] = {}


def _column(tp: Any) -> Column:
    conv = conv_for(tp)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and type(None) in get_args(tp):
            # every builder takes None for a null
            return _checked(column_for(args[0]), conv.type)
        return _leaf(conv.type, conv.encode)
    if origin is tuple:
        items = get_args(tp)
        if len(items) == 2 and items[1] is Ellipsis:
            return _checked(_list(conv.type, column_for(items[0])), conv.type)
        return _checked(_fixed(conv.type, [column_for(a) for a in items]), conv.type)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and _pa().types.is_struct(conv.type):
        return struct_column(tp, conv.type)
    return _leaf(conv.type, conv.encode)


def _checked(col: Column, arrow_type: Any) -> Column:
    if col.type != arrow_type:
        raise TypeError(f"column type {col.type} is not the layout's {arrow_type}")
    return col


def _leaf(arrow_type: Any, encode: Callable[[Any], Any]) -> Column:
    pa = _pa()
    if encode is _identity:  # the values are what pa.array takes
        return Column(arrow_type, lambda values: pa.array(values, arrow_type))

    def build(values: Sequence[Any]) -> Any:
        if None in values:
            return pa.array([None if v is None else encode(v) for v in values], arrow_type)
        return pa.array(list(map(encode, values)), arrow_type)

    return Column(arrow_type, build)


def _nulls_at(values: Sequence[Any], placeholder: Any) -> tuple[Sequence[Any], Any]:
    """``values`` with ``placeholder`` for each None, and the null mask (None: no nulls)."""
    if not any(v is None for v in values):
        return values, None
    mask = _pa().array([v is None for v in values], _pa().bool_())
    return [placeholder if v is None else v for v in values], mask


def _struct(arrow_type: Any, children: list[Column], getters: list[Callable[[Any], Any]],
            placeholder: Any) -> Column:
    """A struct whose child ``i`` holds ``getters[i]`` of each value."""
    pa = _pa()
    fields = list(arrow_type)
    for f, c in zip(fields, children, strict=True):
        _checked(c, f.type)
    if not fields:
        return Column(arrow_type, lambda values: pa.array([None if v is None else {} for v in values], arrow_type))
    parts = list(zip(children, getters, strict=True))

    def build(values: Sequence[Any]) -> Any:
        values, mask = _nulls_at(values, placeholder)
        return pa.StructArray.from_arrays([c.build(list(map(get, values))) for c, get in parts],
                                          fields=fields, mask=mask)

    return Column(arrow_type, build)


def struct_column(cls: type, arrow_type: Any) -> Column:
    """The :class:`Column` of dataclass ``cls`` held as struct ``arrow_type``, whose fields
    are those of ``cls`` it keeps (all of them, or all but a few as
    :func:`groupspec.trace.columnar.struct_conv` leaves out)."""
    hints = type_hints(cls)
    names = [f.name for f in arrow_type]
    placeholder = types.SimpleNamespace(**dict.fromkeys(names))
    return _struct(arrow_type, [column_for(hints[n]) for n in names], [attrgetter(n) for n in names], placeholder)


def _fixed(arrow_type: Any, items: list[Column]) -> Column:
    """A fixed tuple as the struct ``f0, f1, ...`` of its items."""
    return _struct(arrow_type, items, [itemgetter(i) for i in range(len(items))], (None,) * len(items))


def _list(arrow_type: Any, item: Column) -> Column:
    pa = _pa()

    def build(values: Sequence[Any]) -> Any:
        values, mask = _nulls_at(values, ())
        offsets = pa.array(list(accumulate(map(len, values), initial=0)), pa.int32())
        return pa.ListArray.from_arrays(offsets, item.build(list(chain.from_iterable(values))),
                                        type=arrow_type, mask=mask)

    return Column(arrow_type, build)


# ---------------------------------------------------------------------------------------
# a batch's table


class _Plan:
    """The columns of the layout that events fill, and how (built once)."""

    def __init__(self) -> None:
        lay = layout()
        self.schema = lay.schema
        types_ = {f.name: f.type for f in lay.schema}
        self.requests = {api: _checked(column_for(req), types_[f"req_{api}"]) for api, (_, req, _) in APIS.items()}
        self.responses = {api: _checked(column_for(resp), types_[f"resp_{api}"])
                          for api, (_, _, resp) in APIS.items()}
        self.others = {kind: struct_column(cls, types_[f"ev_{kind}"])
                       for cls, kind in KINDS.items() if cls is not WireExchange}
        self.records = {name: _checked(column_for(cls), types_[f"rec_{name}"]) for name, cls in RECORD_TYPES.items()}
        #: the flat columns read off an event's attributes, and whether they are floats
        self.attrs = [(name, tp is float) for name, tp in FLAT if name not in ("kind", "group_id")]
        self.getters: dict[type, dict[str, Callable[[Any], Any]]] = {}
        #: the order of the kinds in a batch laid out by kind
        self.kind_order = {cls: i for i, cls in enumerate(KINDS)}
        #: event class -> the getter of its events' group (None: no group)
        self.group_getters = {cls: group_getter(cls) for cls in KINDS}

    def getters_of(self, cls: type, first: Any) -> dict[str, Callable[[Any], Any]]:
        """The flat columns an event of class ``cls`` has an attribute for (those
        ``getattr(event, name, None)`` finds), with the getter of each."""
        got = self.getters.get(cls)
        if got is None:
            got = self.getters[cls] = {n: attrgetter(n) for n, _ in self.attrs if hasattr(first, n)}
        return got


_PLAN: list[_Plan] = []


def _plan() -> _Plan:
    if not _PLAN:
        _PLAN.append(_Plan())
    return _PLAN[0]


def _floats(values: Iterable[Any]) -> list[Any]:
    return [None if v is None else float(v) for v in values]


def events_table(events: Sequence[Event], first_line: int = 1) -> Any:
    """The columnar table of ``events`` as lines ``first_line``, ``first_line + 1``, ...:
    what :func:`groupspec.trace.columnar.lines_to_table` makes of them (each its canonical
    line, typed columns only), column by column."""
    pa = _pa()
    plan = _plan()
    n = len(events)
    # the events by class and API or record type, each group's in line order, the groups
    # of one class next to one another (the record types share ``ev_record``)
    groups: dict[tuple[type, str], list[int]] = {}
    for i, e in enumerate(events):
        cls = type(e)
        key = (cls, e.api if cls is WireExchange  # type: ignore[union-attr]
               else type(e.record).__name__ if cls is RecordEvent else "")  # type: ignore[union-attr]
        got = groups.get(key)
        if got is None:
            groups[key] = [i]
        else:
            got.append(i)
    laid = sorted(groups.items(), key=lambda kv: (plan.kind_order[kv[0][0]], kv[0][1]))
    flat: dict[str, list[Any]] = {name: [] for name, _ in FLAT}
    runs: dict[str, list[Any]] = {}  # struct column -> [first row, dense arrays...]
    start = 0
    for (cls, sub), rows in laid:
        evs = [events[i] for i in rows]
        k = len(evs)
        kind = KINDS[cls]
        flat["kind"] += [kind] * k
        get_group = plan.group_getters[cls]  # group_of, one getter per class
        flat["group_id"] += [None] * k if get_group is None else map(get_group, evs)
        getters = plan.getters_of(cls, evs[0])
        for name, is_float in plan.attrs:
            get = getters.get(name)
            if cls is RecordEvent and name == "record_type":
                flat[name] += [sub] * k
            elif get is None:
                flat[name] += [None] * k
            else:
                flat[name] += _floats(map(get, evs)) if is_float else map(get, evs)
        if cls is WireExchange:
            exchanges = cast(list[WireExchange], evs)
            runs[f"req_{sub}"] = [start, plan.requests[sub].build([e.request for e in exchanges])]
            runs[f"resp_{sub}"] = [start, plan.responses[sub].build([e.response for e in exchanges])]
        else:
            runs.setdefault(f"ev_{kind}", [start]).append(plan.others[kind].build(evs))
            if cls is RecordEvent:
                records = cast(list[RecordEvent], evs)
                runs[f"rec_{sub}"] = [start, plan.records[sub].build([e.record for e in records])]
        start += k
    # row j of the laid-out batch is line order[j]; line i is laid-out row inverse[i]
    order = pa.array(list(chain.from_iterable(rows for _, rows in laid)), pa.int64())
    inverse = pa.compute.sort_indices(order)
    arrays: list[Any] = []
    for field in plan.schema:
        name, t = field.name, field.type
        if name == "line":
            arrays.append(pa.array(range(first_line, first_line + n), t))
        elif name in ("ended", "decoded"):
            arrays.append(pa.array([True] * n, t))
        elif name in flat:
            arrays.append(pa.array(flat[name], t).take(inverse))
        elif name in runs:
            at, *dense = runs[name]
            size = sum(len(d) for d in dense)
            arrays.append(pa.concat_arrays([pa.nulls(at, t), *dense, pa.nulls(n - at - size, t)]).take(inverse))
        else:
            arrays.append(pa.nulls(n, t))
    return pa.Table.from_arrays(arrays, schema=plan.schema)


def write_events(events: Sequence[Event], path: Any) -> int:
    """Write events (the header first) as a columnar Parquet trace, as
    :func:`groupspec.trace.columnar.write_events` writes them (for events that come back
    from their canonical line unchanged, see the module's docstring); the row count."""
    import pyarrow as pa

    tables = []
    for start in range(0, len(events), BATCH_ROWS):
        batch = events[start:start + BATCH_ROWS]
        try:
            table = events_table(batch, start + 1)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            # a value Arrow cannot hold (a lone surrogate): the layout's own writer,
            # which keeps such an event's line as raw text
            table = lines_to_table([(no, canonical(e), True, e, True)
                                    for no, e in enumerate(batch, start=start + 1)])
        tables.append(table)
    write_tables(tables, path)
    return len(events)
