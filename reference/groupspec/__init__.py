"""groupspec: the formal reference for Apache Kafka's consumer-group rebalance protocol.

Layers (each imports only the ones below it):

- ``groupspec.protocol``: errors, requests and responses, records, consumer-protocol payloads.
- ``groupspec.coordinator`` / ``groupspec.assignors`` / ``groupspec.invariants``: the sans-IO
  classic group coordinator, the partition assignors, and invariant functions.
- ``groupspec.client``: the consumer (member) state machine.
- ``groupspec.sim``: the discrete-event simulator.
- ``groupspec.cli``: the command line.
"""

__version__ = "0.1.0"
