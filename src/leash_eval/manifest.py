"""The data manifest: which external files the project reads, and how to get verified copies.

``data/manifest.yaml`` lists each external dataset (public generations, benchmark question files)
with its upstream URL(s), sha256 and ``path`` below a *mirror root* and below the download cache
``data/raw/`` (ignored by git). Groups (e.g. ``gsm8k-probe``) name families; ``all`` names every
dataset. A verified file comes, in order (each check hashes the bytes again), from:

1. the download cache ``dest / path``, if its sha256 matches;
2. the mirror ``mirror / path`` (argument, else env ``LEASH_DATA_MIRROR``), returned in place, not
   copied (the mirror is typically a read-only shared folder). A wrong sha256 there is an error;
3. the upstream URL(s), in order, by :func:`pooch.retrieve`: into a temporary file beside
   ``dest / path``, moved into place only once its sha256 matches, removed on any failure
   (``KeyboardInterrupt`` included). Wrong bytes are discarded and the next URL is tried.

Without network and mirror, :func:`fetch` raises :class:`DatasetUnavailableError` (a
:class:`FileNotFoundError`) naming the dataset, the URL(s) tried and how to provide the file.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from leash.config import load_yaml_text
from leash.errors import SkipNotebook
from leash.paths import DATA, MIRROR_ENV, REPO
from leash.writing import folder_beside

__all__ = ["DATASET_FORMATS", "GENERATION_FORMATS", "MIRROR_ENV", "Dataset",
           "DatasetUnavailableError", "Manifest", "dataset", "default_dest", "fetch", "file_state",
           "load_manifest", "locate", "read_unchanged", "resolve", "sha256_file"]

#: Generation formats (readers of :mod:`leash_eval.formats`) a manifest entry may name.
GENERATION_FORMATS = ("samples", "counts", "summary", "evaluator", "nested")
#: Every ``format`` a manifest entry may name: generation formats, benchmark question files
#: (:func:`leash_eval.rescore.load_benchmark`) and other tables kept for cross-checking ("csv").
DATASET_FORMATS = (*GENERATION_FORMATS, "benchmark", "csv")

_MANIFEST_PATH = DATA / "manifest.yaml"
_REQUIRED = ("urls", "sha256", "path", "format", "license", "description")
_OPTIONAL = ("mapping", "model", "model_id", "benchmark", "step", "size")
_SCHEMES = ("http", "https", "ftp", "sftp", "file")  # pooch's downloaders, and file:// (copied)


class DatasetUnavailableError(SkipNotebook, FileNotFoundError):
    """A dataset is neither cached, nor in the mirror, nor downloadable: a FileNotFoundError,
    and in a notebook a skip (:class:`leash.errors.SkipNotebook`).
    """


@dataclass(frozen=True)
class Dataset:
    """One external file of the manifest: its key ``name`` (e.g. ``"gsm8k-probe-sft"``), the
    upstream ``urls`` tried in order, the lower-case hex ``sha256`` of its bytes, its POSIX
    ``path`` below the mirror root and the cache, its ``format`` (:data:`DATASET_FORMATS`),
    provenance notes (``license``, ``description``) and, where meaningful, the reader preset
    ``mapping``, the labels ``model``, ``model_id``, ``benchmark`` and the checkpoint ``step``.
    """

    name: str
    urls: tuple[str, ...]
    sha256: str
    path: str
    format: str
    license: str
    description: str
    mapping: str | None = None
    model: str | None = None
    model_id: str | None = None
    benchmark: str | None = None
    step: int | None = None
    size: int | None = None  # bytes: a download stops at size + 1 (the sha256 then cannot match)

    @property
    def is_generations(self) -> bool:
        """Whether the file is a generations input (readable by :mod:`leash_eval.summarize`)."""
        return self.format in GENERATION_FORMATS

    def reader_kwargs(self) -> dict:
        """Keyword arguments for the generations readers (``fmt``, ``model``, ``benchmark``,
        ``step``, ``mapping``), the non-None ones only.
        """
        if not self.is_generations:
            raise ValueError(f"Dataset {self.name!r} has format {self.format!r}, which is not a "
                             f"generations format {GENERATION_FORMATS}.")
        kw = {"fmt": self.format, "model": self.model, "benchmark": self.benchmark,
              "step": self.step, "mapping": self.mapping}
        return {k: v for k, v in kw.items() if v is not None}


@dataclass(frozen=True)
class Manifest:
    """All datasets and groups of one manifest file."""

    datasets: Mapping[str, Dataset]
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = "<memory>"

    def names(self, name_or_group: str) -> list[str]:
        """Dataset names for a dataset or group name (``"all"`` = every dataset)."""
        if not isinstance(name_or_group, str):
            raise TypeError(
                f"The dataset or group name must be a str. Got {type(name_or_group).__name__}.")
        if name_or_group in self.datasets:
            return [name_or_group]
        if name_or_group in self.groups:
            return list(self.groups[name_or_group])
        if name_or_group == "all":
            return list(self.datasets)
        raise ValueError(f"Unknown dataset or group {name_or_group!r} in {self.source}. "
                         f"Datasets: {', '.join(self.datasets)}. "
                         f"Groups: {', '.join([*self.groups, 'all'])}.")


def _is_relative_file_path(path: object) -> bool:
    """Whether ``path`` names a file below a root: not empty (nor "." or a folder with a
    trailing slash, which would put the file where the folder should be), not absolute (POSIX
    or Windows), no ".." part.
    """
    if not isinstance(path, str) or not path.strip() or path.endswith(("/", "\\")):
        return False
    posix, windows = PurePosixPath(path), PureWindowsPath(path)
    if posix.is_absolute() or windows.anchor or ".." in posix.parts or ".." in windows.parts:
        return False
    return any(part != "." for part in posix.parts)


def _is_url_list(urls: object) -> bool:
    urls = [urls] if isinstance(urls, str) else urls
    return isinstance(urls, list) and bool(urls) and all(
        isinstance(u, str) and "://" in u and u.split("://")[0].lower() in _SCHEMES for u in urls)


#: Each checked key of a dataset entry: (test, rule the message states).
_RULES = {
    "urls": (_is_url_list, f"must be a non-empty list of URLs ({', '.join(_SCHEMES)})"),
    "sha256": (lambda v: re.fullmatch(r"[0-9a-f]{64}", str(v).lower()), "must be 64 hex digits"),
    "path": (_is_relative_file_path,
             "must be a relative file path without '..' (e.g. folder/file.jsonl)"),
    "format": (lambda v: v in DATASET_FORMATS, f"must be one of {DATASET_FORMATS}"),
    "step": (lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
             "must be an int"),
    "size": (lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
             "must be an int >= 0 (bytes)"),
}

#: Seconds a whole download may take at most, beyond a per-read timeout: an upstream that
#: trickles a byte every few seconds never times out a read.
DEADLINE = 600.0


def _parse_manifest(raw: object, source: str) -> Manifest:
    if not isinstance(raw, dict) or not isinstance(raw.get("datasets"), dict):
        raise ValueError(f"The manifest {source} must be a mapping with a 'datasets' mapping.")
    datasets: dict[str, Dataset] = {}
    # `license: NAME` names a text of `licenses:` (anchors, which would share it, are refused)
    licenses = {str(k): str(v).strip() for k, v in (raw.get("licenses") or {}).items()}
    for name, entry in raw["datasets"].items():
        where = f"dataset {name!r} of the manifest {source}"
        if not isinstance(entry, dict):
            raise ValueError(f"The {where} must be a mapping. Got {entry!r}.")
        missing = [k for k in _REQUIRED if k not in entry]
        if missing:
            raise ValueError(f"The {where} lacks the key(s) {missing}.")
        unknown = sorted(set(entry) - set(_REQUIRED) - set(_OPTIONAL))
        if unknown:
            raise ValueError(f"The {where} has unknown key(s) {unknown}.")
        for key, (ok, rule) in _RULES.items():
            if not ok(entry.get(key)):
                raise ValueError(f"The {key!r} of the {where} {rule}. Got {entry[key]!r}.")
        urls = entry["urls"]
        datasets[name] = Dataset(
            name=name, urls=(urls,) if isinstance(urls, str) else tuple(urls),
            sha256=str(entry["sha256"]).lower(), path=entry["path"], format=entry["format"],
            license=licenses.get(str(entry["license"]).strip(), str(entry["license"]).strip()),
            description=str(entry["description"]).strip(),
            **{k: entry.get(k) for k in _OPTIONAL})
    groups: dict[str, tuple[str, ...]] = {}
    for gname, members in (raw.get("groups") or {}).items():
        what = f"group {gname!r} of the manifest {source}"
        if gname in datasets or gname == "all":
            raise ValueError(f"The group name {gname!r} of the manifest {source} clashes with a "
                             "dataset name or the implicit group 'all'.")
        if not isinstance(members, list) or not members:
            raise ValueError(f"The {what} must be a non-empty list. Got {members!r}.")
        unknown = [m for m in members if m not in datasets]
        if unknown:
            raise ValueError(f"The {what} names unknown dataset(s) {unknown}.")
        groups[gname] = tuple(members)
    return Manifest(datasets=datasets, groups=groups, source=source)


# Parsed manifests keyed by path, kept with the bytes they were parsed from: reading a few KB
# is cheap and, unlike size/mtime/ctime, cannot be fooled by an edit in place.
_MANIFEST_CACHE: dict[Path, tuple[bytes, Manifest]] = {}


def load_manifest(path: str | os.PathLike | None = None) -> Manifest:
    """Read and validate a manifest file (default ``data/manifest.yaml`` of the repository)."""
    p = Path(path) if path is not None else _MANIFEST_PATH
    if not p.is_file():
        raise FileNotFoundError(f"The manifest file {p} does not exist.")
    data = p.read_bytes()
    cached = _MANIFEST_CACHE.get(p)
    if cached is not None and cached[0] == data:
        return cached[1]
    try:
        raw = load_yaml_text(data.decode("utf-8"), f"The manifest {p}", "manifest", file=p)[0]
    except UnicodeDecodeError as exc:
        raise ValueError(f"The manifest {p} is not UTF-8 text (byte {exc.start}).") from None
    manifest = _parse_manifest(raw, str(p))
    _MANIFEST_CACHE[p] = (data, manifest)
    return manifest


def dataset(name: str, *, manifest: Manifest | None = None) -> Dataset:
    """The manifest entry called ``name`` (ValueError listing the known names otherwise)."""
    m = manifest if manifest is not None else load_manifest()
    if name not in m.datasets:
        m.names(name)  # raises the helpful ValueError for unknown names
        raise ValueError(f"{name!r} is a group of the manifest {m.source}, not a dataset: "
                         f"{', '.join(m.names(name))}.")
    return m.datasets[name]


def default_dest() -> Path:
    """The download cache ``data/raw/`` of the repository (installed: of the current folder,
    never inside the installation).
    """
    return REPO / "data" / "raw"


def _pooch():
    """pooch, imported without the warning that tqdm.auto (which pooch imports) gives in a
    Jupyter kernel without ipywidgets: a notebook's cells must stay free of warnings.
    """
    import warnings

    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        import pooch
    return pooch


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read every time: a cache keyed on (size, mtime) would
    pass a file edited in place, and hashing (about 1 GB/s) is cheap next to parsing it.
    """
    return _pooch().file_hash(str(path), alg="sha256")


