"""A test driver for the reference KIP-848 client: time moved by hand, every request answered
by hand, through the client's sans-IO interface only (``tick``, ``on_response``). The ports
of Kafka's ConsumerHeartbeatRequestManagerTest and ConsumerMembershipManagerTest build their
fixtures on it."""

from __future__ import annotations

from groupspec.client.classic.consumer import ClusterView
from groupspec.client.config import ConsumerConfig
from groupspec.client.consumer.consumer import ConsumerProtocolConsumer
from groupspec.protocol import messages as m


class ClientDriver:
    def __init__(self, config: ConsumerConfig, cluster: ClusterView) -> None:
        self.now = 0
        self._rid = 0
        self.config = config
        self.cluster = cluster
        self.c = ConsumerProtocolConsumer(config, 0, self.next_rid)
        #: requests sent and not answered yet, with their correlation ids, oldest first
        self.pending: list[tuple[int, m.Request]] = []

    def next_rid(self) -> int:
        self._rid += 1
        return self._rid

    def tick(self, advance_ms: int = 0) -> list[m.Request]:
        """Move time by ``advance_ms`` and tick the client; the requests it sent."""
        self.now += advance_ms
        out = self.c.tick(self.now, self.cluster)
        self.pending += out
        return [r for _, r in out]

    def answer(self, kind: type, resp: m.Response) -> list[m.Request]:
        """Answer the oldest pending request of type ``kind``; the requests that follow."""
        for i, (rid, req) in enumerate(self.pending):
            if isinstance(req, kind):
                del self.pending[i]
                out = self.c.on_response(rid, resp, self.now, self.cluster)
                self.pending += out
                return [r for _, r in out]
        raise AssertionError(f"no {kind.__name__} pending")
