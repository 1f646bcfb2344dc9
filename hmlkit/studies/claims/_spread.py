"""Whether a difference between two rows is beyond the folds' noise: the sentence every
diagnosis (``diagnose``, ``diagnose_seeds``) uses to compare two rows."""
from __future__ import annotations

import numpy as np

# a difference below this many standard errors of the folds' mean is "within the spread"
SPREAD_SE = 2.0


def _se(values):
    """Standard error of the mean of fold values (NaN for one fold)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def versus(a_name, a_folds, b_name, b_folds):
    """'A x below B y (d); fold spread ...': whether a difference is beyond the folds' noise."""
    a, b = float(np.nanmean(a_folds)), float(np.nanmean(b_folds))
    se_a = _se(a_folds)
    se = np.sqrt(np.nansum([se_a ** 2, _se(b_folds) ** 2])) if np.isfinite(se_a) else np.nan
    text = f"{a_name} {a:.3f} vs {b_name} {b:.3f} (difference {a - b:+.3f}"
    if not np.isfinite(se):
        return text + "; one fold)"
    within = abs(a - b) <= SPREAD_SE * se
    return text + f", standard error over folds {se:.3f}: " + ("within the folds' spread, i.e. a tie)" if within
                                                            else "beyond the folds' spread)")
