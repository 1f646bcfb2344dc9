"""The interactive layer of ``studies/explore.ipynb``, above the studies:

- :mod:`hmlkit.explore.engine`: parameter sweeps, headless or in a thread (no widget);
- :mod:`hmlkit.explore.panel`: the sweep panel (ipywidgets) over the engine;
- :mod:`hmlkit.explore.widgets`: the explore panel (one clustering per control change).

Nothing below it (the estimators, the baselines, the studies) imports it, and importing it
loads neither ipywidgets nor the engine: import the module you use.
"""
