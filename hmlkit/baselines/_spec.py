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


class MethodParameterError(ValueError):
    """A method was given a parameter it does not take. A study that meets it stops (it is
    a mistake of the study's settings, never a row's "error" status)."""


def build_estimator(spec, **params):
    """The unfitted estimator of ``spec`` with ``params`` set.

    Raises :class:`MethodParameterError` naming the method and the parameter when the
    estimator does not take one of ``params`` (``est.get_params()``)."""
    name = spec.name
    est = spec.factory()
    own = est.get_params(deep=False)
    if own.get("clusterer") is not None:
        # a X(GC) completer: its clusterer's parameters by their own names (as its factory
        # takes them, e.g. n_clusters), or nested (clusterer__n_clusters)
        params = {(k if k in own or "__" in k else f"clusterer__{k}"): v for k, v in params.items()}
    valid = est.get_params(deep=True)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise MethodParameterError(
            f"method {name!r} does not take parameter "
            f"{', '.join(repr(u.removeprefix('clusterer__')) for u in unknown)} "
            f"(its parameters: {', '.join(sorted(k.removeprefix('clusterer__') for k in valid if k != 'clusterer'))})")
    mode = params.get("input_mode")
    if mode is not None and spec.input_modes and mode not in spec.input_modes:
        # the factory checks its own input_mode argument; set here it would reach the fit unchecked
        # (Latent MMC ran on raw features as if they were detection scores)
        raise ValueError(f"method {name!r} does not take input mode {mode!r}; it takes "
                         f"{', '.join(spec.input_modes)}")
    return est.set_params(**params)