def file_state(path: str | os.PathLike) -> tuple[str, tuple]:
    """``(sha256, identity)`` of a file: the hex sha256 of its bytes and the identity of the
    file hashed (device, inode, size, modification and change times, from the open file after
    its last byte). A file replaced or written while it is hashed gets a hash of no content.
    """
    import hashlib

    from leash_eval.formats import check_regular_file

    check_regular_file(path)  # a FIFO or a device would block or never end
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        first = os.fstat(fh.fileno())
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
        st = os.fstat(fh.fileno())
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if identity != (first.st_dev, first.st_ino, first.st_size, first.st_mtime_ns,
                    first.st_ctime_ns):
        return "changed while hashed", identity
    return digest.hexdigest(), identity


#: Times :func:`read_unchanged` reads files that change under it before it gives up.
READ_TRIES = 3


def read_unchanged(paths, read, states=None, discard=None):
    """``(read(digests), digests)``, ``read`` called while none of ``paths`` changes: each
    file's sha256 and identity (:func:`file_state`) are taken before and after ``read``, which
    gets the sha256s of the first (so a cache entry is named after the bytes it was filled
    from, not another read's); a file replaced or written meanwhile is read again, up to
    :data:`READ_TRIES` times, then an OSError names it.

    Parameters
    ----------
    paths : sequence of path-like
        The files ``read`` reads.
    read : callable
        ``read(digests)``, digests the list of the files' hex sha256, in order.
    states : list, optional
        :func:`file_state` of each path, already taken (a cache lookup's): the first try's.
    discard : callable, optional
        Called with what a try whose files changed returned (to remove what it wrote).

    Returns
    -------
    tuple
        What ``read`` returned, and the digests it was given.
    """
    paths = [Path(p) for p in paths]
    for _ in range(READ_TRIES):
        before = states or [file_state(p) for p in paths]
        value = read([d for d, _ in before])
        states = [file_state(p) for p in paths]
        if states == before:
            return value, [d for d, _ in before]
        if discard is not None:
            discard(value)
    changed = next(p for p, a, b in zip(paths, before, states) if a != b)
    raise OSError(f"{changed}: the file changed while it was read, {READ_TRIES} times in a "
                  "row; read it again once it is written.")


