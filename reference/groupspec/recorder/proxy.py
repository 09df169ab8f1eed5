"""The recording proxy: a TCP proxy between Kafka clients and one broker that forwards the
bytes unchanged and writes the group protocol's exchanges as a trace (format v1).

For each client connection the proxy opens one connection to the upstream broker and runs
two pumps. Requests are read frame by frame, their headers parsed, the group APIs' bodies
decoded, and the frame forwarded as it came. Responses are matched to their request by
correlation id; a group API's response is decoded and the pair written as an
``exchange`` event with the connection id, the client id and the interval from the
request to the response. A frame that does not decode becomes a ``decode_error`` event and
is forwarded all the same. A size prefix that cannot be a Kafka frame (negative, or larger
than :data:`MAX_FRAME`) turns the rest of that connection into a plain byte pipe.

The one exception to byte-identical forwarding: Metadata, FindCoordinator and
DescribeCluster responses that advertise the upstream broker's own address are
re-encoded to advertise the proxy instead, so the client's later connections (to the
coordinator, to partition leaders) come through the proxy too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from groupspec.protocol import messages as m
from groupspec.recorder.client_apis import (
    API_VERSIONS_KEY,
    FETCH_KEY,
    METADATA_KEY,
    FetchSession,
    TopicNames,
    api_versions_fields,
    fetch_partitions,
)
from groupspec.recorder.convert import CONVERTERS, NotRepresentable, to_request, to_response
from groupspec.recorder.frames import (
    ADDRESS_APIS,
    RequestHeader,
    correlation_id_of,
    decode_request,
    decode_response,
    parse_request_header,
    rewrite_addresses,
)
from groupspec.recorder.schema import SchemaError
from groupspec.trace.events import (
    API_BY_KEY,
    RECORDER_SOURCE,
    ApiVersionsEvent,
    ClosedEvent,
    DecodeErrorEvent,
    FetchEvent,
    MetadataEvent,
    WireExchange,
    request_group_id,
)
from groupspec.trace.jsonl import TraceWriter

#: Largest frame treated as Kafka (Kafka's own socket.request.max.bytes is 100 MiB).
MAX_FRAME = 256 * 1024 * 1024
_CHUNK = 64 * 1024
#: How long a connection whose client stopped sending waits for the broker's last answers.
LINGER_S = 5.0


def now_ms() -> float:
    return time.time() * 1000.0


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    if int(port) > 65535:
        raise ValueError(f"port must be 0 to 65535, got {port[:20]}")
    return host.strip("[]"), int(port)


@dataclass
class _Pending:
    header: RequestHeader
    sent_ms: float
    request: m.Request | None = None
    #: a Fetch or ApiVersions request body (trace v1.1), and for a Fetch the session's
    #: partitions after it
    body: dict[str, Any] | None = None
    session: dict[tuple[str, int], int] | None = None


@dataclass
class _Connection:
    id: str
    client_host: str
    client_id: str = ""
    #: the client's address and port (trace v1.1 ``peer``)
    peer: str | None = None
    pending: dict[int, _Pending] = field(default_factory=dict)
    fetch_session: FetchSession = field(default_factory=FetchSession)


@dataclass
class Stats:
    connections: int = 0
    requests: int = 0
    responses: int = 0
    exchanges: int = 0
    decode_errors: int = 0
    rewritten: int = 0


class _RawMode(Exception):
    def __init__(self, head: bytes, size: int) -> None:
        super().__init__(f"frame size {size} is not a Kafka frame")
        self.head = head
        self.size = size


async def _read_frame(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """(the 4 size bytes, the frame), or None at a clean end of stream. A stream cut inside
    a frame returns what there was (forwarded as is); an impossible size raises _RawMode."""
    try:
        head = await reader.readexactly(4)
    except asyncio.IncompleteReadError as e:
        if e.partial:
            return e.partial, b""
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > MAX_FRAME:
        raise _RawMode(head, size)
    try:
        return head, await reader.readexactly(size)
    except asyncio.IncompleteReadError as e:
        return head, e.partial


class Recorder:
    """Listens on ``listen``, forwards to ``upstream``, writes events to ``writer``.

    ``advertise`` is the address written into rewritten responses (default: the address
    the proxy listens on). ``rewrite=False`` forwards every frame untouched.
    """

    def __init__(
        self,
        upstream: tuple[str, int],
        writer: TraceWriter | None,
        *,
        listen: tuple[str, int] = ("127.0.0.1", 0),
        advertise: tuple[str, int] | None = None,
        rewrite: bool = True,
        cluster: str | None = None,
        log: Callable[[str], None] | None = None,
        jitter_ms: float = 0.0,
        jitter_seed: int | None = None,
    ) -> None:
        self.upstream = upstream
        #: each request waits up to this long (uniformly at random) before it goes on to the
        #: broker: requests of different connections then reach the broker in orders a
        #: plain run rarely shows, to shake out validator false positives. A request is
        #: stamped when read, before the wait, so the recorded interval still holds the
        #: broker's handling; one connection's requests keep their order.
        self.jitter_ms = jitter_ms
        self._jitter = random.Random(jitter_seed)
        self.writer = writer
        self.listen = listen
        self._advertise = advertise
        self.rewrite = rewrite
        self.cluster = cluster
        self.stats = Stats()
        self._log = log or (lambda _msg: None)
        self._ids = itertools.count(1)
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._upstream_ips: set[str] | None = None
        self._resolved: dict[str, set[str]] = {}
        #: topic ids -> names from the Metadata responses seen (Fetch v13+ names topics by id)
        self.topic_names = TopicNames()

    # -- life cycle ----------------------------------------------------------------------
    async def start(self) -> tuple[str, int]:
        self._server = await asyncio.start_server(self._serve, self.listen[0], self.listen[1])
        host, port = self._server.sockets[0].getsockname()[:2]
        self.listen = (str(host), int(port))
        self._upstream_ips = self._ips(self.upstream[0])
        return self.listen

    @property
    def advertise(self) -> tuple[str, int]:
        if self._advertise is not None:
            return self._advertise
        host, port = self.listen
        return ("127.0.0.1" if host in ("0.0.0.0", "::", "") else host, port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.writer is not None:
            self.writer.flush()

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    # -- addresses -----------------------------------------------------------------------
    def _ips(self, host: str) -> set[str]:
        if host not in self._resolved:
            try:
                infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
                self._resolved[host] = {str(info[4][0]) for info in infos}
            except OSError:
                self._resolved[host] = set()
            self._resolved[host].add(host)
        return self._resolved[host]

    def _map_address(self, host: str, port: int) -> tuple[str, int] | None:
        if port != self.upstream[1]:
            return None
        if host == self.upstream[0] or (self._upstream_ips or set()) & self._ips(host):
            return self.advertise
        return None

    # -- events --------------------------------------------------------------------------
    def _emit(self, event: WireExchange | DecodeErrorEvent | FetchEvent | ApiVersionsEvent
              | MetadataEvent | ClosedEvent) -> None:
        if self.writer is None:
            return
        self.writer.write(event)
        self.writer.flush()

    def _decode_error(
        self,
        conn: _Connection,
        direction: str,
        error: str,
        size: int,
        header: RequestHeader | None = None,
        api_key: int | None = None,
        correlation_id: int | None = None,
    ) -> None:
        self.stats.decode_errors += 1
        self._emit(
            DecodeErrorEvent(
                seq=self.writer.next_seq() if self.writer else 0,
                connection=conn.id,
                direction=direction,
                api_key=header.api_key if header else api_key,
                api_version=header.api_version if header else None,
                correlation_id=header.correlation_id if header else correlation_id,
                at_ms=now_ms(),
                error=error,
                size=size,
                cluster=self.cluster,
            )
        )

    def _exchange(
        self, conn: _Connection, p: _Pending, received_ms: float | None,
        response: m.Response | None, rewritten: bool,
    ) -> None:
        assert p.request is not None
        self.stats.exchanges += 1
        self._emit(
            WireExchange(
                seq=self.writer.next_seq() if self.writer else 0,
                connection=conn.id,
                client_id=p.header.client_id or "",
                api=API_BY_KEY[p.header.api_key],
                api_key=p.header.api_key,
                api_version=p.header.api_version,
                correlation_id=p.header.correlation_id,
                group_id=request_group_id(p.request),
                sent_ms=p.sent_ms,
                received_ms=received_ms,
                request=p.request,
                response=response,
                cluster=self.cluster,
                rewritten=rewritten,
                peer=conn.peer,
            )
        )

    def _client_exchange(
        self, conn: _Connection, p: _Pending, received_ms: float | None, response: dict[str, Any] | None
    ) -> None:
        """A Fetch or ApiVersions exchange (trace v1.1)."""
        assert p.body is not None
        common: dict[str, Any] = {
            "seq": self.writer.next_seq() if self.writer else 0,
            "connection": conn.id,
            "client_id": p.header.client_id or "",
            "api_version": p.header.api_version,
            "correlation_id": p.header.correlation_id,
            "sent_ms": p.sent_ms,
            "received_ms": received_ms,
            "cluster": self.cluster,
            "peer": conn.peer,
        }
        if p.header.api_key == FETCH_KEY:
            parts = fetch_partitions(p.session or {}, response, self.topic_names)
            self._emit(FetchEvent(partitions=parts, **common))
        else:
            self._emit(ApiVersionsEvent(**common, **api_versions_fields(p.body, response)))

    # -- frames --------------------------------------------------------------------------
    def _on_request(self, conn: _Connection, frame: bytes, at: float) -> None:
        self.stats.requests += 1
        try:
            header = parse_request_header(frame)
        except SchemaError as e:
            key = struct.unpack_from(">h", frame, 0)[0] if len(frame) >= 2 else None
            self._decode_error(conn, "request", f"request header: {e}", len(frame), api_key=key)
            return
        if header.client_id is not None:
            conn.client_id = header.client_id
        grouped = header.api_key in CONVERTERS
        client_api = header.api_key in (FETCH_KEY, API_VERSIONS_KEY)
        if not grouped and not client_api and header.api_key not in ADDRESS_APIS:
            return
        pending = _Pending(header, at)
        if client_api:
            try:
                pending.body = decode_request(frame, header)
            except SchemaError as e:
                self._decode_error(conn, "request", str(e), len(frame), header)
                return
            if header.api_key == FETCH_KEY:
                pending.session = conn.fetch_session.request(pending.body, self.topic_names)
        if grouped:
            try:
                body = decode_request(frame, header)
                pending.request = to_request(
                    header.api_key, header.api_version, body, header.client_id or "", conn.client_host
                )
            except (SchemaError, NotRepresentable) as e:
                self._decode_error(conn, "request", str(e), len(frame), header)
        conn.pending[header.correlation_id] = pending

    def _on_response(self, conn: _Connection, frame: bytes, at: float) -> bytes:
        self.stats.responses += 1
        correlation_id = correlation_id_of(frame)
        p = conn.pending.pop(correlation_id, None) if correlation_id is not None else None
        if p is None:
            if correlation_id is None:
                self._decode_error(conn, "response", "response shorter than a correlation id", len(frame))
            return frame
        key, version = p.header.api_key, p.header.api_version
        out = frame
        rewritten = False
        if self.rewrite and key in ADDRESS_APIS:
            try:
                new = rewrite_addresses(frame, key, version, self._map_address)
            except SchemaError as e:
                self._decode_error(conn, "response", f"cannot rewrite addresses: {e}", len(frame), p.header)
            else:
                if new is not None:
                    out, rewritten = new, True
                    self.stats.rewritten += 1
        if key == METADATA_KEY:
            # a Metadata response that does not decode only costs later Fetch events their names
            with contextlib.suppress(SchemaError):
                if self.topic_names.learn_metadata(decode_response(frame, key, version)):
                    # v1.2: what a consumer group's server-side assignor sees from now on
                    self._emit(MetadataEvent(
                        seq=self.writer.next_seq() if self.writer else 0, at_ms=at,
                        topics=self.topic_names.topics(), cluster=self.cluster))
        if p.body is not None:
            try:
                body = decode_response(frame, key, version)
            except SchemaError as e:
                self._decode_error(conn, "response", str(e), len(frame), p.header)
            else:
                self._client_exchange(conn, p, at, body)
        if p.request is not None:
            try:
                response = to_response(key, version, decode_response(frame, key, version))
            except (SchemaError, NotRepresentable) as e:
                self._decode_error(conn, "response", str(e), len(frame), p.header)
            else:
                if rewritten and isinstance(response, m.FindCoordinatorResponse):
                    # the trace shows what the client was told
                    response = to_response(key, version, decode_response(out, key, version))
                self._exchange(conn, p, at, response, rewritten)
        return out

    def _cut_off(self, conn: _Connection, direction: str, head: bytes, frame: bytes) -> None:
        """An event for a frame the stream ended inside (a disconnect): what arrived, and
        the api key and correlation id a request's first bytes name, in the message (the
        event's own fields stay empty: the frame was never whole, so no one acted on it)."""
        if len(head) < 4:
            what = f"frame size cut off after {len(head)} of 4 bytes"
        else:
            what = f"frame cut off after {len(frame)} of {struct.unpack('>i', head)[0]} bytes"
        if direction == "request" and len(frame) >= 8:
            key, _, corr = struct.unpack_from(">hhi", frame, 0)
            what += f" (api key {key}, correlation id {corr})"
        self._decode_error(conn, direction, f"{what}: the connection ended inside it", len(head) + len(frame))

    # -- pumps ---------------------------------------------------------------------------
    async def _raw_copy(
        self, conn: _Connection, direction: str, err: _RawMode,
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
    ) -> None:
        self._decode_error(
            conn, direction, f"{err}; the rest of the connection is forwarded unparsed", 4
        )
        writer.write(err.head)
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()

    async def _pump_requests(
        self, conn: _Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while (item := await _read_frame(reader)) is not None:
                head, frame = item
                if len(head) == 4 and len(frame) == struct.unpack(">i", head)[0]:
                    # parse and register before forwarding, so the response cannot overtake
                    self._on_request(conn, frame, now_ms())
                else:
                    self._cut_off(conn, "request", head, frame)
                if self.jitter_ms > 0:
                    await asyncio.sleep(self._jitter.uniform(0.0, self.jitter_ms) / 1000.0)
                writer.write(head + frame)
                await writer.drain()
        except _RawMode as e:
            await self._raw_copy(conn, "request", e, reader, writer)
        if writer.can_write_eof():
            with contextlib.suppress(OSError):
                writer.write_eof()

    async def _pump_responses(
        self, conn: _Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while (item := await _read_frame(reader)) is not None:
                head, frame = item
                if len(head) == 4 and len(frame) == struct.unpack(">i", head)[0]:
                    out = self._on_response(conn, frame, now_ms())
                    if out is not frame:
                        head = struct.pack(">i", len(out))
                    frame = out
                else:
                    self._cut_off(conn, "response", head, frame)
                writer.write(head + frame)
                await writer.drain()
        except _RawMode as e:
            await self._raw_copy(conn, "response", e, reader, writer)

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        peer = client_writer.get_extra_info("peername")
        conn = _Connection(id=f"c{next(self._ids)}", client_host=f"/{peer[0]}" if peer else "",
                           peer=f"{peer[0]}:{peer[1]}" if peer else None)
        self.stats.connections += 1
        up_writer: asyncio.StreamWriter | None = None
        #: the broker's side ended first (it closed the connection), and when
        broker_closed_ms: float | None = None
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError as e:
                self._log(f"{conn.id}: cannot reach upstream {self.upstream[0]}:{self.upstream[1]}: {e}")
                return
            self._log(f"{conn.id}: {peer} -> {self.upstream[0]}:{self.upstream[1]}")
            requests = asyncio.create_task(self._pump_requests(conn, client_reader, up_writer))
            responses = asyncio.create_task(self._pump_responses(conn, up_reader, client_writer))
            try:
                done, _ = await asyncio.wait(
                    {requests, responses}, return_when=asyncio.FIRST_COMPLETED
                )
                if responses in done and requests not in done and responses.exception() is None:
                    broker_closed_ms = now_ms()
                if responses not in done:
                    # the client is done sending: let the broker answer what is in flight
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(responses), timeout=LINGER_S)
            finally:
                requests.cancel()
                responses.cancel()
                await asyncio.gather(requests, responses, return_exceptions=True)
        except (ConnectionError, OSError) as e:
            self._log(f"{conn.id}: {e}")
        except asyncio.CancelledError:
            pass  # the recorder is closing; the connection ends below
        finally:
            if broker_closed_ms is not None:
                unanswered = sum(1 for p in conn.pending.values() if p.request is not None)
                self._emit(ClosedEvent(seq=self.writer.next_seq() if self.writer else 0, connection=conn.id,
                                       at_ms=broker_closed_ms, pending=unanswered, cluster=self.cluster,
                                       peer=conn.peer))
            for p in conn.pending.values():
                if p.request is not None:
                    self._exchange(conn, p, None, None, False)
                elif p.body is not None:
                    self._client_exchange(conn, p, None, None)
            conn.pending.clear()
            for w in (client_writer, up_writer):
                if w is not None:
                    w.close()
                    # (a close the recorder's own shutdown cancels ends the connection all the
                    # same; let the task end normally, or asyncio's stream callback reports the
                    # cancellation as an error on stderr)
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await w.wait_closed()
            self._tasks.discard(task)
            self._log(f"{conn.id}: closed")


class BackgroundRecorder:
    """A :class:`Recorder` on its own event loop in a daemon thread (for tests and tools
    that are not asyncio themselves). As a context manager it starts the proxy, yields
    itself (``address`` is the bootstrap to give clients), and stops it on exit."""

    def __init__(
        self,
        upstream: tuple[str, int],
        out: IO[str] | None,
        *,
        listen: tuple[str, int] = ("127.0.0.1", 0),
        source: str = RECORDER_SOURCE,
        cluster: str | None = None,
        note: str | None = None,
        broker_config: dict[str, int] | None = None,
        **options: Any,
    ) -> None:
        self.writer = (TraceWriter(out, source=source, cluster=cluster, note=note, broker_config=broker_config)
                       if out else None)
        self.recorder = Recorder(upstream, self.writer, listen=listen, cluster=cluster, **options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="groupspec-recorder", daemon=True)

    @property
    def address(self) -> str:
        host, port = self.recorder.listen
        return f"{host}:{port}"

    def start(self) -> BackgroundRecorder:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.recorder.start(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self.recorder.close(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> BackgroundRecorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
