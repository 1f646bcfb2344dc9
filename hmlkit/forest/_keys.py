"""The integer keys of the split search (numba): dense ranks of every feature,
each feature's mode, the keys of a local subtree's block (X's float keys, or the rank codes
of ``sample_keys``), and the per-node sort of a feature's keys."""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.prefetch import prefetch1d, prefetch2d


def dense_ranks(X):
    """Dense ranks (see ``feature_keys``) as one (d, n) array: uint16 when every rank
    fits, else uint32 (the high halves of ``feature_keys`` put back together)."""
    R, _, _, Rh, high = feature_keys(X)
    if (high < 0).all():
        return R
    out = R.astype(np.uint32)
    wide = np.flatnonzero(high >= 0)
    out[wide] |= Rh[high[wide]].astype(np.uint32) << 16
    return out


# A sample's key of feature f, R[f, s] | Rh[h, s] << 16 for a wide feature (h >= 0), is written
# out where it is read (sparse_keys, _split's gathers, _grow's partition): an inlined helper
# made a Corel5k fit 3-4 % slower (3.76-3.86 s against 3.63-3.71 s, 100 trees, one thread)
KEY_BLOCK = 32  # features transposed together by ``_feature_keys``
RANK16 = 1 << 16  # ranks a uint16 holds