class _ChecksumMismatch(ValueError):
    """Bytes whose sha256 is not the manifest's (``got`` holds theirs)."""

    @classmethod
    def check(cls, ds: Dataset, path: Path, where: str) -> Path:
        if (got := sha256_file(path)) != ds.sha256:
            err = cls(f"Checksum mismatch for dataset {ds.name!r} ({where}): expected sha256 "
                      f"{ds.sha256}, got {got}.")
            err.got = got
            raise err
        return path


def _local(ds: Dataset, cache: Path, mirror, *, force: bool = False) -> Path | None:
    """The verified cached file, else the verified mirror file (an error if wrong), else None."""
    if not force and (cache / ds.path).is_file() and sha256_file(cache / ds.path) == ds.sha256:
        return cache / ds.path
    root = os.environ.get(MIRROR_ENV) if mirror is None else mirror
    if root and (Path(root) / ds.path).is_file():
        return _ChecksumMismatch.check(ds, Path(root) / ds.path,
                                       f"mirror file {Path(root) / ds.path}")
    return None


def locate(name: str, *, dest: str | os.PathLike | None = None,
           mirror: str | os.PathLike | None = None,
           manifest: Manifest | None = None) -> Path | None:
    """Local verified path of a dataset, without any network access.

    Parameters
    ----------
    name : str
        Dataset name of the manifest.
    dest, mirror, manifest : optional
        As in :func:`fetch`. A cached file with the wrong sha256 is ignored (:func:`fetch`
        replaces it); a mirror file with the wrong sha256 is a ValueError.

    Returns
    -------
    pathlib.Path or None
        The cached file, else the mirror file; None when no verified local copy exists.
    """
    return _local(dataset(name, manifest=manifest),
                  Path(dest) if dest is not None else default_dest(), mirror)


