"""The lowest layer of the kit: numba building blocks shared by the forest, the affinity
and the completion kernels, importing nothing else of the kit.

- :mod:`.prefetch`: software prefetch intrinsics;
- :mod:`.rng`: the per-tree xorshift64* generator and the trees' seeds;
- :mod:`.topk`: the best-k list (``push_top``) and the hash order of equal scores;
- :mod:`.counting`: the stable counting sort of samples by leaf;
- :mod:`.threshold`: the split threshold between two values;
- :mod:`.parallel`: row chunks for ``prange`` loops.
"""
