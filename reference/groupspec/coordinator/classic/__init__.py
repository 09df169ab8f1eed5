"""The classic group protocol's handlers and group state (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup), as group-coordinator/.../classic/ in Apache Kafka 4.1. The dispatcher, records
replay, timers, offsets, failover and admin requests shared with the consumer protocol stay
in :mod:`groupspec.coordinator`."""
