"""The kit's benchmarks (not part of the installed package; run from the repository root).

``python -m benchmarks`` (``make bench``) is ``python -m benchmarks.speed``: every part of the
speed benchmark, each in its own interpreter. ``python -m benchmarks.peers`` is its peer
comparison alone (with ``--record`` to store the ratios the regression guard compares
against), ``python -m benchmarks.scale`` the scaling sweep. ``benchmarks.common`` holds what
they share. The package ``hmlkit`` never imports this one.
"""
