"""Input checks shared by every estimator of the kit.

Each check raises ``ValueError`` naming the offending argument, so that bad
input fails at once with a message a user can act on.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np
import scipy.sparse as sp


class InvalidParameterError(ValueError, TypeError):
    """A parameter of the wrong type or out of range (a ``ValueError`` and a
    ``TypeError``, as scikit-learn's own)."""


def check_int(value, name, min_val=1, max_val=None):
    """``value`` as an int: an integer (Python or numpy, not a bool, a string or a
    float, even an integral one) within [min_val, max_val]; checked with
    ``sklearn.utils.check_scalar``."""
    from sklearn.utils import check_scalar

    if isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"{name} must be an integer, got the boolean {value!r}")
    try:
        return int(check_scalar(value, name, numbers.Integral, min_val=min_val, max_val=max_val))
    except (TypeError, ValueError) as exc:
        want = "a positive integer" if min_val == 1 else f"an integer >= {min_val}"
        if max_val is not None:
            want += f" and <= {max_val}"
        raise InvalidParameterError(f"{name} must be {want}, got {value!r} ({exc})") from None


def check_bool(value, name):
    """``value`` as a bool; anything but ``True``/``False`` (or a numpy bool) is an error
    (``'no'`` or ``1`` would silently switch an option on)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_weight(value, name, auto=False):
    """A blending weight: a real number in [0, 1] (not a bool), or "auto" where
    ``auto`` allows it. Returns a float or "auto"."""
    if auto and isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, (bool, np.bool_, str)) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        want = "'auto' or a number in [0, 1]" if auto else "a number in [0, 1]"
        raise InvalidParameterError(f"{name} must be {want}, got {value!r}")
    return float(value)


def check_verbose(value, name="verbose"):
    """``value`` as True, False or "auto" (a progress bar: always, never, on long fits);
    0 and 1 are False and True. Other levels (2, 3, ...) are refused: the kit has one
    kind of output, so a level would promise more than it gives."""
    if isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise InvalidParameterError(f"{name} must be True, False, 0, 1 or 'auto', got {value!r}")


_INT_PARAMS = ("n_estimators", "min_samples_leaf", "n_neighbors")
_BOOL_PARAMS = ("hierarchy", "correlations", "bootstrap", "oob")


def check_estimator_params(est, n_features=None, features_of="X"):
    """Check the common parameters ``est`` has: positive integers (n_estimators,
    min_samples_leaf, n_neighbors, n_clusters unless None), booleans (hierarchy,
    correlations, bootstrap, oob), ``split_sample`` (None or a positive integer), ``verbose``
    (:func:`check_verbose`) and ``max_features`` ('sqrt', 'log2', None, an int in [1, n_features]
    or a float in (0, 1]). Raises :class:`InvalidParameterError`."""
    for name in _INT_PARAMS:
        if hasattr(est, name):
            check_int(getattr(est, name), name)
    if getattr(est, "n_clusters", None) is not None:
        check_int(est.n_clusters, "n_clusters")
    for name in _BOOL_PARAMS:
        if hasattr(est, name):
            check_bool(getattr(est, name), name)
    if getattr(est, "split_sample", None) is not None:
        check_int(est.split_sample, "split_sample")
    if hasattr(est, "verbose"):
        check_verbose(est.verbose)
    if hasattr(est, "max_features"):
        mf = est.max_features
        if mf is None or (isinstance(mf, str) and mf in ("sqrt", "log2")):
            pass
        elif isinstance(mf, numbers.Integral) and not isinstance(mf, (bool, np.bool_)):
            check_int(mf, "max_features")
            if n_features is not None and mf > n_features:
                raise InvalidParameterError(f"max_features={int(mf)} is larger than the number of features "
                                            f"of {features_of} ({n_features})")
        elif (isinstance(mf, numbers.Real) and not isinstance(mf, (bool, np.bool_))
              and not isinstance(mf, numbers.Integral) and 0 < mf <= 1):
            pass
        else:
            raise InvalidParameterError(f"max_features must be 'sqrt', 'log2', None, a positive int or a "
                                        f"float in (0, 1], got {mf!r}")


def check_params_without_data(est):
    """The checks ``est``'s fit makes of its parameters before it sees any data:
    :func:`check_estimator_params`, then the estimator's own ``_check_params()`` where that
    takes no data (HMLClustering, SFSS, GHF-ART, M-HCRF). What a sweep runs to refuse a value
    at once rather than at fit time, after its data loaded. Raises InvalidParameterError /
    ValueError naming the parameter."""
    check_estimator_params(est)
    if _own_check_takes_no_data(type(est)):
        est._check_params()


@functools.lru_cache(maxsize=None)
def _own_check_takes_no_data(cls):
    import inspect

    own = getattr(cls, "_check_params", None)
    return own is not None and not any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                                       for p in list(inspect.signature(own).parameters.values())[1:])


def _from_frame(A, name):
    """A pandas DataFrame / Series (nullable dtypes such as Float64 / Int64
    included) as a float64 array, missing values as NaN; anything else as is."""
    if sp.issparse(A) or isinstance(A, np.ndarray) or not hasattr(A, "to_numpy"):
        return A
    if not _is_pandas(A):  # an xarray DataArray and the like: their to_numpy takes no dtype
        return A.to_numpy()
    try:
        return A.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None


def _is_pandas(A):
    return any(c.__module__.startswith("pandas") for c in type(A).__mro__)


def _as_array(A, name):
    """``np.asarray(A)``, a ragged list refused with its argument's name."""
    try:
        return np.asarray(A)
    except ValueError as exc:  # numpy: "... inhomogeneous shape after 1 dimensions ..."
        raise ValueError(f"{name} must be a 2-D array with one row per sample, all of one length: {exc}") from None


