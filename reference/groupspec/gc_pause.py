"""Cyclic garbage collection paused while a large acyclic result is built.

Used by the assignors and by the trace loader. At Kafka's sizes an assignment is a million
small tuples in a few thousand dicts. CPython's cyclic collector runs whenever enough
container objects have been allocated, so while the sticky assignors decode a million
previously owned partitions and build the new assignment it walks the ever-growing heap
again and again, though nothing built here can be part of a reference cycle (ints, strs,
tuples of ints, dicts and lists of those). Measured at 2000 members x 500 topics x 2000
partitions: a quarter to a third of the eager sticky assignor's time when one member
leaves. Reference counting still frees everything as usual; only the cycle collector
waits, and it runs again (if it was on) when the call returns. The validator is the same
case: a trace file decodes into hundreds of thousands of frozen dataclasses, tuples and
strs, none of them in a cycle (a third of the loading time was the collector, on a
20,000-event file), and its replay frees its own state when it returns (a test checks that
validating a trace leaves no cycle behind).

A process that switches the collector off itself while another thread is inside such a
call may find it switched back on when that call returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cycle collector for the block; restore its previous state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
