"""What a registry entry says about a method."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class MethodSpec:
    """One method of the comparison tables.

    name : the paper's name, lower-case (``kmeans``, ``lmmc``, ``hmlrf_am``...).
    kind : ``"clustering"`` or ``"completion"``.
    factory : ``factory(**params)`` returns an unfitted estimator.
    input_modes : the input modes it accepts (``vifeat``, ``bitag``,
        ``detscore``, ``cmb``, ``blm``, ``hml`` for visual+hierarchical tags).
    citation : the paper's reference for the method.
    available : ``available()`` returns ``(True, "")`` or ``(False, reason)``
        (e.g. optional dependency missing).
    """

    name: str
    kind: str
    factory: Callable
    input_modes: tuple = ()
    citation: str = ""
    description: str = ""
    available: Callable = field(default=lambda: (True, ""))
