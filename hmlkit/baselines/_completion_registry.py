"""Registry entries of the tag completion methods (Tables 6-8)."""
from __future__ import annotations

from ._spec import MethodSpec


def _hmlrf(method):
    def factory(**params):
        from ..complete import HMLTagCompleter

        return HMLTagCompleter(method=method, **params)

    return factory


def completion_methods():
    return [
        MethodSpec(f"hmlrf_{m.lower()}", "completion", _hmlrf(m), ("hml",), "Wang, Zhu, Gong (this paper)",
                   f"HML-RF({m}) tag completion")
        for m in ("LN", "GC", "AM")
    ]