def check_X(X, name="X", dtype=np.float32, min_samples=1):
    """Return ``X`` as a C-contiguous 2-D float array, rejecting NaN/inf, complex
    values and finite values too large for ``dtype``. pandas frames, nullable
    dtypes included, are accepted."""
    if sp.issparse(X):
        X = X.toarray()
    X = _as_array(_from_frame(X, name), name)
    if X.ndim != 2:
        # "Reshape your data": the words scikit-learn's checks expect of a 1-D X
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}. Reshape your "
                         f"data: {name}.reshape(-1, 1) for a single feature, {name}.reshape(1, -1) for a single sample")
    if X.shape[0] < min_samples:
        raise ValueError(f"{name} has {X.shape[0]} samples; at least {min_samples} required (shape {X.shape})")
    if X.shape[1] < 1:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
    if X.dtype == object:  # numbers held as Python objects, as scikit-learn takes them
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name} must be numeric: {exc}") from None
    if not np.issubdtype(X.dtype, np.number) and X.dtype != bool:
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
    if np.iscomplexobj(X):
        raise ValueError(f"{name} must be real: Complex data not supported (dtype {X.dtype})")
    original = X
    with np.errstate(over="ignore"):  # values beyond dtype's range become inf: reported below
        X = np.ascontiguousarray(X, dtype=dtype)
    if not np.isfinite(X).all():
        bad = tuple(np.argwhere(~np.isfinite(X))[0])
        value = original[bad]
        if np.isfinite(value):
            raise ValueError(f"{name} has a value too large for {np.dtype(dtype).name} at row {bad[0]}, column "
                             f"{bad[1]}: {value!r} (largest magnitude {np.finfo(dtype).max:.4g}); rescale "
                             f"the features")
        raise ValueError(f"{name} contains NaN or inf (first at row {bad[0]}, column {bad[1]})")
    return X


