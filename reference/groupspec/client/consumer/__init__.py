"""The consumer-protocol (KIP-848) consumer model: ConsumerGroupHeartbeat, member epochs and
incremental reconciliation, as the Java client's ConsumerMembershipManager behaves."""
