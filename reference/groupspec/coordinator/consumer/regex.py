"""Regular-expression subscriptions (KIP-848): the regex dialect and the resolution itself.

Kafka 4.1.2 compiles a member's ``SubscribedTopicRegex`` with RE2/J
(``com.google.re2j.Pattern``) and a topic matches when the whole name matches
(``Matcher.matches()``). Sources: Utils.throwIfRegularExpressionIsInvalid (the check and its
message), GroupMetadataManager.refreshRegularExpressions (the executor task: every topic
of the metadata image against every regex, stamped with the image's version and the
start time).

Here the dialect is RE2's, through the ``google-re2`` binding of the C++ library (the same
syntax as RE2/J), with a full match. Where the two differ (docs/deviations.md): the error
descriptions are RE2/J's for the errors mapped below (others keep the C++ text); RE2/J
also rejects ``\\C`` and a capture group name used twice, which C++ RE2 accepts, and both
are checked here; RE2/J matches UTF-16 code units, C++ RE2 UTF-8 (the same on topic names,
which are ASCII). Without the binding, Python's ``re`` with ``fullmatch`` is used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping

from groupspec.coordinator.consumer.group import ResolvedRegex

try:  # pragma: no cover - which branch runs depends on the installation
    import re2 as _re2

    _OPTIONS = _re2.Options()
    _OPTIONS.log_errors = False
    HAVE_RE2 = True
except ImportError:  # pragma: no cover
    HAVE_RE2 = False

#: C++ RE2's error text (up to the colon) -> RE2/J's description (its Parser's ERR_ strings)
_RE2J_DESCRIPTIONS = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "regexp/syntax: internal error",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "trailing \\": "trailing backslash at end of expression",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
}

_GROUP_NAME = re.compile(r"\(\?P?<([A-Za-z0-9_]+)>")


def _re2j_only_error(regex: str) -> str | None:
    """What RE2/J rejects and C++ RE2 accepts: ``\\C`` and a group name used twice."""
    i = 0
    while i < len(regex) - 1:
        if regex[i] == "\\":
            if regex[i + 1] == "C":
                return "invalid escape sequence"
            i += 2
            continue
        i += 1
    names = _GROUP_NAME.findall(regex)
    if len(names) != len(set(names)):
        return "duplicate capture group name"
    return None


@functools.lru_cache(maxsize=1024)
def _compile(regex: str) -> tuple[Callable[[str], bool] | None, str | None]:
    """(full-match test, None) or (None, RE2/J's error description)."""
    if HAVE_RE2:
        try:
            compiled = _re2.compile(regex, _OPTIONS)
        except _re2.error as e:
            raw = e.args[0] if e.args else str(e)
            text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
            head = text.split(": ", 1)[0]
            return None, _RE2J_DESCRIPTIONS.get(head, text)
        own = _re2j_only_error(regex)
        if own is not None:
            return None, own
        return (lambda name: compiled.fullmatch(name) is not None), None
    try:  # pragma: no cover
        pattern = re.compile(regex)
    except re.error as e:  # pragma: no cover
        return None, str(e.msg)
    return (lambda name: pattern.fullmatch(name) is not None), None  # pragma: no cover


def regex_error(regex: str) -> str | None:
    """None if ``regex`` compiles, else the description RE2/J gives (Pattern.compile's
    PatternSyntaxException.getDescription)."""
    return _compile(regex)[1]


def invalid_regex_message(regex: str, description: str) -> str:
    """InvalidRegularExpression's message (Utils.throwIfRegularExpressionIsInvalid)."""
    return f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}."


def matches(regex: str, topic: str) -> bool:
    """Whether the whole topic name matches (RE2/J ``matcher(topic).matches()``)."""
    test = _compile(regex)[0]
    return test is not None and test(topic)


def resolve(regexes: Iterable[str], topic_names: Iterable[str], version: int,
            now_ms: int) -> dict[str, ResolvedRegex]:
    """refreshRegularExpressions: each regex -> the topics of the image it matches (a regex
    that does not compile resolves to nothing), at the image's version and ``now_ms``. No
    authorizer: every topic may be described."""
    names = list(topic_names)
    out: dict[str, ResolvedRegex] = {}
    for rx in regexes:
        out[rx] = ResolvedRegex(frozenset(t for t in names if matches(rx, t)), version, now_ms)
    return out


def resolved_topics(members_regexes: Mapping[str, int], resolved: Mapping[str, ResolvedRegex]) -> set[str]:
    """The topics the subscribed regexes resolved to."""
    out: set[str] = set()
    for rx in members_regexes:
        rr = resolved.get(rx)
        if rr is not None:
            out |= rr.topics
    return out
