"""The scenario's side of a member: a handle on one driver process
(:mod:`groupspec.conformance.drivers`) that sends it commands, follows its status, and
kills or freezes it when a scenario needs a crash."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from groupspec.conformance.drivers import MemberConfig

#: the class the JVM of a Java member starts (compiled with the JVM oracle: groupspec.jvm.build)
JAVA_DRIVER_CLASS = "groupspec.conformance.ConsumerDriver"
#: JVM options of a Java member: a small heap and a quick start
JAVA_MEMBER_FLAGS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                     "-Djava.awt.headless=true")

_LOG4J2 = """\
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
logger.consumer.name = org.apache.kafka.clients.consumer.internals
logger.consumer.level = INFO
"""


def member_command(cfg: MemberConfig, log_dir: Path) -> list[str]:
    """The command line of a member's process: the Python driver, or for the Java client
    the JVM running kafka-clients' consumer (ConsumerDriver.java; compiled on first use,
    as ci/setup.d/40-jvm-oracle.sh does at set-up), its log lines to stderr."""
    if cfg.client != "java":
        return [sys.executable, "-m", "groupspec.conformance.drivers", cfg.to_json()]
    from groupspec.brokers.kafka import java_executable
    from groupspec.jvm.build import classpath

    log4j = log_dir / "log4j2.properties"
    if not log4j.is_file():
        log4j.write_text(_LOG4J2, encoding="utf-8")
    return [java_executable(), *JAVA_MEMBER_FLAGS, f"-Dlog4j2.configurationFile={log4j}",
            "-cp", classpath(), JAVA_DRIVER_CLASS, cfg.to_json()]


def partitions_text(assignment: Sequence[tuple[str, int]]) -> str:
    """``topic-0, topic-1`` (``none`` when empty): partitions as Kafka's logs print them."""
    return ", ".join(f"{t}-{p}" for t, p in assignment) or "none"


class ScenarioError(RuntimeError):
    """A scenario could not drive its clients as scripted (a member that never got an
    assignment, a reply that never came). The run goes on; the report says so."""


class Member:
    """One consumer in its own process."""

    def __init__(self, cfg: MemberConfig, log_dir: Path) -> None:
        self.cfg = cfg
        self.name = cfg.client_id
        self._log: IO[bytes] = open(log_dir / f"{cfg.client_id}.log", "ab")  # noqa: SIM115 - closed in _reap
        self.proc = subprocess.Popen(
            member_command(cfg, log_dir),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1,
        )
        self.assignment: list[tuple[str, int]] = []
        self.consumed = 0
        self.poll_errors: list[str] = []
        #: polls the driver released from a library hang (drivers._KafkaPython._watch_poll)
        self.released_polls = 0
        self._replies: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._eof = False
        threading.Thread(target=self._read, name=f"member-{self.name}", daemon=True).start()

    # -- following the process -----------------------------------------------------------
    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self._cond:
                ev = msg.get("ev")
                if ev == "status":
                    self.assignment = [(t, p) for t, p in msg["assignment"]]
                    self.consumed = int(msg["consumed"])
                elif ev == "reply":
                    self._replies.append(msg)
                elif ev == "poll_error":
                    self.poll_errors.append(str(msg.get("error")))
                elif ev == "released":
                    self.released_polls += 1
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def wait_for(self, what: str, pred: Callable[[Member], bool], timeout_s: float = 40.0) -> None:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not pred(self):
                left = deadline - time.monotonic()
                if left <= 0 or (self._eof and not pred(self)):
                    raise ScenarioError(
                        f"{self.name}: {what} not reached within {timeout_s:.0f} s "
                        f"(assignment {partitions_text(self.assignment)}, consumed {self.consumed}"
                        f"{', process ended' if self._eof else ''})"
                    )
                self._cond.wait(min(left, 0.5))

    # -- commands --------------------------------------------------------------------------
    def send(self, op: str, **extra: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **extra}) + "\n")
        self.proc.stdin.flush()

    def command(self, op: str, timeout_s: float = 40.0, **extra: Any) -> dict[str, Any]:
        """Send ``op`` and wait for its reply."""
        with self._cond:
            seen = len(self._replies)
        self.send(op, **extra)
        return self.await_reply(op, seen, timeout_s)

    def await_reply(self, op: str, seen: int, timeout_s: float = 40.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for reply in self._replies[seen:]:
                    if reply.get("op") == op:
                        return reply
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    raise ScenarioError(f"{self.name}: no reply to {op} within {timeout_s:.0f} s")
                self._cond.wait(min(left, 0.5))

    def replies_seen(self) -> int:
        with self._cond:
            return len(self._replies)

    def commit(self, retries: int = 10) -> dict[str, Any]:
        return self.command("commit", retries=retries)

    def close(self, timeout_s: float = 40.0) -> dict[str, Any]:
        reply = self.command("close", timeout_s=timeout_s)
        self._reap(timeout_s)
        return reply

    # -- faults ----------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL: the member vanishes without a LeaveGroup; its session must time out."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)
        self._reap(10)

    def freeze(self) -> None:
        """SIGSTOP: every thread stops, heartbeats included, until :meth:`thaw`."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def thread_stacks(self, frames_per_thread: int = 6, wait_s: float = 0.5) -> list[str]:
        """Every thread's innermost frames, a line per thread ("where: file:line in function
        < caller ..."), from what the driver's faulthandler writes to the log on SIGUSR1
        (empty when the process is gone or does not answer)."""
        if self.ended():
            return []
        start = Path(self._log.name).stat().st_size
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGUSR1)
        time.sleep(wait_s)
        with open(self._log.name, "rb") as fh:
            fh.seek(start)
            text = fh.read().decode("utf-8", errors="replace")
        threads: list[list[str]] = []
        for line in text.splitlines():
            if line.startswith(("Thread ", "Current thread ")):
                threads.append([])
            elif line.strip().startswith("File ") and threads:
                # File "/.../site-packages/kafka/client_async.py", line 680 in poll
                path, _, rest = line.strip()[6:].partition('", line ')
                threads[-1].append(f"{'/'.join(path.split('/')[-2:])}:{rest}")
        return [" < ".join(frames[:frames_per_thread]) for frames in threads if frames]

    def _reap(self, timeout_s: float) -> None:
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.kill()
            self.proc.wait()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._log.close()

    def shutdown(self) -> None:
        """Make sure the process is gone (a scenario's clean-up, whatever happened)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.kill()
        self._reap(10)

    # -- predicates ------------------------------------------------------------------------
    def ended(self) -> bool:
        return self.proc.poll() is not None

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = (Path(self._log.name)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def has_assignment(self, n: int | None = None) -> Callable[[Member], bool]:
        return lambda m: bool(m.assignment) and (n is None or len(m.assignment) == n)
