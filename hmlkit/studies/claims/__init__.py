"""The claims of the papers, judged on our results, one function per claim.

``paper``
    the HML-RF paper's claims (Section 4), for the paper studies;
``seeds``
    the four seed papers' claims, for the ``seed_*`` studies, each with the paper's
    published numbers (:mod:`hmlkit.studies.paper_values`) beside ours.

Each claim returns a :class:`ClaimResult` (with a diagnosis of a miss and the reason a claim
holds trivially, :mod:`.diagnose`) with verdict ``"holds"``, ``"does not hold"`` or
``"not checked"`` (the methods it compares were not run or not implemented: the detail says
which). Thresholds are stated in the claim's text; a claim that does not hold on our data is
reported as such, never tuned away. A claim that one row beats another holds only when its win
is beyond the folds' spread (:func:`._spread.beats`: twice the standard error of the per-fold
differences); a smaller win is a tie, named in the detail, and does not hold.
"""
from __future__ import annotations

from . import paper, seeds
from ._base import FAILS, HOLDS, UNCHECKED, ClaimResult, NotChecked, verdict
from .diagnose import diagnose

# study -> [(claim id, text, function(ds) -> (verdict, detail))]
CLAIMS = {**paper.CLAIMS, **seeds.CLAIMS}

__all__ = ["CLAIMS", "ClaimResult", "FAILS", "HOLDS", "NotChecked", "UNCHECKED", "evaluate", "verdict"]


def evaluate(study, ds):
    """Judge every claim of ``study`` on its result Dataset ``ds``."""
    out = []
    for cid, text, fn in CLAIMS.get(study, []):
        try:
            result, detail = fn(ds)
        except NotChecked as exc:
            result, detail = UNCHECKED, str(exc)
        except (KeyError, ValueError) as exc:
            result, detail = UNCHECKED, f"result lacks what the claim needs: {exc}"
        res = ClaimResult(study, cid, text, result, detail)
        res.diagnosis, res.trivial = diagnose(res, ds)
        out.append(res)
    return out
