"""Whether a difference between two rows is beyond the folds' noise: the sentence every
diagnosis (``diagnose``, ``diagnose_seeds``) uses to compare two rows, and the test a claim
that one row beats another passes only beyond that noise (:func:`beats`)."""
from __future__ import annotations

import numpy as np

# a difference below this many standard errors of the folds' mean is "within the spread"
SPREAD_SE = 2.0


def _se(values):
    """Standard error of the mean of fold values (NaN for one fold)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def _difference(a_folds, b_folds):
    """(mean of A, mean of B, standard error of A - B). Rows measured on the same folds (the
    same splits or removal seeds, as in every study) are compared fold by fold: the error is
    that of the per-fold differences. Otherwise the two errors combine; NaN with one fold."""
    a, b = np.asarray(a_folds, dtype=float).ravel(), np.asarray(b_folds, dtype=float).ravel()
    ma, mb = float(np.nanmean(a)), float(np.nanmean(b))
    if a.shape == b.shape and np.isfinite(a).all() and np.isfinite(b).all():
        return ma, mb, _se(a - b)
    se_a = _se(a)
    return ma, mb, float(np.sqrt(np.nansum([se_a ** 2, _se(b) ** 2]))) if np.isfinite(se_a) else float("nan")


def versus(a_name, a_folds, b_name, b_folds):
    """'A x below B y (d); fold spread ...': whether a difference is beyond the folds' noise."""
    a, b, se = _difference(a_folds, b_folds)
    text = f"{a_name} {a:.3f} vs {b_name} {b:.3f} (difference {a - b:+.3f}"
    if not np.isfinite(se):
        return text + "; one fold)"
    within = abs(a - b) <= SPREAD_SE * se
    return text + f", standard error over folds {se:.3f}: " + ("within the folds' spread, i.e. a tie)" if within
                                                            else "beyond the folds' spread)")


def beats(a_folds, b_folds):
    """(A's mean above B's by more than ``SPREAD_SE`` standard errors of the difference, a
    note): a claim that A beats B holds only so; a smaller gain is a tie, which the note
    says. With one fold the error is unknown and the means decide."""
    a, b, se = _difference(a_folds, b_folds)
    if not np.isfinite(se) or a > b + SPREAD_SE * se:
        return a > b, ""
    return False, (f" (difference {a - b:+.3f}, within {SPREAD_SE:g} standard errors of the per-fold "
                   f"differences, {se:.3f}: a tie)" if a > b else "")