def _copy_file(url: str, output_file: str, _pooch: object) -> None:
    # pooch has no downloader for file:// URLs (a mounted upstream, or a test's fake one).
    import urllib.parse
    import urllib.request  # here: http and email load with it (~30 ms of start-up)

    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlsplit(url).path), output_file)


def _downloader(url: str, bar: object, timeout: float, size: int | None = None):
    """Pooch's downloader for ``url`` (tests substitute this function to fake an upstream);
    over HTTP(S) bounded: at most ``size + 1`` bytes when the manifest gives the size, and
    :data:`DEADLINE` seconds in all (:func:`_bounded_http`).
    """
    pooch = _pooch()
    scheme = url.split("://")[0].lower()
    if scheme in ("http", "https"):
        return lambda u, out, pup: _bounded_http(u, out, bar, timeout, size)
    return _copy_file if scheme == "file" else pooch.choose_downloader(url, progressbar=bar)


def _bounded_http(url: str, output_file: str, bar, timeout: float, size: int | None) -> None:
    """Stream ``url`` into ``output_file``; an OSError past ``size`` bytes (an endless or wrong
    body: the sha256 could not match) or past :data:`DEADLINE` seconds. Hand-written around
    requests (pooch's dependency): pooch's downloader has a per-read timeout only.
    """
    import time

    import requests

    end = time.monotonic() + DEADLINE
    with requests.get(url, stream=True, timeout=timeout) as r:
        r.raise_for_status()
        if bar and r.headers.get("content-length", "").isdigit():
            bar.total = int(r.headers["content-length"])
        got = 0
        with open(output_file, "wb") as fh:
            # read1: the bytes that arrived (read(n) waits for n, or for ever from a trickle)
            read = getattr(r.raw, "read1", r.raw.read)
            while chunk := read(1 << 16, decode_content=True):
                got += len(chunk)
                if size is not None and got > size:
                    raise OSError(f"more than the manifest's {size:,} bytes")
                if time.monotonic() > end:
                    raise TimeoutError(f"not finished within {DEADLINE:.0f} s ({got:,} bytes)")
                fh.write(chunk)
                if bar:
                    bar.update(len(chunk))


