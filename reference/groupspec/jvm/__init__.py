"""The JVM oracle: Apache Kafka's own classes, from the real 4.1.2 jars, run on inputs that
groupspec sends, for differential tests (assignors, claim rules, hashing).

``build`` compiles the Java sources shipped in ``jvm/java/`` against the cached Kafka jars
(``ci/setup.d/40-jvm-oracle.sh`` does it at set-up; a test compiles on first use if the
sources changed since). ``JvmOracle`` is one long-lived JVM answering JSON requests, so a
Hypothesis test pays the JVM start once. A tool is a class ``groupspec.oracle.NAME``
implementing ``Tool``: adding one is adding a file.

This floor does process I/O (like ``brokers/``); nothing below it imports it.
"""

from groupspec.jvm.build import JvmBuildError, build, classpath
from groupspec.jvm.driver import JvmOracle, JvmToolError

__all__ = ["JvmBuildError", "JvmOracle", "JvmToolError", "build", "classpath"]
