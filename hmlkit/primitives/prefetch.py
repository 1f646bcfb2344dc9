"""Software prefetch for the numba kernels (intrinsics): the split search, the leaf kNN, AM."""
from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _prefetch_codegen(context, builder, sig, args):
    """``llvm.prefetch`` (read, locality 3: every cache level) of the element of the
    array ``args[0]`` at the indices ``args[1:]``."""
    aryty = sig.args[0]
    arr = context.make_array(aryty)(context, builder, args[0])
    idx = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:])]
    ptr = cgutils.get_item_pointer(context, builder, aryty, arr, idx, wraparound=False, boundscheck=False)
    i8p = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32), ir.IntType(32)])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
    builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(ir.IntType(32), 0),
                      ir.Constant(ir.IntType(32), 3), ir.Constant(ir.IntType(32), 1)])
    return context.get_dummy_value()


@intrinsic
def prefetch1d(typingctx, ary, i):
    """Hint the CPU to bring the cache line of ``ary[i]`` into every cache level (as
    ``prefetch2d``); an index past the end is harmless (no load, no fault)."""
    if not isinstance(ary, types.Array) or ary.ndim != 1:
        return None
    return types.none(ary, i), _prefetch_codegen


@intrinsic
def prefetch2d(typingctx, ary, i, j):
    """Hint the CPU to bring the cache line of ``ary[i, j]`` into every cache level
    (``llvm.prefetch``, read, locality 3); no load, no fault, no result."""
    if not isinstance(ary, types.Array) or ary.ndim != 2:
        return None
    return types.none(ary, i, j), _prefetch_codegen


@nb.njit(cache=True, inline="always")
def prefetch_ranks(R, f, samples, start, end):
    """Prefetch the rank of every sample of ``samples[start:end]`` on feature ``f``: the
    gather that follows reads them from cache instead of waiting on each miss in turn."""
    for a in range(start, end):
        prefetch2d(R, f, samples[a])
