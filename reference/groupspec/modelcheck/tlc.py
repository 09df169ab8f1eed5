"""Running TLC on a model and reading its answer.

TLC runs with ``-tool``, which frames every message as ``@!@!@STARTMSG code:severity @!@!@``
... ``@!@!@ENDMSG code @!@!@``; the runner reads that stream as it comes, reports
progress, and assembles a :class:`CheckResult`: the verdict, the state-space statistics
and, on a violation, the counterexample as parsed states.

Message codes used (TLC's ``tlc2.output.EC``): 2200 progress, 2199 final statistics, 2209
progress of a simulation (``-simulate``; distinct states and queue printed as -1), 2194
depth, 2107/2110 invariant violated (initial state / behaviour), 2108/2112 action property
violated, 2116 temporal property violated, 2114 deadlock, 2121 "the behaviour up to this
point", 2217 a state of the trace, 2218 stuttering, 2122 back to state (a lasso). Exit
codes (``tlc2.output.EC.ExitStatus``): 0 no error, 10 assumption, 11 deadlock, 12 safety,
13 liveness or action property, 75 evaluation error, 150 spec parse error, 151 config
parse error, 152 state space too large, 153 system error.

Each run gets its own ``java.io.tmpdir`` and ``-metadir`` (TLC unpacks its standard modules
into the temporary directory, which concurrent runs must not share).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from groupspec.modelcheck.install import java_executable, tlc_jar
from groupspec.modelcheck.values import Value, ValueSyntaxError, parse_state

EXIT_MEANINGS: dict[int, tuple[str, str]] = {
    0: ("pass", "no error found"),
    10: ("violation", "an ASSUME does not hold"),
    11: ("violation", "deadlock reached"),
    12: ("violation", "a safety property (invariant) is violated"),
    13: ("violation", "a temporal or action property is violated"),
    75: ("error", "TLC could not evaluate an expression"),
    150: ("error", "the specification does not parse"),
    151: ("error", "the configuration file does not parse"),
    152: ("error", "the state space is too large for TLC"),
    153: ("error", "TLC failed (system error)"),
}

_VIOLATION_CODES: dict[int, str] = {
    2107: "invariant",
    2110: "invariant",
    2108: "property",
    2112: "property",
    2116: "liveness",
    2114: "deadlock",
    2104: "assumption",
}

_PROGRESS = re.compile(
    r"([\d,]+) states generated(?: \(([\d,]+) s/min\))?, (-?[\d,]+) distinct states found"
    r"(?: \(([\d,]+) ds/min\))?, (-?[\d,]+) states left on queue"
)
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_VIOLATED_NAME = re.compile(r"(?:Invariant|Action property|property) (\w+) (?:of \w+ )?is violated")
_STATE_HEADER = re.compile(r"^(\d+): <(.*?)>\s*$|^(\d+): (Stuttering)\s*$|^(\d+): Back to state")
_ACTION_NAME = re.compile(r"^(\w+)")


def _int(text: str | None) -> int:
    return int(text.replace(",", "")) if text else 0


@dataclass(frozen=True)
class Progress:
    """A snapshot of TLC's search (its periodic progress message, or the final one)."""

    generated: int
    distinct: int
    queue: int
    distinct_per_minute: int
    elapsed_s: float


@dataclass(frozen=True)
class TraceState:
    """One state of a counterexample: its position (1-based, as TLC numbers it), the
    action that led to it (``Init`` for the first), and its variables."""

    index: int
    action: str
    values: dict[str, Value]


@dataclass
class Violation:
    kind: str  # invariant | property | liveness | deadlock | assumption
    name: str | None  # the violated operator, when TLC names it
    message: str
    trace: list[TraceState] = field(default_factory=list)
    loop_to: int | None = None  # a lasso's loop target (liveness), 1-based
    stutters: bool = False  # the behaviour ends by stuttering forever


@dataclass
class CheckResult:
    """What one TLC run found."""

    model: str
    verdict: str  # pass | violation | error
    exit_code: int
    explanation: str
    seconds: float
    generated: int | None = None
    distinct: int | None = None
    depth: int | None = None
    violation: Violation | None = None
    errors: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)

    @property
    def distinct_per_second(self) -> float | None:
        if self.distinct is None or self.seconds <= 0:
            return None
        return self.distinct / self.seconds


