"""What every claim returns: a :class:`ClaimResult` whose verdict is ``"holds"``,
``"does not hold"`` or ``"not checked"``."""
from __future__ import annotations

from dataclasses import dataclass

HOLDS, FAILS, UNCHECKED = "holds", "does not hold", "not checked"


@dataclass
class ClaimResult:
    study: str
    id: str
    text: str
    verdict: str
    detail: str


def verdict(ok):
    """``HOLDS`` if ``ok`` else ``FAILS``."""
    return HOLDS if bool(ok) else FAILS


class NotChecked(Exception):
    """Raised by a claim whose methods were not run or not measured (the message says which)."""
