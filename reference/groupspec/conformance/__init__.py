"""The conformance suite: scripted scenarios run with real client libraries (kafka-python,
confluent-kafka) against a real broker through the recorder, each trace validated, and a
report per broker, client and scenario. See docs/conformance.md.

One idea per module: :mod:`.drivers` (a consumer of either library in its own process,
driven by commands), :mod:`.members` (the scenario's handle on such a process),
:mod:`.scenarios` (the stories), :mod:`.consumer_scenarios` (the stories of the
consumer group protocol, KIP-848, with confluent-kafka and kafka-clients' Java consumer,
``jvm/java/groupspec/conformance/ConsumerDriver.java``), :mod:`.runner` (broker, recorder,
validation) and :mod:`.report` (Markdown and HTML). Nothing is imported here: the member processes run
``python -m groupspec.conformance.drivers`` and need none of the rest.
"""