def _download(ds: Dataset, url: str, local: Path, *, progress: bool, timeout: float) -> Path:
    from tqdm import tqdm

    pooch = _pooch()

    class Bar(tqdm):  # pooch tests `if progressbar`: true also before it sets the total
        def __bool__(self) -> bool:
            return True

    bar = progress and Bar(desc=f"fetch {ds.name}", unit="B", unit_scale=True, file=sys.stderr)

    def download(url: str, output_file: str, pup: object) -> None:
        # Checked here, on pooch's temporary file, so that the message can give the bytes' hash.
        _downloader(url, bar, timeout, ds.size)(url, output_file, pup)
        _ChecksumMismatch.check(ds, Path(output_file), f"download from {url}")

    # Not setLevel: a logger outside logging's registry keeps the answer cached from its first use.
    pooch.get_logger().disabled = not progress  # its "Downloading data from ... to ..." line
    # Every download goes to a folder beside the file (pooch's temporary files in it), which
    # replaces the file only once verified; a folder a killed fetch left is removed by the next
    # (leash.writing's temporaries: the name carries the pid).
    try:
        with folder_beside(local) as where:
            pooch.retrieve(url, f"sha256:{ds.sha256}", fname=local.name, path=where,
                           downloader=download)
            os.replace(where / local.name, local)
    finally:
        if bar:
            bar.close()
    return local


def _reason(exc: OSError) -> str:
    """Why a download failed, in a few words (requests wraps urllib3's reason)."""
    if (response := getattr(exc, "response", None)) is not None:
        return f"HTTP {response.status_code} {response.reason}"
    inner = exc.args[0] if exc.args else None
    return str(getattr(inner, "reason", None) or getattr(exc, "reason", None) or exc)


