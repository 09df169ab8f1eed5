"""Compiling the oracle's Java sources against the cached Kafka jars.

The classes go to ``$GROUPSPEC_CACHE/jvm/<digest>/classes``, where the digest covers every
source file and the Kafka version, so an edited source is recompiled and an unchanged one
never is. Compilation writes to a staging directory renamed into place, so a build cut
off half-way is never taken for a finished one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from groupspec.brokers.common import cache_dir
from groupspec.brokers.kafka import KAFKA_VERSION, kafka_libs

#: Where the Java sources live (package data of groupspec).
SOURCES = Path(__file__).parent / "java"

#: The class the JVM starts.
MAIN_CLASS = "groupspec.oracle.Main"


class JvmBuildError(RuntimeError):
    """The oracle cannot be compiled: no JDK, no Kafka jars, or javac failed."""


def _sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def _digest(sources: list[Path]) -> str:
    h = hashlib.sha256(KAFKA_VERSION.encode())
    for path in sources:
        h.update(str(path.relative_to(SOURCES)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _javac() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "javac").is_file():
        return str(Path(java_home) / "bin" / "javac")
    javac = shutil.which("javac")
    if javac is None:
        raise JvmBuildError("a JDK (javac, 17 or later) is needed for the JVM oracle")
    return javac


def build(*, fetch: bool = False) -> Path:
    """The directory of compiled oracle classes, compiling them first when needed.

    ``fetch`` lets the Kafka jars be downloaded (set-up only; tests never download).
    """
    try:
        libs = kafka_libs(fetch=fetch)
    except RuntimeError as e:
        raise JvmBuildError(str(e)) from e
    sources = _sources()
    if not sources:
        raise JvmBuildError(f"no Java sources under {SOURCES}")
    home = cache_dir() / "jvm" / _digest(sources)
    classes = home / "classes"
    if classes.is_dir():
        return classes
    home.mkdir(parents=True, exist_ok=True)
    staging = home / f"classes.partial.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [
        _javac(), "-nowarn", "-encoding", "UTF-8", "--release", "17",
        "-cp", str(libs / "*"), "-d", str(staging), *map(str, sources),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise JvmBuildError(
            f"javac failed (exit {done.returncode}):\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
        )
    try:
        staging.rename(classes)
    except OSError:
        # Another process finished the same build first: keep theirs.
        shutil.rmtree(staging, ignore_errors=True)
        if not classes.is_dir():
            raise
    return classes


def classpath(*, fetch: bool = False) -> str:
    """The JVM class path: the compiled oracle, then every Kafka jar."""
    classes = build(fetch=fetch)
    return os.pathsep.join([str(classes), str(kafka_libs(fetch=fetch) / "*")])
