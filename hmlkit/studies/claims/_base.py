"""What every claim returns: a :class:`ClaimResult` whose verdict is ``"holds"``,
``"does not hold"`` or ``"not checked"``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

HOLDS, FAILS, UNCHECKED = "holds", "does not hold", "not checked"
# a result's attribute naming the methods a run was restricted to (its ``methods``
# parameter): a claim that HML-RF beats every competitor is then not checked
from ..config import RESTRICTED_ATTR  # noqa: E402  (defined where the grids, which set it, load it)


@dataclass
class ClaimResult:
    study: str
    id: str
    text: str
    verdict: str
    detail: str
    diagnosis: str = ""  # a claim that does not hold: its likely reason (claims.diagnose)
    trivial: str = ""  # a claim that holds trivially: why


def verdict(ok):
    """``HOLDS`` if ``ok`` else ``FAILS``."""
    return HOLDS if bool(ok) else FAILS


class NotChecked(Exception):
    """Raised by a claim whose methods were not run or not measured (the message says which)."""


def rivals_not_run(ds, dim="row"):
    """Rows of ``ds`` that should have run but did not: an error, or a method the kit has
    whose optional dependency is missing ("unavailable"). A claim that HML-RF beats its
    competitors raises :class:`NotChecked` naming them, instead of being judged against
    fewer competitors than the paper's. (A method the kit does not implement at all, e.g.
    the quoted S-MMC / F-MMC, is not counted: it never runs.)"""
    if "status" not in ds.variables:
        return []
    reasons = ds["reason"].values if "reason" in ds.variables else [""] * ds.sizes[dim]
    return [f"{r} ({st}: {why})" for r, st, why in zip(ds[dim].values, ds["status"].values, reasons)
            if str(st) == "error" or "unavailable" in str(why)]


def require_all_rivals(ds, dim="row"):
    restricted = ds.attrs.get(RESTRICTED_ATTR)
    if restricted:
        raise NotChecked(f"the run was restricted to methods {restricted}: the paper's other "
                         f"competitors were not run")
    missing = rivals_not_run(ds, dim)
    if missing:
        raise NotChecked("competitors that did not run: " + "; ".join(missing))


def require_measured(**values):
    """Raise :class:`NotChecked` naming every value that is not a finite number: a
    comparison with NaN is False, so a claim that looks for a failure would find none
    and hold on a result that was never measured."""
    bad = [name for name, v in values.items() if not np.all(np.isfinite(np.asarray(v, dtype=float)))]
    if bad:
        raise NotChecked("not measured (NaN): " + ", ".join(bad))
