"""The paper studies: one papermill notebook per table/figure of the HML-RF paper.

``python -m hmlkit.studies run [NAMES...] --profile quick|standard|paper`` executes them
(:mod:`.runner`), each writing ``results/<name>.nc`` and ``figures/<name>.png``, then writes
``results/REPORT.md`` (:mod:`.report`) judging the paper's claims (:mod:`.claims`) against the
paper's published values (:mod:`.paper_values`). Settings per profile: :mod:`.profiles`.
"""
from .profiles import PROFILES, STUDIES, settings

__all__ = ["PROFILES", "STUDIES", "settings", "run"]


def run(*args, **kwargs):
    from .runner import run as _run

    return _run(*args, **kwargs)
