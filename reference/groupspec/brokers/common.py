"""What every local broker shares: the cache directory, free ports, a Metadata probe, and
the life cycle of a broker process (start, wait until it answers, stop cleanly).

A broker is a context manager::

    with KafkaBroker() as broker:
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, ...)

``start`` returns once the broker accepts TCP connections *and* answers a Metadata request
listing itself; ``stop`` sends SIGTERM (a clean shutdown for both Kafka and Tansu), waits,
and kills the process only if it does not exit in time.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Self

#: Environment variable naming the cache directory (jars, binaries); default ~/.cache/groupspec.
CACHE_ENV = "GROUPSPEC_CACHE"


class BrokerError(RuntimeError):
    """A broker that cannot be provided: missing runtime, failed download, failed start."""


def cache_dir() -> Path:
    """Where downloaded brokers live (``$GROUPSPEC_CACHE`` or ``~/.cache/groupspec``)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "groupspec"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the OS's pick; another process may still
    take it before the broker binds it, which :meth:`BrokerProcess.start` reports)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _metadata_v1_request(correlation_id: int, client_id: str) -> bytes:
    """A framed Metadata v1 request for all topics (null topic array).

    Encoded by hand so that the probe needs nothing but the standard library: request
    header v1 (api key, version, correlation id, client id) and a null array (-1).
    """
    cid = client_id.encode()
    body = struct.pack(">hhih", 3, 1, correlation_id, len(cid)) + cid + struct.pack(">i", -1)
    return struct.pack(">i", len(body)) + body


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from ``sock`` (ConnectionError when it closes first)."""
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("connection closed mid-response")
        out += chunk
    return bytes(out)


def probe_metadata(host: str, port: int, timeout: float = 2.0) -> list[tuple[int, str, int]]:
    """Ask a broker for Metadata v1 and return its brokers as (node id, host, port).

    Raises OSError when the broker does not accept the connection or does not answer.
    """
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(_metadata_v1_request(7, "groupspec-probe"))
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        data = recv_exact(sock, size)
    (correlation_id, count) = struct.unpack_from(">ii", data, 0)
    if correlation_id != 7:
        raise ConnectionError(f"probe answered with correlation id {correlation_id}")
    pos = 8
    brokers = []
    for _ in range(count):
        node_id, hlen = struct.unpack_from(">ih", data, pos)
        pos += 6
        bhost = data[pos : pos + hlen].decode()
        pos += hlen
        (bport, rlen) = struct.unpack_from(">ih", data, pos)
        pos += 6 + max(rlen, 0)
        brokers.append((node_id, bhost, bport))
    return brokers


class BrokerProcess:
    """A broker run as a child process in its own work directory.

    Subclasses fill in :meth:`prepare` (write configuration, format storage) and
    :meth:`command`; this class starts, waits for readiness, and stops.
    """

    kind = "broker"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        workdir: Path | None = None,
        start_timeout_s: float = 120.0,
        stop_timeout_s: float = 30.0,
    ) -> None:
        self.host = host
        self._fixed_port = port
        self.port = port if port is not None else 0
        self._own_workdir = workdir is None
        self.workdir = workdir if workdir is not None else Path(
            tempfile.mkdtemp(prefix=f"groupspec-{self.kind}-")
        )
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        #: seconds from launching the process to its first Metadata answer
        self.startup_s: float | None = None
        self._log: IO[bytes] | None = None

    # -- to be provided by a subclass --------------------------------------------------
    def prepare(self) -> None:
        """Write configuration and storage before the first start."""

    def command(self) -> Sequence[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    # -- common life cycle -------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        """``host:port`` for a client's bootstrap servers."""
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        """The broker's own output (stdout and stderr)."""
        return self.workdir / f"{self.kind}.out"

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no output)"
        return "\n".join(text.splitlines()[-lines:])

    def start(self) -> Self:
        if self.proc is not None:
            raise BrokerError(f"{self.kind} broker already started")
        attempts = 1 if self._fixed_port is not None else 3
        for attempt in range(1, attempts + 1):
            if self._fixed_port is None:
                self.port = free_port(self.host)
            self.prepare()
            try:
                self._launch_and_wait()
                return self
            except BrokerError:
                address_taken = "Address already in use" in self.log_tail(200)
                self._terminate()
                if not address_taken or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def _launch_and_wait(self) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in _terminate
        t0 = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                list(self.command()),
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                # its own process group: a Ctrl-C in the terminal reaches only us, and we
                # stop the broker cleanly with SIGTERM
                start_new_session=True,
            )
        except OSError as e:
            raise BrokerError(f"cannot start the {self.kind} broker: {e}") from e
        # the broker runs in its own session, so no Ctrl-C reaches it: stop it at exit
        # even when the caller never gets to stop()
        atexit.register(self._terminate)
        deadline = t0 + self.start_timeout_s
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                raise BrokerError(
                    f"the {self.kind} broker exited with status {code} while starting; "
                    f"its output ({self.log_path}) ends:\n{self.log_tail()}"
                )
            try:
                brokers = probe_metadata(self.host, self.port, timeout=2.0)
            except (OSError, struct.error, UnicodeDecodeError) as e:
                last_error = str(e) or type(e).__name__
                time.sleep(0.1)
                continue
            if brokers:
                self.startup_s = time.monotonic() - t0
                return
            last_error = "Metadata lists no broker yet"
            time.sleep(0.1)
        raise BrokerError(
            f"the {self.kind} broker did not answer Metadata on {self.bootstrap} within "
            f"{self.start_timeout_s:.0f} s ({last_error}); its output ends:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Stop cleanly (SIGTERM, then SIGKILL after ``stop_timeout_s``); remove the work
        directory if this object created it."""
        self._terminate()
        if self._own_workdir:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)

    def _terminate(self) -> None:
        atexit.unregister(self._terminate)
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
