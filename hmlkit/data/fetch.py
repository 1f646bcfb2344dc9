"""Optional downloading of the official archives into a cache folder (stdlib ``urllib`` only).

Nothing in the kit downloads on its own: the studies run on embedded synthetic
data unless given ``dataset=``. These helpers save the manual steps:

* :func:`fetch_url` downloads one file into the cache with HTTP ``Range``
  resume of an interrupted ``.part`` file, an optional SHA-256 check, and an
  atomic rename once complete. Without network it raises ``ConnectionError``
  saying so and where to put a manually downloaded copy.
* :func:`fetch_nuswide` / :func:`fetch_corel16k` / :func:`fetch_corel5k` are thin wrappers over the
  official URLs in :data:`OFFICIAL_ARCHIVES` (stored as data; the hosts change
  over the years, so every wrapper takes ``url=`` overrides). ``.zip`` archives
  are unpacked; ``.rar`` ones (NUS-WIDE's low-level features, mulan's
  Corel16k and Corel5k) need an external ``unrar`` / ``7z``, and the helper says so.

The cache folder is ``$HMLKIT_DATA_DIR`` if set, else ``<repo>/data/cache`` in a checkout
(:func:`data_cache_dir`).
"""
from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from .._paths import REPO_ROOT

NUSWIDE_BASE = "https://lms.comp.nus.edu.sg/wp-content/uploads/2019/research/nuswide/"

# Official archives: name -> (url, sha256 or None). No checksum is published by
# the providers; pass sha256= to pin the copy you trust.
OFFICIAL_ARCHIVES = {
    "nuswide/ImageList": (NUSWIDE_BASE + "ImageList.zip", None),
    "nuswide/ConceptsList": (NUSWIDE_BASE + "ConceptsList.zip", None),
    "nuswide/NUS_WID_Tags": (NUSWIDE_BASE + "NUS_WID_Tags.zip", None),
    "nuswide/Groundtruth": (NUSWIDE_BASE + "Groundtruth.zip", None),
    "nuswide/Low_Level_Features": (NUSWIDE_BASE + "Low_Level_Features.rar", None),
    # mulan's multi-label data sets (Corel16k: 10 samples, train/test ARFF + XML)
    "corel16k": ("https://sourceforge.net/projects/mulan/files/datasets/corel16k.rar/download", None),
    # mulan's Corel5k (train/test ARFF + XML); no published digest
    "corel5k": ("https://sourceforge.net/projects/mulan/files/datasets/corel5k.rar/download", None),
}

NUSWIDE_PARTS = ("ImageList", "NUS_WID_Tags", "Groundtruth", "Low_Level_Features")


def data_cache_dir() -> Path:
    """Where fetched archives go: ``$HMLKIT_DATA_DIR``, else ``<repo>/data/cache`` in a
    checkout of the kit, else (an installed package, whose folder is ``site-packages``)
    ``$XDG_CACHE_HOME/hmlkit`` (``~/.cache/hmlkit``)."""
    env = os.environ.get("HMLKIT_DATA_DIR")
    if env:
        return Path(env)
    if (REPO_ROOT / "pyproject.toml").is_file():
        return REPO_ROOT / "data" / "cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hmlkit"