def _fetch_one(ds: Dataset, cache: Path, mirror, *, force: bool, progress: bool,
               timeout: float) -> Path:
    if (found := _local(ds, cache, mirror, force=force)) is not None:
        return found
    local, errors, mismatch = cache / ds.path, [], False
    for url in ds.urls:
        try:
            return _download(ds, url, local, progress=progress, timeout=timeout)
        except _ChecksumMismatch as exc:
            # Wrong bytes (a moved tag, an HTML error page served with status 200, ...): the
            # download is discarded and the next URL may still serve the pinned bytes.
            errors.append(f"{url} (expected sha256 {ds.sha256}, got {exc.got}; discarded)")
            mismatch = True
        except OSError as exc:  # requests' errors are OSErrors: HTTP status, DNS, refused, timeout
            errors.append(f"{url} ({_reason(exc)})")
    if mismatch:  # an error to look at, not a DatasetUnavailableError (which notebooks skip)
        raise ValueError(
            f"Checksum mismatch for dataset {ds.name!r}: no URL served the expected bytes: "
            f"{'; '.join(errors)}. Provide a verified copy at {local} or in the mirror "
            f"({MIRROR_ENV}) as {ds.path}.")
    root = os.environ.get(MIRROR_ENV) if mirror is None else mirror
    mirror_note = (f"the mirror {root} has no file {ds.path}" if root
                   else f"no mirror is set (env {MIRROR_ENV})")
    raise DatasetUnavailableError(
        f"Cannot fetch dataset {ds.name!r}: download failed from {'; '.join(errors)} and "
        f"{mirror_note}. Provide the file by setting {MIRROR_ENV} to a folder that contains "
        f"{ds.path}, or place the file at {local} (sha256 {ds.sha256}).")


def fetch(name_or_group: str, *, dest: str | os.PathLike | None = None,
          mirror: str | os.PathLike | None = None, force: bool = False, progress: bool = True,
          timeout: float = 60.0, manifest: Manifest | None = None) -> Path | dict[str, Path]:
    """Verified local path(s) of a dataset or a group, downloading what is missing.

    Parameters
    ----------
    name_or_group : str
        A dataset name, a group name, or ``"all"``.
    dest : path-like, optional
        Download cache; default ``data/raw/`` of the repository. Files go to ``dest / path``.
    mirror : path-like, optional
        Mirror root; default env ``LEASH_DATA_MIRROR``. Verified files are returned in place.
    force : bool, default False
        Ignore the download cache and fetch again.
    progress : bool, default True
        Show a download progress bar (tqdm) on stderr.
    timeout : float, default 60.0
        Network timeout in seconds per request.
    manifest : Manifest, optional
        Default :func:`load_manifest`.

    Returns
    -------
    pathlib.Path or dict of str to pathlib.Path
        The path for a dataset name; ``{dataset name: path}`` in group order for a group.

    Raises
    ------
    ValueError
        Unknown name, a mirror file with the wrong sha256, or no local copy and at least one
        URL served bytes with the wrong sha256 (each URL named, with why it failed).
    DatasetUnavailableError
        No local copy and every URL failed to download (each named, with why).
    """
    m = manifest if manifest is not None else load_manifest()
    cache = Path(dest) if dest is not None else default_dest()
    out = {n: _fetch_one(m.datasets[n], cache, mirror, force=force, progress=progress,
                         timeout=timeout) for n in m.names(name_or_group)}
    return out[name_or_group] if name_or_group in m.datasets else out


def resolve(name_or_path: str | os.PathLike, **fetch_kwargs) -> list[tuple[Path, Dataset | None]]:
    """An existing file path as is, else the fetched file(s) of a manifest dataset or group, as
    ``(path, dataset or None)`` pairs: readers take labels (format, model, ...) from the entry.
    """
    if (p := Path(name_or_path)).exists() or os.path.islink(p):
        return [(p, None)]  # a broken link or a link loop: named by the reader as what it is
    m = fetch_kwargs.pop("manifest", None) or load_manifest()
    try:
        names = m.names(name := str(name_or_path))
    except ValueError:
        raise FileNotFoundError(f"{name!r} is neither an existing file nor a dataset or group "
                                f"of the manifest {m.source}.") from None
    got = fetch(name, manifest=m, **fetch_kwargs)
    paths = {name: got} if isinstance(got, Path) else got
    return [(paths[n], m.datasets[n]) for n in names]