def check_X_features(est, X, reset, name="X"):
    """``check_X(X)`` with scikit-learn's record of the features ``est`` was fitted on.

    ``reset`` (fit): sets ``n_features_in_`` and, when X has string column names (a
    pandas frame), ``feature_names_in_`` (deleted otherwise). Else (apply, predict): X
    must have ``n_features_in_`` features and the same names in the same order (a
    ValueError naming the unseen and missing ones); names on one side only warn, as
    scikit-learn's own estimators do. The names are compared before ``check_X`` turns a
    frame into an array: a frame's columns in another order would route every sample
    down other branches, silently."""
    from sklearn.utils.validation import _check_feature_names

    _check_feature_names(est, X, reset=reset)
    X = check_X(X, name)
    if reset:
        est.n_features_in_ = X.shape[1]
    elif X.shape[1] != est.n_features_in_:  # scikit-learn's wording, which its checks expect
        raise ValueError(f"{name} has {X.shape[1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    return X


def tag_names_of(Y):
    """The tag names of ``Y``: a pandas frame's column names when they are all strings
    (as scikit-learn records feature names), else None."""
    if not _is_pandas(Y) or not hasattr(Y, "columns"):
        return None
    cols = list(Y.columns)
    return np.asarray(cols, dtype=object) if cols and all(isinstance(c, str) for c in cols) else None


def record_tag_names(est, names):
    """``est.tag_names_in_ = names`` (from :func:`tag_names_of`, at fit), or no such attribute
    when ``names`` is None: an earlier fit's names, of other tags, must not be kept."""
    if names is not None:
        est.tag_names_in_ = names
    elif hasattr(est, "tag_names_in_"):
        del est.tag_names_in_


def check_tag_names(est, Y, name="Y"):
    """A ValueError when frame ``Y`` names other tags, or the same ones in another order,
    than ``est.tag_names_in_`` (its fit's): its columns would be read by position, each
    score landing on another tag, silently. Names on one side only are read by position."""
    fitted = getattr(est, "tag_names_in_", None)
    given = tag_names_of(Y)
    if fitted is None or given is None or np.array_equal(fitted, given):
        return
    unseen = [t for t in given if t not in set(fitted)]
    missing = [t for t in fitted if t not in set(given)]
    what = (f"tags not seen at fit: {unseen[:5]}" if unseen else "") + \
        ("; " if unseen and missing else "") + (f"tags missing: {missing[:5]}" if missing else "")
    raise ValueError(f"{name}'s columns must name the tags {type(est).__name__} was fitted on, in the same "
                     f"order ({what or 'the same tags in another order'})")


def check_not_constant(views, method, names=("X", "Y")):
    """A ValueError when every one of ``views`` (arrays or sparse matrices of one sample per
    row) is the same for every sample: a clusterer would split identical vectors into
    clusters that look like an answer (DetScore scores of tags too rare to detect, an
    all-zero tag matrix)."""
    if views[0].shape[0] < 2:
        return
    for V in views:
        if sp.issparse(V):
            if (V.max(axis=0) - V.min(axis=0)).nnz:
                return
        elif np.ptp(np.asarray(V), axis=0).any():
            return
    what = " and ".join(names[:len(views)]) if len(views) <= len(names) else "every view"
    raise ValueError(f"{method}'s input ({what}) is the same for every sample: there is nothing to cluster")


def check_some_tag(Y, what="a completer"):
    """A ValueError when the (checked, CSR) tags ``Y`` hold no tag at all: ``what`` learns the
    tags from the observed ones, and would return the same score for every tag."""
    if Y.nnz == 0:
        raise ValueError(f"Y has no observed tag at all: {what} learns from the observed tags, so it "
                         f"would give every tag the same score")


def check_fitted(est, attribute):
    """A :class:`sklearn.exceptions.NotFittedError` (a ValueError) unless ``est`` has
    ``attribute``, which its ``fit`` sets."""
    from sklearn.exceptions import NotFittedError

    if not hasattr(est, attribute):
        raise NotFittedError(f"this {type(est).__name__} is not fitted yet; call fit(X, Y) first")


def unshared(M, source):
    """``M`` (CSR, made from the caller's sparse ``source``), copied if it shares any of
    ``source``'s arrays: scipy converts a CSR input that needs no change of dtype without a
    copy, so pruning, summing or sorting ``M`` in place would change the caller's matrix."""
    if sp.issparse(source) and any(np.may_share_memory(getattr(M, a), getattr(source, a, None))
                                   for a in ("data", "indices", "indptr") if hasattr(source, a)):
        return M.copy()
    return M


def check_Y(Y, n_samples=None, name="Y"):
    """Return binary tags ``Y`` as a CSR uint8 matrix in canonical form (rows sorted, no
    column twice, no stored zero).

    Accepts dense arrays or scipy sparse matrices. Every value must be 0 or 1; a tag
    stored twice in a row of a sparse matrix sums, as scipy does, and so is refused
    (a bool matrix's sum stays True). Rows with no tag at all are allowed (untagged
    samples). The caller's matrix is never changed.
    """
    if Y is None:  # scikit-learn's words for a missing target, which its checks expect
        raise ValueError(f"{name} is None: the estimator requires y to be passed, but the target y is None "
                         f"(pass the tags, an (n_samples, n_tags) 0/1 matrix)")
    source = Y if sp.issparse(Y) else None
    summed = False  # a tag stored twice in a row, now one entry
    if source is not None:
        # a CSR input's arrays are shared, not copied. Whether it is canonical is asked
        # of the caller's matrix, which keeps the answer, so a collection checked at
        # every fit and completion is scanned once (8 ms a call at a million samples)
        Y = sp.csr_matrix(Y)
        # scipy sums a COO matrix's repeated (row, tag) pair in the conversion
        summed = source.format == "coo" and Y.nnz < source.nnz
        if not (source if source.format == "csr" else Y).has_canonical_format:
            Y = unshared(Y, source)
            nnz = Y.nnz
            Y.sum_duplicates()  # in the input's dtype: a tag named twice is a 2, refused below
            summed = summed or Y.nnz < nnz
        vals = Y.data
    else:
        Y = _as_array(_from_frame(Y, name), name)
        if Y.ndim != 2:
            raise ValueError(f"{name} must be a 2-D (n_samples, n_tags) matrix, got shape {Y.shape}")
        vals = Y.ravel()
    if Y.shape[1] < 1:
        raise ValueError(f"{name} has no tag columns (shape {Y.shape})")
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n_samples} samples")
    zeros = False  # stored zeros to drop (a sparse input's explicit zeros)
    if vals.size:
        if not np.issubdtype(vals.dtype, np.number) and vals.dtype != bool:
            raise ValueError(f"{name} must be numeric 0/1, got dtype {vals.dtype}")
        if np.issubdtype(vals.dtype, np.complexfloating):  # its imaginary part would be dropped
            raise ValueError(f"{name} must be real 0/1 values, got complex dtype {vals.dtype}")
        if np.issubdtype(vals.dtype, np.integer):  # two passes, no float copy of the values
            low, high = vals.min(), vals.max()
            bad, zeros = low < 0 or high > 1, low == 0
        elif vals.dtype == bool:
            bad, zeros = False, not vals.all()
        else:
            v = vals.astype(np.float64, copy=False)
            bad = not np.isfinite(v).all() or not np.isin(v, (0.0, 1.0)).all()
            zeros = not bad and not v.all()
        if bad:
            twice = " (a row of the sparse matrix names a tag twice: scipy sums the two)" if summed else ""
            raise ValueError(f"{name} must contain only 0/1 values{twice}")
    Y = sp.csr_matrix(Y, dtype=np.uint8)
    if source is not None and zeros:
        Y = unshared(Y, source)
        Y.eliminate_zeros()
    Y.has_canonical_format = True  # by construction from dense, or made so above
    return Y