def sha256_of(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _filename_from_url(url: str) -> str:
    parts = [p for p in urllib.parse.urlparse(url).path.split("/") if p]
    if parts and parts[-1] == "download" and len(parts) > 1:  # sourceforge style
        parts = parts[:-1]
    if not parts:
        raise ValueError(f"cannot tell a file name from {url!r}; pass filename=")
    return urllib.parse.unquote(parts[-1])


def _total_from_headers(resp, offset: int):
    cr = resp.headers.get("Content-Range")
    if cr and "/" in cr and not cr.endswith("/*"):
        return int(cr.rsplit("/", 1)[1])
    cl = resp.headers.get("Content-Length")
    return None if cl is None else int(cl) + offset


def fetch_url(
    url: str,
    dest_dir=None,
    sha256: str | None = None,
    resume: bool = True,
    filename: str | None = None,
    timeout: float = 60.0,
    chunk: int = 1 << 16,
) -> Path:
    """Download ``url`` into ``dest_dir`` (default: the cache) and return the file path.

    An existing complete file is reused (after checking ``sha256`` if given).
    An interrupted download leaves ``<file>.part``; with ``resume`` the next call
    asks the server for the rest (``Range: bytes=<size>-``) and appends it, or
    starts over when the server ignores ranges, or when it answers that nothing is left to
    send but the part is not the file's size (a stale part). On a checksum mismatch the
    downloaded file is deleted and ``ValueError`` is raised.

    Raises
    ------
    ConnectionError
        The host cannot be reached (no network, DNS failure, refused, timeout).
    RuntimeError
        The server answered with an HTTP error or a short body.
    ValueError
        SHA-256 mismatch.
    """
    dest_dir = Path(dest_dir) if dest_dir is not None else data_cache_dir()
    dest = dest_dir / (filename or _filename_from_url(url))
    part = dest.with_name(dest.name + ".part")
    sha256 = sha256.lower() if sha256 else None

    if dest.is_file():
        if sha256 is None or sha256_of(dest) == sha256:
            return dest
        dest.unlink()  # stale or corrupt copy: download again

    dest_dir.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if (resume and part.is_file()) else 0
    headers = {"User-Agent": "hmlkit-fetch"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:  # nothing left to send: the part may be whole already
            cr = e.headers.get("Content-Range") or ""
            total = int(cr.rsplit("/", 1)[1]) if "/" in cr and cr.rsplit("/", 1)[1].isdigit() else None
            if total != offset:  # longer than the file (a stale part of another version), or unknown
                part.unlink()
                return fetch_url(url, dest_dir, sha256=sha256, resume=False, filename=filename,
                                 timeout=timeout, chunk=chunk)
            resp = None
        else:
            raise RuntimeError(f"download of {url} failed: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError(
            f"cannot reach {url} ({reason}). No network? Download the file by other means and "
            f"place it at {dest} (or a partial copy at {part} to resume)."
        ) from None

    if resp is not None:
        with resp:
            status = getattr(resp, "status", 200)
            if offset and status != 206:
                offset = 0  # server ignored the range: start over
            total = _total_from_headers(resp, offset)
            with open(part, "ab" if offset else "wb") as out:
                try:
                    while True:
                        block = resp.read(chunk)
                        if not block:
                            break
                        out.write(block)
                except (OSError, urllib.error.URLError, http.client.HTTPException) as e:
                    raise ConnectionError(
                        f"download of {url} interrupted after {out.tell()} bytes ({e}); "
                        f"call again to resume from {part}"
                    ) from None
        size = part.stat().st_size
        if total is not None and size != total:
            raise RuntimeError(
                f"download of {url} incomplete: {size} of {total} bytes in {part}; call again to resume"
            )
    if sha256 is not None:
        got = sha256_of(part)
        if got != sha256:
            part.unlink()
            raise ValueError(
                f"checksum mismatch for {dest.name} from {url}: expected sha256 {sha256}, got {got}; "
                "the download was deleted"
            )
    os.replace(part, dest)
    return dest


def unpack(archive, dest_dir, folder: str | None = None) -> Path:
    """Unpack a ``.zip`` into ``dest_dir`` (into ``dest_dir/folder`` when the zip has no such top folder)."""
    archive, dest_dir = Path(archive), Path(dest_dir)
    if archive.suffix.lower() != ".zip":
        raise RuntimeError(
            f"{archive} is a {archive.suffix} archive, which Python cannot unpack: run "
            f"`unrar x {archive.name}` or `7z x {archive.name}` in {archive.parent} and move the "
            f"result to {dest_dir / (folder or '')}"
        )
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        target = dest_dir
        if folder and not all(n.startswith(folder + "/") for n in names):
            target = dest_dir / folder
        for n in names:  # refuse paths escaping the target (zip slip)
            if Path(n).is_absolute() or ".." in Path(n).parts:
                raise RuntimeError(f"{archive}: unsafe member path {n!r}")
        zf.extractall(target)
    return target


def fetch_nuswide(dest_dir=None, parts=NUSWIDE_PARTS, urls: dict | None = None, sha256: dict | None = None) -> Path:
    """Download (and unpack the ``.zip``) official NUS-WIDE parts into ``<cache>/nuswide``.

    Returns the root to pass to :func:`hmlkit.data.load_nuswide`. The low-level
    features come as a ``.rar``: it is downloaded, and a ``RuntimeError`` then
    says how to unpack it. ``urls`` / ``sha256`` map a part name to an override.
    """
    root = (Path(dest_dir) if dest_dir is not None else data_cache_dir()) / "nuswide"
    urls, sha256 = dict(urls or {}), dict(sha256 or {})
    pending = []
    for p in parts:
        key = f"nuswide/{p}"
        if key not in OFFICIAL_ARCHIVES:
            raise ValueError(f"unknown NUS-WIDE part {p!r}; choose from {', '.join(NUSWIDE_PARTS + ('ConceptsList',))}")
        url, digest = OFFICIAL_ARCHIVES[key]
        path = fetch_url(urls.get(p, url), root / "archives", sha256=sha256.get(p, digest))
        if (root / p).is_dir():
            continue
        if path.suffix.lower() == ".zip":
            unpack(path, root, folder=p)
        else:
            pending.append(path)
    if pending:
        unpack(pending[0], root, folder=pending[0].stem)  # raises with instructions
    return root


def fetch_corel16k(dest_dir=None, url: str | None = None, sha256: str | None = None) -> Path:
    """Download mulan's Corel16k archive into ``<cache>/corel16k`` and return its path.

    The archive is a ``.rar`` (10 samples of train/test ARFF files); unpack it
    with ``unrar``/``7z`` and load e.g. ``Corel16k001-test.arff`` with
    ``hmlkit.data.load_dataset``.
    """
    default_url, digest = OFFICIAL_ARCHIVES["corel16k"]
    root = (Path(dest_dir) if dest_dir is not None else data_cache_dir()) / "corel16k"
    return fetch_url(url or default_url, root, sha256=sha256 or digest, filename="corel16k.rar")


def fetch_corel5k(dest_dir=None, url: str | None = None, sha256: str | None = None) -> Path:
    """Download mulan's Corel5k archive into ``<cache>/corel5k`` and return its path.

    The archive is a ``.rar`` (``corel5k.rar``): unpack it with ``unrar``/``7z``
    and put the training split (4500 images, 499 visual words + 374 tags) at
    ``<cache>/corel5k/Corel5k-train-sparse.arff``, where
    :func:`hmlkit.data.load_corel5k` (and ``load_dataset("corel5k")``) look
    for it, or pass its path to ``load_corel5k(path=...)``.

    No SHA-256 is known for the archive (mulan publishes none and none is
    pinned here: ``OFFICIAL_ARCHIVES["corel5k"]`` holds None), so the download
    is not checked unless you pass ``sha256=`` for the copy you trust.
    """
    default_url, digest = OFFICIAL_ARCHIVES["corel5k"]
    root = (Path(dest_dir) if dest_dir is not None else data_cache_dir()) / "corel5k"
    return fetch_url(url or default_url, root, sha256=sha256 or digest, filename="corel5k.rar")


def clear_partial(dest_dir=None) -> int:
    """Remove every ``*.part`` under the cache; returns how many were removed."""
    root = Path(dest_dir) if dest_dir is not None else data_cache_dir()
    n = 0
    for p in root.rglob("*.part"):
        p.unlink()
        n += 1
    return n


__all__ = [
    "OFFICIAL_ARCHIVES", "data_cache_dir", "fetch_url", "fetch_nuswide", "fetch_corel16k", "fetch_corel5k",
    "unpack", "sha256_of", "clear_partial",
]
