"""One long-lived JVM answering the oracle's JSON requests (see ``java/.../Main.java``)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any, Self

from groupspec.brokers.kafka import java_executable
from groupspec.jvm.build import MAIN_CLASS, JvmBuildError, classpath


class JvmToolError(RuntimeError):
    """A tool threw on the Java side; the message carries the Java exception."""

    def __init__(self, tool: str, error: str, trace: str) -> None:
        super().__init__(f"{tool}: {error}")
        self.tool = tool
        self.error = error
        self.java_trace = trace


class JvmOracle:
    """``with JvmOracle() as jvm: jvm.call("ToolName", {...})``.

    Requests are answered in order, one at a time; a crashed JVM is a ``JvmBuildError``
    carrying what it printed on stderr.
    """

    #: JVM flags for short differential requests: start fast, compile little.
    QUICK_FLAGS: tuple[str, ...] = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

    def __init__(
        self, *, heap: str = "512m", full_jit: bool = False, flags: Sequence[str] | None = None
    ) -> None:
        """``flags``: JVM options (default :attr:`QUICK_FLAGS`); ``full_jit``: let HotSpot's
        optimising compiler run, for timing Kafka's code as a broker runs it."""
        self._heap = heap
        if flags is None:
            flags = ("-XX:+UseSerialGC",) if full_jit else self.QUICK_FLAGS
        self._flags = tuple(flags)
        self._proc: subprocess.Popen[str] | None = None
        #: the JVM's stderr goes to a file, not a pipe: Kafka's classes log there, and a
        #: pipe nobody reads fills after enough requests and blocks the JVM mid-answer
        self._stderr: IO[str] | None = None

    def start(self) -> Self:
        if self._proc is not None:
            return self
        try:
            java = java_executable()
        except RuntimeError as e:
            raise JvmBuildError(str(e)) from e
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by stop)
        self._proc = subprocess.Popen(
            [java, f"-Xmx{self._heap}", *self._flags, "-cp", classpath(), MAIN_CLASS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        # Wait for the JVM here, so a caller timing its requests does not time the start.
        if self.call("Ping", {"ping": True}) != {"ping": True}:
            raise JvmBuildError("the oracle JVM answered its start-up ping wrongly")
        return self

    def _pipes(self) -> tuple[subprocess.Popen[str], IO[str], IO[str]]:
        proc = self._proc if self._proc is not None else self.start()._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        return proc, proc.stdin, proc.stdout

    def call(self, tool: str, payload: Any) -> Any:
        """Runs ``tool`` on ``payload`` (JSON-able) and returns its JSON output."""
        proc, stdin, stdout = self._pipes()
        try:
            stdin.write(json.dumps({"tool": tool, "input": payload}) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            err = self._stderr_text()
            raise JvmBuildError(f"the oracle JVM exited ({proc.poll()}): {err[-4000:]}")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise JvmToolError(tool, str(answer.get("error")), str(answer.get("trace", "")))
        return answer.get("output")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
