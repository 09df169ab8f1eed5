"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat's handler, the group and
member state, incremental reconciliation and the target assignment, as
group-coordinator/.../modern/consumer/ in Apache Kafka 4.1."""
