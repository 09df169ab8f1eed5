"""The trace validator: replays each group's wire exchanges on the reference coordinator
and gives a verdict per group (conforming, violation, inconclusive). See docs/validator.md.

One idea per module: :mod:`.load` (lines in, events with line numbers and named problems
out), :mod:`.grouping` (per group, with gaps), :mod:`.replay` (the search over orders and
timings), :mod:`.compare` (broker vs reference answers), :mod:`.checks` (evidence that
needs no replay), :mod:`.rules` (rule names and Kafka sources), :mod:`.verdict` and
:mod:`.report`; :mod:`.validator` ties them together.
"""

from groupspec.validate.problems import PROBLEM_KINDS, InputProblem, TraceInputError
from groupspec.validate.replay import ReplayConfig
from groupspec.validate.validator import validate_bytes, validate_loaded, validate_path
from groupspec.validate.verdict import (
    CONFORMING,
    INCONCLUSIVE,
    VIOLATION,
    Divergence,
    FileReport,
    GroupVerdict,
    exit_code,
)

__all__ = [
    "CONFORMING",
    "INCONCLUSIVE",
    "PROBLEM_KINDS",
    "VIOLATION",
    "Divergence",
    "FileReport",
    "GroupVerdict",
    "InputProblem",
    "ReplayConfig",
    "TraceInputError",
    "exit_code",
    "validate_bytes",
    "validate_loaded",
    "validate_path",
]
