"""The kit's benchmarks (not part of the installed package; run from the repository root).

``python -m benchmarks`` (``make bench``) is ``python -m benchmarks.speed``: every part of the
speed benchmark, each in its own interpreter; ``--parts peers`` is the peer comparison alone,
checked against the ratios recorded in ``benchmarks/peers_record.json`` (``--record``
stores a run's). ``python -m benchmarks.scale`` is the scaling sweep. ``benchmarks.common``
holds what they share. The package ``hmlkit`` never imports this one.
"""
