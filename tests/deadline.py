"""A bound on a call that may hang, for tests whose failure is a hang."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def within(seconds: int, what: str) -> Iterator[None]:
    """Raise TimeoutError naming ``what`` if the block has not returned after ``seconds``
    (SIGALRM: main thread only)."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
