"""The one place time comes from.

Every job takes an explicit ``now``; when it does not, it asks :func:`now`, which honours a
process-wide override (the CLI's ``--now``) and otherwise the real clock (so freezegun works).
:func:`is_pinned` tells the two apart: a pinned clock is time travel (replay, an eval, ``--now``
in the past), where what is dated after it does not exist yet; on the real clock a note dated
after today is a plan. Nothing here is evaluated at import time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import ConfigError, InputError

_override: dt.datetime | None = None


def system_timezone() -> dt.tzinfo:
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:  # pragma: no cover - tzlocal failing falls back to UTC
        return dt.UTC


def system_timezone_name() -> str:
    """The IANA name of this machine's zone (``UTC`` when it cannot be told)."""
    try:
        import tzlocal

        name = tzlocal.get_localzone_name()
    except Exception:  # pragma: no cover - tzlocal failing falls back to UTC
        name = None
    return name or "UTC"


def zone(name: str | None) -> dt.tzinfo:
    """The tzinfo for an IANA name; None means the system zone."""
    if not name:
        return system_timezone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(
            f"timezone: unknown zone {name!r} (use an IANA name such as Europe/Berlin)"
        ) from exc


def now(tz: dt.tzinfo | None = None) -> dt.datetime:
    """The current time, timezone-aware. Converted to ``tz`` when given."""
    current = _override if _override is not None else dt.datetime.now(dt.UTC)
    return current.astimezone(tz) if tz is not None else current


def is_pinned() -> bool:
    """Whether the clock is pinned (``--now``, :func:`set_now`, :func:`pinned`) rather than real.
    freezegun freezes the real clock: under it this stays False."""
    return _override is not None


def set_now(value: dt.datetime | None) -> None:
    """Pin the clock (the CLI's --now); None releases it."""
    global _override
    if value is not None and value.tzinfo is None:
        raise ValueError("set_now needs a timezone-aware datetime")
    _override = value


@contextlib.contextmanager
def pinned(value: dt.datetime) -> Iterator[None]:
    previous = _override
    set_now(value)
    try:
        yield
    finally:
        set_now(previous)


def parse_instant(text: str, tz: dt.tzinfo | None = None) -> dt.datetime:
    """Parse ISO 8601 (date or datetime). A naive value is taken in ``tz`` (default UTC)."""
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise InputError(f"not an ISO 8601 date/time: {text!r} (e.g. 2026-05-01T09:30+02:00)") from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz or dt.UTC)
    return value
