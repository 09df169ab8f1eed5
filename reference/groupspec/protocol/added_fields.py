"""Fields added to the trace vocabulary (format v1.2) after files were written without them.

Such a field has a default, which a line without it reads as; a trace line writes it only
when its value is not that default (``groupspec.trace.codec``), so every line written before
the field existed is still the line a writer of this package writes for its event (its
canonical line: the columnar layout stores such lines as typed columns, not text) and the
great majority of lines, whose value is the default, do not grow.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

#: the field metadata key that marks a field written only when it is not its default
OMITTED_AT_DEFAULT = "omitted_at_default"


def added(default: Any) -> Any:
    """A dataclass field added later to the vocabulary, with ``default`` (an immutable
    literal: an int, None or the empty tuple)."""
    return dataclasses.field(default=default, metadata={OMITTED_AT_DEFAULT: True})


@functools.cache
def added_defaults(cls: type) -> dict[str, Any]:
    """The fields of dataclass ``cls`` added to the vocabulary later (name -> default): what
    a trace line leaves out, and a scenario rendering does not print, at their default."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.metadata.get(OMITTED_AT_DEFAULT)}


__all__ = ["OMITTED_AT_DEFAULT", "added", "added_defaults"]
