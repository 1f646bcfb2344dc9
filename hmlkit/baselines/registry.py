"""The registry of the comparison tables' methods: name -> :class:`MethodSpec`."""
from __future__ import annotations

from ._clustering_registry import clustering_methods
from ._completion_registry import completion_methods
from ._spec import MethodSpec


def registry() -> dict:
    """All registered methods, name -> :class:`MethodSpec`."""
    out = {}
    for spec in list(clustering_methods()) + list(completion_methods()):
        if spec.name in out:
            raise RuntimeError(f"method {spec.name!r} registered twice")
        out[spec.name] = spec
    return out


def get_method(name: str) -> MethodSpec:
    reg = registry()
    if name not in reg:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(sorted(reg))}")
    return reg[name]
