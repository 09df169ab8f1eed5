"""The classic-protocol consumer model (JoinGroup / SyncGroup / Heartbeat, eager and
cooperative), as clients/.../consumer/internals/AbstractCoordinator.java and
ConsumerCoordinator.java behave."""