def command(
    module: str,
    config: str,
    *,
    workers: int,
    metadir: Path,
    tmpdir: Path,
    jar: Path,
    java: str,
    heap: str | None = None,
    extra: Iterable[str] = (),
) -> list[str]:
    """The java command line that checks ``module`` with ``config`` in ``-tool`` mode."""
    cmd = [java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={tmpdir}"]
    if heap:
        cmd.append(f"-Xmx{heap}")
    cmd += ["-cp", str(jar), "tlc2.TLC", "-tool", "-workers", str(workers)]
    cmd += ["-metadir", str(metadir), "-config", config, *extra, module]
    return cmd


def messages(lines: Iterable[str]) -> Iterator[tuple[int, int, str]]:
    """TLC's ``-tool`` messages as ``(code, severity, text)``; text outside any message
    (a Java stack trace, say) comes as code -1."""
    code = severity = -1
    buf: list[str] = []
    inside = False
    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("@!@!@STARTMSG "):
            head = line.split()[1]
            c, _, s = head.partition(":")
            code, severity, inside, buf = int(c), int(s or 0), True, []
        elif line.startswith("@!@!@ENDMSG "):
            yield code, severity, "\n".join(buf)
            inside = False
        elif inside:
            buf.append(line)
        elif line.strip():
            yield -1, 1, line


class _Collector:
    """Folds the message stream into a result, calling ``on_progress`` as it goes."""

    def __init__(self, on_progress: Callable[[Progress], None] | None, start: float) -> None:
        self.on_progress = on_progress
        self.start = start
        self.violation: Violation | None = None
        self.in_trace = False
        self.generated: int | None = None
        self.distinct: int | None = None
        self.depth: int | None = None
        self.errors: list[str] = []
        self.rate = 0

    def feed(self, code: int, severity: int, text: str) -> None:
        if code in _VIOLATION_CODES:
            m = _VIOLATED_NAME.search(text)
            self.violation = Violation(_VIOLATION_CODES[code], m.group(1) if m else None, text)
        elif code == 2121:
            self.in_trace = True
        elif code in (2217, 2218) and self.violation is not None:
            self._trace_state(text)
        elif code == 2122 and self.violation is not None:
            m = re.search(r"(\d+)", text)
            self.violation.loop_to = int(m.group(1)) if m else None
        elif code in (2200, 2199, 2209):
            m = _PROGRESS.search(text)
            if m:
                distinct = _int(m.group(3))
                # a simulation counts no distinct states (TLC prints -1)
                self.generated, self.distinct = _int(m.group(1)), distinct if distinct >= 0 else None
                if m.group(4):
                    self.rate = _int(m.group(4))
                if self.on_progress is not None:
                    self.on_progress(
                        Progress(
                            self.generated,
                            self.distinct or 0,
                            max(_int(m.group(5)), 0),
                            self.rate,
                            time.monotonic() - self.start,
                        )
                    )
        elif code == 2194:
            m = _DEPTH.search(text)
            self.depth = int(m.group(1)) if m else None
        elif severity == 1 and code not in (2121,):
            self.errors.append(text.strip())

    def _trace_state(self, text: str) -> None:
        assert self.violation is not None
        head, _, body = text.partition("\n")
        m = _STATE_HEADER.match(head.strip())
        if m is None:
            self.errors.append(f"unreadable trace state header: {head!r}")
            return
        if m.group(4):  # "N: Stuttering"
            self.violation.stutters = True
            return
        if m.group(5):  # "N: Back to state M" (TLC 2.18 prints it as 2217 too)
            n = re.search(r"Back to state:? (\d+)", head)
            self.violation.loop_to = int(n.group(1)) if n else None
            return
        index = int(m.group(1))
        label = m.group(2)
        action = "Init" if label.startswith("Initial predicate") else _action(label)
        try:
            values = parse_state(body)
        except ValueSyntaxError as exc:
            self.errors.append(f"trace state {index}: {exc}")
            return
        self.violation.trace.append(TraceState(index, action, values))


def _action(label: str) -> str:
    m = _ACTION_NAME.match(label)
    return m.group(1) if m else label


def run_tlc(
    module: str,
    config: str,
    directory: Path,
    *,
    model: str = "",
    workers: int = 2,
    heap: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    extra: Iterable[str] = (),
    timeout_s: float | None = None,
) -> CheckResult:
    """Check ``module`` (a ``.tla`` in ``directory``) against ``config`` with TLC."""
    jar = tlc_jar()
    java = java_executable()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="groupspec-tlc-") as scratch:
        tmp = Path(scratch)
        cmd = command(
            module,
            config,
            workers=workers,
            metadir=tmp / "states",
            tmpdir=tmp,
            jar=jar,
            java=java,
            heap=heap,
            extra=extra,
        )
        collector = _Collector(on_progress, start)
        proc = subprocess.Popen(
            cmd,
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        assert proc.stdout is not None
        timed_out = False
        try:
            for code, severity, text in messages(proc.stdout):
                collector.feed(code, severity, text)
                if timeout_s is not None and time.monotonic() - start > timeout_s:
                    timed_out = True
                    proc.kill()
                    break
            exit_code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    seconds = time.monotonic() - start
    if timed_out:
        verdict, explanation = "error", f"stopped after the {timeout_s:.0f} s time limit"
        exit_code = -1
    else:
        verdict, explanation = EXIT_MEANINGS.get(
            exit_code, ("error", f"TLC exited with unexpected status {exit_code}")
        )
    if verdict == "violation" and collector.violation is None:
        verdict = "error"
        explanation += " (but TLC printed no counterexample)"
    return CheckResult(
        model=model or f"{module}/{config}",
        verdict=verdict,
        exit_code=exit_code,
        explanation=explanation,
        seconds=seconds,
        generated=collector.generated,
        distinct=collector.distinct,
        depth=collector.depth,
        violation=collector.violation if verdict == "violation" else None,
        errors=collector.errors,
        command=cmd,
    )