def feature_keys(X, narrow=RANK16):
    """The integer keys the split search works on: dense ranks R (feature-major;
    equal values share a rank, so the split search can sort a node by integer keys and
    cut between distinct values) and each feature's mode, its most frequent rank (the
    smallest of equals) and that rank's value in X (of the first sample holding it).
    The sweeps skip the mode's samples (``sweep_hard``): on sparse features, most of a
    node. Computed once per fit; float32 X (``check_X``).

    Returns (R, mode_rank, mode_val, Rh, high). A feature with fewer than ``narrow``
    distinct values has its ranks whole in R[f] (uint16); a "wide" one has their low 16
    bits there and their high 16 bits in Rh[high[f]] (high[f] = -1 for the others), as
    long as at most half the features (and half of a probe of 32 of them, computed
    first) are wide. Otherwise R is uint32 with every rank whole (Rh empty). The keys
    are then half the memory of uint32 ranks, hence of the fit's peak beside X, and a
    node's gather walks half the bytes: at 100,000 x 4096 nuswide features 17 of 4096
    are wide (1.53 -> 0.77 GiB); at 1,000,000 x 512, 83 % of the first 64 are, and R
    stays uint32. The ranks are the same either way, hence the trees."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    n, d = X.shape
    narrow = min(int(narrow), RANK16)
    mode_rank = np.empty(d, np.uint32)
    mode_val = np.empty(d, np.float32)
    high = np.full(d, -1, np.int64)
    no_high = np.empty((0, n), np.uint16)
    every = np.arange(d, dtype=np.int64)
    mostly_wide = False
    if n > narrow:
        # a few features spread over X first: when most of them are wide, so are most
        # features, and the ranks go straight to uint32 (not computed twice)
        probe = np.unique(np.linspace(0, d - 1, min(d, KEY_BLOCK)).astype(np.int64))
        top = _feature_keys(X, probe, np.empty((probe.size, n), np.uint16), mode_rank, mode_val, 0)
        mostly_wide = 2 * np.count_nonzero(top >= narrow) > probe.size
    if not mostly_wide:
        R = np.empty((d, n), np.uint16)
        wide = np.flatnonzero(_feature_keys(X, every, R, mode_rank, mode_val, 0) >= narrow)
        if wide.size == 0:
            return R, mode_rank, mode_val, no_high, high
        if 2 * wide.size <= d:
            high[wide] = np.arange(wide.size)
            Rh = np.empty((wide.size, n), np.uint16)
            _feature_keys(X, wide.astype(np.int64), Rh, mode_rank, mode_val, 16)
            return R, mode_rank, mode_val, Rh, high
        del R  # mostly wide after all: one uint32 array is smaller than low and high halves
    R = np.empty((d, n), np.uint32)
    _feature_keys(X, every, R, mode_rank, mode_val, 0)
    return R, mode_rank, mode_val, no_high, high


def split_keys(X, narrow=RANK16):
    """Every key array ``grow_tree`` takes: ``feature_keys(X)`` and, for the sparse
    features, the lists of ``sparse_keys``. Returns (R, mode_rank, mode_val, Rh, high,
    sp_start, sp_len, sp_idx)."""
    R, mode_rank, mode_val, Rh, high = feature_keys(X, narrow)
    return (R, mode_rank, mode_val, Rh, high, *sparse_keys(R, mode_rank, Rh, high))


# a feature gets its list of off-mode samples when at most 1/SPARSE_SHARE of them hold a key
# other than its mode: the lists then take at most a quarter of R's memory (int32 entries
# against uint16 keys), and they pay only on nodes of more than SPARSE_GATHER (4) times as many samples
SPARSE_SHARE = 8


@nb.njit(cache=True)
def sparse_keys(R, mode_rank, Rh, high):
    """The samples off each sparse feature's mode, for the split search's sparse gather
    (``search_node``): sp_idx[sp_start[f]:sp_start[f] + sp_len[f]] are the samples whose key
    on f is not ``mode_rank[f]``, ascending; sp_len[f] = -1 for a feature with more of them
    than n / ``SPARSE_SHARE`` (no list: gathered whole). Bag-of-words and tag-derived
    features (Corel5k's visual words: 1.6 % non-zero) are sparse; dense continuous ones
    get no list. Returns (sp_start, sp_len, sp_idx)."""
    d, n = R.shape
    sp_start = np.zeros(d, np.int64)
    sp_len = np.full(d, -1, np.int64)
    cap = n // SPARSE_SHARE
    tot = 0
    for f in range(d):
        h = high[f]
        md = mode_rank[f]
        c = 0
        for s0 in range(0, n, 1024):  # a dense feature is given up after about n / SPARSE_SHARE keys
            for s in range(s0, min(n, s0 + 1024)):
                v = np.uint32(R[f, s])
                if h >= 0:
                    v |= np.uint32(Rh[h, s]) << 16
                c += v != md
            if c > cap:
                break
        if c <= cap:
            sp_start[f] = tot
            sp_len[f] = c
            tot += c
    sp_idx = np.empty(tot, np.int32)
    for f in range(d):
        if sp_len[f] < 0:
            continue
        h = high[f]
        md = mode_rank[f]
        b = sp_start[f]
        for s in range(n):
            v = np.uint32(R[f, s])
            if h >= 0:
                v |= np.uint32(Rh[h, s]) << 16
            if v != md:
                sp_idx[b] = s
                b += 1
    return sp_start, sp_len, sp_idx


@nb.njit(cache=True, inline="always")
def float_key(b):
    """The order-preserving uint32 key of the float32 whose bits are ``b`` (no NaN):
    keys order as the values do, and equal values share a key (-0.0 is taken as +0.0),
    so keys order and tie exactly as the dense ranks."""
    b = np.uint32(0) if b == np.uint32(0x80000000) else b
    return b ^ (((b >> 31) * np.uint32(0x7FFFFFFF)) | np.uint32(0x80000000))


@nb.njit(cache=True)
def float_keys(v):
    """``float_key`` of every entry of the float32 array ``v``."""
    bits = v.view(np.uint32)
    out = np.empty(v.shape[0], np.uint32)
    for i in range(v.shape[0]):
        out[i] = float_key(bits[i])
    return out


LOCAL_FILL_BLOCK = 16  # samples (and features) of one tile of fill_local_keys: a cache line of X or L
FILL_AHEAD = 64  # features ahead of the current tile whose lines of X fill_local_keys prefetches


@nb.njit(cache=True)
def fill_local_keys(X, samples, start, end, L, loc):
    """The keys of a local subtree (see ``grow_tree``): L[f, j] = ``float_key`` of
    X[samples[start + j], f], and loc[start + j] = j.

    A tile of 16 samples x 16 features goes through a small buffer: each of the tile's
    16 lines of X (one per sample) is read whole at once, then each of its 16 lines of L
    (one per feature) written whole. Read feature by feature across the 16 rows instead
    (the earlier code), the rows' lines of the same features all fell in one set of the L1 cache
    (the rows lie a multiple of 4 KiB apart at 1024 or more features) and evicted each
    other before their 16 features were read: 6.5-6.9 cycles per key against 3.6 at
    4096 features. The lines FILL_AHEAD features ahead are prefetched as the tiles go
    (then the next block's first ones), a few per tile: the whole next block prefetched at
    once issued more misses than the core tracks."""
    d = X.shape[1]
    N = end - start
    bits = X.view(np.uint32)
    B = LOCAL_FILL_BLOCK
    tile = np.empty((B, B), np.uint32)
    for jj in range(min(B, N)):  # the first block's first lines
        for c in range(0, min(d, FILL_AHEAD), 16):
            prefetch2d(X, samples[start + jj], c)
    for j0 in range(0, N, B):
        w = min(B, N - j0)
        w_next = min(B, N - j0 - w)
        for jj in range(w):
            loc[start + j0 + jj] = j0 + jj
        for f0 in range(0, d, B):
            fw = min(B, d - f0)
            fa = f0 + FILL_AHEAD
            for jj in range(w):
                if fa < d:
                    prefetch2d(X, samples[start + j0 + jj], fa)
                elif jj < w_next and fa - d < d:
                    prefetch2d(X, samples[start + j0 + w + jj], fa - d)
            for jj in range(w):
                s = samples[start + j0 + jj]
                for ff in range(fw):
                    tile[ff, jj] = float_key(bits[s, f0 + ff])
            for ff in range(fw):
                for jj in range(w):
                    L[f0 + ff, j0 + jj] = tile[ff, jj]


def no_codes(d):
    """The rank codes of ``sample_keys`` that say "none": the local subtrees take X's float keys."""
    return np.empty((0, d), np.uint32), np.empty(0, np.int64), np.empty(0, np.uint32)


def sample_keys(R, Rh, mode_rank, sparse=None):
    """The dense ranks sample-major, the rank codes a local subtree's block is filled from
    (``fill_local_ranks``), as (S, S_ptr, S_ent), when every feature's ranks fit in 16 bits
    (no wide feature):

    - sparse (most keys at their feature's mode, as bag-of-words features): S_ent[S_ptr[s]:
      S_ptr[s + 1]] = f << 16 | R[f, s] for the features f where sample s is off the mode,
      ascending; 4 bytes an entry, taken when that is less than 2 bytes a key (S empty,
      uint16);
    - else dense: S[s, f] = R[f, s], (n, d) uint16 (S_ptr, S_ent empty).

    ``sparse`` True / False forces one layout (the first needs d <= 65,536). Else S is an empty
    (0, d) uint32 array and the local subtrees take X's float keys. A local subtree's block
    then holds 2 bytes a key instead of 4, with the same order and ties, hence the same trees."""
    d, n = R.shape
    if R.dtype != np.uint16 or Rh.shape[0] > 0:
        return no_codes(d)
    counts = _off_mode_counts(R, mode_rank)
    if sparse is None:
        sparse = d <= 1 << 16 and 2 * int(counts.sum()) < n * d
    if sparse:
        if d > 1 << 16:
            raise ValueError(f"sparse rank codes hold at most 65,536 features, got {d}")
        S_ptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=S_ptr[1:])
        return np.empty((0, d), np.uint16), S_ptr, _sparse_codes(R, mode_rank, S_ptr)
    return _transpose16(R), np.empty(0, np.int64), np.empty(0, np.uint32)


@nb.njit(cache=True)
def _off_mode_counts(R, mode_rank):
    """Per sample, the features whose key is not their mode."""
    d, n = R.shape
    counts = np.zeros(n, np.int64)
    for f in range(d):
        md = mode_rank[f]
        for s in range(n):
            counts[s] += R[f, s] != md
    return counts


@nb.njit(cache=True)
def _sparse_codes(R, mode_rank, S_ptr):
    """The entries of the sparse rank codes (see ``sample_keys``), feature by feature."""
    d, n = R.shape
    out = np.empty(S_ptr[n], np.uint32)
    pos = S_ptr[:n].copy()
    for f in range(d):
        md = mode_rank[f]
        for s in range(n):
            v = np.uint32(R[f, s])
            if v != md:
                out[pos[s]] = (np.uint32(f) << 16) | v
                pos[s] += 1
    return out


@nb.njit(cache=True, parallel=True)
def _transpose16(R):
    """R.T as a C-contiguous array, in tiles of 64 x 64 keys (numpy's copy of R.T walks
    one of the two arrays a line per key)."""
    d, n = R.shape
    S = np.empty((n, d), R.dtype)
    T = 64
    for b in nb.prange((n + T - 1) // T):
        s0 = b * T
        s1 = min(n, s0 + T)
        for f0 in range(0, d, T):
            f1 = min(d, f0 + T)
            for s in range(s0, s1):
                for f in range(f0, f1):
                    S[s, f] = R[f, s]
    return S


RANK_FILL_BLOCK = 32  # samples (and features) of one tile of fill_local_ranks: a line of S or L
SPARSE_FILL_AHEAD = 16  # entries a prefetch covers (a line of uint32)


@nb.njit(cache=True)
def fill_local_ranks(S, S_ptr, S_ent, mode_rank, samples, start, end, L, loc):
    """``fill_local_keys`` from the rank codes (S, S_ptr, S_ent) = ``sample_keys`` instead of
    X: L[f, j] = the rank of samples[start + j] on f, loc[start + j] = j."""
    if S_ptr.shape[0] > 0:
        _fill_sparse(S_ptr, S_ent, mode_rank, samples, start, end, L, loc)
    else:
        _fill_dense(S, samples, start, end, L, loc)


@nb.njit(cache=True)
def _fill_sparse(S_ptr, S_ent, mode_rank, samples, start, end, L, loc):
    """``fill_local_ranks`` from sparse codes: per tile of 32 samples (a line of each row of L),
    every row set to its feature's mode, then each sample's entries written over it; the next
    tile's entries prefetched as this one's are written."""
    d = L.shape[0]
    N = end - start
    B = RANK_FILL_BLOCK
    for j0 in range(0, N, B):
        w = min(B, N - j0)
        w_next = min(B, N - j0 - w)
        for jj in range(w):
            loc[start + j0 + jj] = j0 + jj
        for jj in range(w_next):
            s = samples[start + j0 + w + jj]
            for e in range(S_ptr[s], S_ptr[s + 1], SPARSE_FILL_AHEAD):
                prefetch1d(S_ent, e)
        for f in range(d):
            md = mode_rank[f]
            for jj in range(w):
                L[f, j0 + jj] = md
        for jj in range(w):
            s = samples[start + j0 + jj]
            for e in range(S_ptr[s], S_ptr[s + 1]):
                v = S_ent[e]
                L[v >> 16, j0 + jj] = v & 0xFFFF


@nb.njit(cache=True)
def _fill_dense(S, samples, start, end, L, loc):
    """``fill_local_ranks`` from dense codes: tiles of 32 samples x 32 features (a line of
    uint16 keys), each sample's row of S read whole, the lines ``FILL_AHEAD`` features ahead
    prefetched as the tiles go."""
    d = S.shape[1]
    N = end - start
    B = RANK_FILL_BLOCK
    tile = np.empty((B, B), S.dtype)
    for jj in range(min(B, N)):
        for c in range(0, min(d, FILL_AHEAD), B):
            prefetch2d(S, samples[start + jj], c)
    for j0 in range(0, N, B):
        w = min(B, N - j0)
        w_next = min(B, N - j0 - w)
        for jj in range(w):
            loc[start + j0 + jj] = j0 + jj
        for f0 in range(0, d, B):
            fw = min(B, d - f0)
            fa = f0 + FILL_AHEAD
            for jj in range(w):
                if fa < d:
                    prefetch2d(S, samples[start + j0 + jj], fa)
                elif jj < w_next and fa - d < d:
                    prefetch2d(S, samples[start + j0 + w + jj], fa - d)
            for jj in range(w):
                s = samples[start + j0 + jj]
                for ff in range(fw):
                    tile[ff, jj] = S[s, f0 + ff]
            for ff in range(fw):
                for jj in range(w):
                    L[f0 + ff, j0 + jj] = tile[ff, jj]


@nb.njit(cache=True)
def _float_order(v, keys, order, tmp, cnt):
    """An order of the float32 values v (no NaN; -0.0 given as +0.0): LSD
    radix sort (11-bit digits) of their bits mapped to order-preserving
    uint32 keys (``keys`` receives them); passes whose digit is the same
    for every value are skipped. Returns the array holding the order."""
    n = v.shape[0]
    bits = v.view(np.uint32)
    for a in range(n):
        keys[a] = float_key(bits[a])
    for b in range(3 * 2048):
        cnt[b] = 0
    for a in range(n):
        k = keys[a]
        cnt[k & 2047] += 1
        cnt[2048 + ((k >> 11) & 2047)] += 1
        cnt[4096 + (k >> 22)] += 1
    for a in range(n):
        order[a] = a
    src = order
    dst = tmp
    for p in range(3):
        base = 2048 * p
        shift = 11 * p
        if cnt[base + ((keys[0] >> shift) & 2047)] == n:
            continue  # one digit value: this pass keeps the order
        tot = 0
        for b in range(base, base + 2048):
            c = cnt[b]
            cnt[b] = tot
            tot += c
        for a in range(n):
            i = src[a]
            b = base + ((keys[i] >> shift) & 2047)
            dst[cnt[b]] = i
            cnt[b] += 1
        src, dst = dst, src
    return src


@nb.njit(parallel=True, cache=True)
def _feature_keys(X, feats, out, mode_rank, mode_val, shift):
    """Dense ranks of the features ``feats`` (see ``feature_keys``): out[j] = the ranks of
    feature feats[j] shifted right by ``shift`` (cast to out's dtype: a uint16 keeps
    their low 16 bits), and mode_rank, mode_val of each. Returns each one's largest
    rank. Features go in blocks of ``KEY_BLOCK``: a block is copied out of the
    sample-major X row by row (contiguous reads when ``feats`` are consecutive; reading
    one feature's column alone walks X with a stride of a whole row, a cache miss per
    sample), each of its columns radix-sorted (``_float_order``) and walked once in
    sorted order for its ranks and its mode."""
    n = X.shape[0]
    n_feats = feats.shape[0]
    top = np.zeros(n_feats, np.int64)
    n_blocks = (n_feats + KEY_BLOCK - 1) // KEY_BLOCK
    for blk in nb.prange(n_blocks):
        j0 = blk * KEY_BLOCK
        w = min(KEY_BLOCK, n_feats - j0)
        col = np.empty((w, n), np.float32)
        for a in range(n):
            for j in range(w):
                col[j, a] = X[a, feats[j0 + j]] + np.float32(0.0)  # -0.0 + 0.0 = +0.0: one key for both zeros
        keys = np.empty(n, np.uint32)
        order = np.empty(n, np.int64)
        tmp = np.empty(n, np.int64)
        cnt = np.empty(3 * 2048, np.int64)
        rank = np.empty(n, np.uint32)
        for j in range(w):
            f = feats[j0 + j]
            srt = _float_order(col[j], keys, order, tmp, cnt)
            r = 0
            run0 = 0  # start of the current run of equal values in sorted order
            best = 0
            best0 = 0
            best_len = 0
            rank[srt[0]] = 0
            for a in range(1, n + 1):
                if a == n or keys[srt[a]] != keys[srt[a - 1]]:
                    if a - run0 > best_len:  # strict: the smallest rank of equal counts
                        best_len = a - run0
                        best = r
                        best0 = run0
                    if a == n:
                        break
                    r += 1
                    run0 = a
                rank[srt[a]] = r
            for a in range(n):  # in sample order: the sorted walk's stores were scattered
                out[j0 + j, a] = rank[a] >> shift
            top[j0 + j] = r
            first = n
            for a in range(best0, best0 + best_len):
                first = min(first, srt[a])
            mode_rank[f] = best
            mode_val[f] = X[first, f]
    return top


SIGN64 = np.int64(-(2**63))
# counting sort only for a key range of at most this many times the keys: it costs about
# 3 passes over the range, measured per key at 6-7 cycles at range N, 15-24 at 8 N,
# 30-39 at 16 N and 108-131 at 64 N (the bound until now), against 25-55 for the packed
# quicksort and the LSD radix (micro-benchmark, 40 to 4000 keys)
COUNTING_SPAN = 8


@nb.njit(cache=True, inline="always")
def _counting_first(N, span, cnt):
    """Whether N keys over a range of ``span`` go to counting sort: about 3 passes over
    the range plus 2 over the keys, taken for a range of at most ``COUNTING_SPAN`` times
    the keys; up to 32 keys only when the range is within N^2 / 4, what insertion
    sort's moves cost (deep nodes: a node of 100 samples of a 17,523-sample tree has
    ~20 keys off the feature's mode spread over thousands of ranks, where counting cost
    several times insertion)."""
    counting_ok = span < cnt.shape[0] and span <= COUNTING_SPAN * N
    return counting_ok and (N > 32 or 4 * span <= N * N)


@nb.njit(cache=True)
def _sort_keys(keys, N, kmin, kmax, order, tmp, cnt):
    """A stable order of keys[:N] (uint32) into ``order``: one counting-sort pass over
    kmin..kmax where ``_counting_first`` says so, else LSD radix (8-bit digits). The
    nodes that ``sort_node_keys`` sorts itself (insertion sort, ``_radix_packed``) do
    not come here. Order within equal keys is irrelevant to the hard sweep (integer sums); every
    branch keeps the gathered order (stable), so choosing one of them for another never
    changes it, and the soft sweep's float sums stay the same bits."""
    span = kmax - kmin
    if _counting_first(N, span, cnt):
        for b in range(span + 1):
            cnt[b] = 0
        for a in range(N):
            cnt[keys[a] - kmin] += 1
        tot = 0
        for b in range(span + 1):
            c = cnt[b]
            cnt[b] = tot
            tot += c
        for a in range(N):
            b = keys[a] - kmin
            order[cnt[b]] = a
            cnt[b] += 1
        return order
    for a in range(N):
        order[a] = a
    shift = 0
    src = order
    dst = tmp
    while True:
        for b in range(256):
            cnt[b] = 0
        for a in range(N):
            cnt[((keys[src[a]] - kmin) >> shift) & 255] += 1
        tot = 0
        for b in range(256):
            c = cnt[b]
            cnt[b] = tot
            tot += c
        for a in range(N):
            i = src[a]
            b = ((keys[i] - kmin) >> shift) & 255
            dst[cnt[b]] = i
            cnt[b] += 1
        src, dst = dst, src
        shift += 8
        if shift >= 32 or (span >> shift) == 0:
            break
    return src


INSERTION_MAX = 32
# digits of the small-node radix sort: 64 buckets, so that the per-pass cost over the
# buckets stays below the keys' own (33 to 512 keys)
SMALL_RADIX_BITS = 6


@nb.njit(cache=True, inline="always")
def _radix_packed(a, b, N, span, cnt):
    """Stable LSD radix sort of the packed values a[:N] = offset << 32 | position by their
    offset (at most ``span``), ``SMALL_RADIX_BITS`` per pass, ``b`` the other buffer;
    a digit that every value shares costs its count but no move. Returns the buffer
    holding the sorted values. Measured in one tree at 1M x 512, numba's quicksort
    of the same int64 took 90-100 cycles per key on nodes of 32 to 511 keys: most of
    its compares mispredict on keys in random order; a radix pass has no such branch."""
    nb_ = 1 << SMALL_RADIX_BITS
    mask = nb_ - 1
    src = a
    dst = b
    shift = 0
    while shift < 32 and (span >> shift) > 0:
        for d in range(nb_):
            cnt[d] = 0
        for i in range(N):
            cnt[(((src[i] >> 32) & 0xFFFFFFFF) >> shift) & mask] += 1
        if cnt[(((src[0] >> 32) & 0xFFFFFFFF) >> shift) & mask] != N:
            tot = 0
            for d in range(nb_):
                c = cnt[d]
                cnt[d] = tot
                tot += c
            for i in range(N):
                v = src[i]
                d = (((v >> 32) & 0xFFFFFFFF) >> shift) & mask
                dst[cnt[d]] = v
                cnt[d] += 1
            src, dst = dst, src
        shift += SMALL_RADIX_BITS
    return src


@nb.njit(cache=True)
def sort_node_keys(keys, cpos, N, kmin, kmax, order, tmp, cnt, pos, skey):
    """A node's gathered keys in key order: pos[:N] = the node positions ``cpos`` and
    skey[:N] = the keys, sorted by key, equal keys in gathered order (stable).

    Up to 512 keys, unless counting sort is cheaper (``_counting_first``), the keys are
    packed with their node position, (key - kmin) << 32 | cpos, sorted as int64 and
    unpacked straight into ``pos`` and ``skey``: no compare goes through an index into
    ``keys``, no allocation (np.argsort measured 110-175 cycles per key at these sizes),
    and no gather through an order afterwards. ``cpos`` ascends (the gather's order), so
    the position breaks ties as the gathered order does: the sort is stable. Up to
    ``INSERTION_MAX`` keys insertion sort (the sign bit flipped, so that a key offset of
    2**31 or more, as the float keys of a local subtree have, compares as unsigned);
    above, LSD radix on the key offset (``_radix_packed``). Other nodes go through
    ``_sort_keys`` (counting sort or LSD radix)."""
    if N <= 512 and not _counting_first(N, kmax - kmin, cnt):
        if N <= INSERTION_MAX:
            for a in range(N):
                tmp[a] = ((np.int64(keys[a] - kmin) << 32) | cpos[a]) ^ SIGN64
            for a in range(1, N):
                v = tmp[a]
                b = a - 1
                while b >= 0 and tmp[b] > v:
                    tmp[b + 1] = tmp[b]
                    b -= 1
                tmp[b + 1] = v
            for p in range(N):
                v = tmp[p] ^ SIGN64
                pos[p] = v & 0xFFFFFFFF
                skey[p] = ((v >> 32) & 0xFFFFFFFF) + kmin
            return
        for a in range(N):
            tmp[a] = (np.int64(keys[a] - kmin) << 32) | cpos[a]
        src = _radix_packed(tmp, order, N, kmax - kmin, cnt)
        for p in range(N):
            v = src[p]
            pos[p] = v & 0xFFFFFFFF
            skey[p] = ((v >> 32) & 0xFFFFFFFF) + kmin
        return
    srt = _sort_keys(keys, N, kmin, kmax, order, tmp, cnt)
    for p in range(N):
        i = srt[p]
        pos[p] = cpos[i]
        skey[p] = keys[i]
