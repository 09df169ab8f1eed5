"""Coordinator configuration with Kafka's defaults.

Source: group-coordinator/.../GroupCoordinatorConfig.java and OffsetConfig (the
``group.*`` and ``offsets.*`` broker settings). An impossible configuration raises
ValueError naming the setting.
"""

from __future__ import annotations

from dataclasses import dataclass

#: ConsumerGroupMigrationPolicy's values -> (upgrade enabled, downgrade enabled)
MIGRATION_POLICIES: dict[str, tuple[bool, bool]] = {
    "bidirectional": (True, True),
    "upgrade": (True, False),
    "downgrade": (False, True),
    "disabled": (False, False),
}


@dataclass(frozen=True)
class CoordinatorConfig:
    #: group.min.session.timeout.ms
    group_min_session_timeout_ms: int = 6_000
    #: group.max.session.timeout.ms
    group_max_session_timeout_ms: int = 1_800_000
    #: group.initial.rebalance.delay.ms
    group_initial_rebalance_delay_ms: int = 3_000
    #: group.max.size
    group_max_size: int = 2**31 - 1
    #: the timeout of a member added in a join phase until it completes
    #: (GroupCoordinatorConfig CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS, 5 minutes)
    group_new_member_join_timeout_ms: int = 300_000
    #: offsets.retention.minutes (7 days) in milliseconds
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    #: offsets.retention.check.interval.ms
    offsets_retention_check_interval_ms: int = 600_000
    #: offset.metadata.max.bytes
    offset_metadata_max_bytes: int = 4096
    #: offsets.topic.num.partitions
    offsets_topic_num_partitions: int = 50
    #: group.consumer.session.timeout.ms (KIP-848 groups)
    consumer_group_session_timeout_ms: int = 45_000
    #: group.consumer.heartbeat.interval.ms
    consumer_group_heartbeat_interval_ms: int = 5_000
    #: group.consumer.max.size
    consumer_group_max_size: int = 2**31 - 1
    #: group.consumer.assignors: the server-side assignors by name, the default first
    consumer_group_assignors: tuple[str, ...] = ("uniform", "range")
    #: group.consumer.migration.policy (ConsumerGroupMigrationPolicy: bidirectional,
    #: upgrade, downgrade or disabled; Kafka reads it case-insensitively, the reference keeps
    #: it lower-case). Kafka's default. Both conversions are modelled (docs/deviations.md)
    consumer_group_migration_policy: str = "bidirectional"
    #: group.consumer.regex.refresh.interval.ms (an internal config, at least 10 s): the
    #: longest a group's resolved regexes go unrefreshed while its members heartbeat
    consumer_group_regex_refresh_interval_ms: int = 600_000

    def __post_init__(self) -> None:
        for name in (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_initial_rebalance_delay_ms",
            "group_new_member_join_timeout_ms",
            "offsets_retention_ms",
            "offset_metadata_max_bytes",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("group_max_size", "offsets_retention_check_interval_ms",
                     "offsets_topic_num_partitions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("consumer_group_session_timeout_ms", "consumer_group_heartbeat_interval_ms",
                     "consumer_group_max_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.consumer_group_regex_refresh_interval_ms < 10_000:
            # GroupCoordinatorConfig: atLeast(10 * 1000)
            raise ValueError("consumer_group_regex_refresh_interval_ms must be >= 10000, got "
                             f"{self.consumer_group_regex_refresh_interval_ms}")
        if not self.consumer_group_assignors:
            raise ValueError("consumer_group_assignors must name at least one assignor")
        from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES

        for name in self.consumer_group_assignors:
            if name not in SERVER_ASSIGNOR_NAMES:
                raise ValueError(
                    f"consumer_group_assignors: unknown server-side assignor {name!r}; "
                    f"known: {', '.join(SERVER_ASSIGNOR_NAMES)}"
                )
        policy = self.consumer_group_migration_policy
        if not isinstance(policy, str) or policy.lower() not in MIGRATION_POLICIES:
            raise ValueError(
                f"consumer_group_migration_policy: one of {', '.join(MIGRATION_POLICIES)} "
                f"(group.consumer.migration.policy), got {policy!r}"
            )
        if policy != policy.lower():
            object.__setattr__(self, "consumer_group_migration_policy", policy.lower())
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "group_min_session_timeout_ms "
                f"({self.group_min_session_timeout_ms}) > group_max_session_timeout_ms "
                f"({self.group_max_session_timeout_ms})"
            )

    @property
    def online_upgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isUpgradeEnabled."""
        return MIGRATION_POLICIES[self.consumer_group_migration_policy][0]

    @property
    def online_downgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isDowngradeEnabled."""
        return MIGRATION_POLICIES[self.consumer_group_migration_policy][1]