def check_layers(layers, n_tags, name="layers"):
    """Validate a tag hierarchy: a list of disjoint tag-index arrays (most abstract layer
    first), or one layer id per tag (0 = most abstract; a 1-D integer array or list).

    ``None`` means one flat layer holding every tag. Tags not named by any
    layer are not allowed (the hierarchy must cover the tag set), so an
    incomplete hierarchy fails loudly rather than silently ignoring tags.
    """
    if layers is None:
        return [np.arange(n_tags, dtype=np.int64)]
    if hasattr(layers, "to_numpy") and not isinstance(layers, np.ndarray):  # a pandas Series: per-tag ids
        layers = layers.to_numpy()
    if isinstance(layers, (list, tuple)) and layers and all(
            isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in layers):
        layers = np.asarray(layers, dtype=np.int64)  # a flat list of ints: per-tag layer ids, as an array
    if isinstance(layers, np.ndarray) and layers.ndim == 1 and layers.size and (layers.dtype == bool or (
            layers.dtype == object and any(isinstance(v, (bool, np.bool_)) for v in layers))):
        # True / False would read as layers 1 / 0: a mask, not a hierarchy
        raise ValueError(f"{name} as per-tag layer ids must be integers, got booleans (a mask?); give each "
                         f"tag its layer, 0 = most abstract")
    if isinstance(layers, np.ndarray) and layers.ndim == 1 and layers.size and (layers.dtype.kind == "f" or (
            layers.dtype == object and all(isinstance(v, numbers.Real) for v in layers))):
        # per-tag layer ids read from a table (a float column after fillna, an object column)
        ids = layers.astype(np.float64)
        bad = ~np.isfinite(ids) | (ids != np.round(ids))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} as per-tag layer ids must be integers; tag {j} has {ids[j]:g}")
        layers = ids.astype(np.int64)
    if isinstance(layers, np.ndarray) and layers.ndim == 1 and np.issubdtype(layers.dtype, np.integer):
        # one array of per-tag layer ids
        if layers.shape[0] != n_tags:
            raise ValueError(f"{name} as per-tag layer ids must have length {n_tags}, got {layers.shape[0]}")
        if layers.min() < 0:
            raise ValueError(f"{name} as per-tag layer ids must be >= 0 (0 = most abstract); "
                             f"tag {int(np.argmin(layers))} has layer {int(layers.min())}")
        return [np.flatnonzero(layers == k).astype(np.int64) for k in np.unique(layers)]
    out = []
    seen = np.zeros(n_tags, dtype=bool)
    for k, layer in enumerate(layers):
        arr = np.asarray(layer)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise ValueError(f"{name}[{k}] must be a 1-D array of integer tag indices")
        arr = arr.astype(np.int64)
        if arr.size == 0:
            raise ValueError(f"{name}[{k}] is empty")
        bad = arr[(arr < 0) | (arr >= n_tags)]
        if bad.size:
            raise ValueError(f"{name}[{k}] names unknown tag index {int(bad[0])} (there are {n_tags} tags)")
        uniq, counts = np.unique(arr, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"{name}[{k}] names tag {int(uniq[counts > 1][0])} more than once")
        if seen[arr].any():
            raise ValueError(f"{name} overlap: tag {int(arr[seen[arr]][0])} is in more than one layer")
        seen[arr] = True
        out.append(np.sort(arr))
    if not out:
        raise ValueError(f"{name} must contain at least one layer")
    if not seen.all():
        raise ValueError(
            f"{name} do not cover all tags: {int((~seen).sum())} tag(s) (e.g. {int(np.flatnonzero(~seen)[0])}) in no layer"
        )
    return out


def check_n_clusters(n_clusters, n_samples, name="n_clusters"):
    """A positive integer below ``n_samples`` (spectral clustering embeds in
    ``n_clusters`` eigenvectors of an ``n_samples`` graph: ARPACK needs fewer), or 1."""
    n_clusters = check_int(n_clusters, name)
    if n_clusters > n_samples:
        raise InvalidParameterError(f"{name}={n_clusters} is larger than the number of samples ({n_samples})")
    if n_clusters == n_samples and n_clusters > 1:
        raise InvalidParameterError(f"{name}={n_clusters} equals the number of samples ({n_samples}); spectral "
                                    f"clustering needs fewer clusters than samples")
    return n_clusters


def check_random_state_seed(random_state):
    """Turn ``random_state`` (None, int, Generator/RandomState) into an int seed. A seed
    the kit draws (None, a generator) is below 2**32, which every consumer takes:
    scikit-learn's estimators and numpy's RandomState refuse larger ones (MMC's default
    ``random_state=None`` failed in KMeans with a 63-bit seed)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy % 2**32)
    if isinstance(random_state, bool):
        raise ValueError(f"random_state must be None, an int >= 0 or a numpy random generator, got {random_state!r}")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:  # numpy's generators refuse it too, later and without naming it
            raise ValueError(f"random_state must be an int >= 0, got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**32))
    raise ValueError(f"random_state must be None, an int or a numpy random generator, got {random_state!r}")


class SparseXTags:
    """scikit-learn estimator tags of the kit's estimators: X may be sparse
    (``check_X`` densifies it; the forest needs dense columns), and fit needs the tags."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags
