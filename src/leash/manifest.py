"""The data manifest: which external files the project reads, and how to get verified copies.

``data/manifest.yaml`` lists every external dataset (real public generations, benchmark question
files) with its upstream URL(s), its sha256, and ``path``, its place relative to a *mirror root*
and relative to the download cache ``data/raw/`` (ignored by git). Datasets are grouped (e.g.
``gsm8k-probe``) so that one name fetches a family of files; the implicit group ``all`` names
every dataset.

Where a verified file comes from, in order:

1. the download cache ``dest / path`` (default ``data/raw/`` under the repository), if present
   and its sha256 matches;
2. the mirror folder ``mirror / path`` (argument, else env ``LEASH_DATA_MIRROR``), if present.
   A verified mirror file is returned **in place, not copied**: the sha256 pins the bytes, so a
   copy adds nothing but disk use and a second file that could drift; the mirror is typically a
   read-only shared folder and CI reads it directly. A mirror file with the wrong sha256 is an
   error (the mirror is supposed to be exact), not a reason to go to the network;
3. the upstream URL(s), downloaded with :mod:`urllib` into ``dest / path``: streamed into a
   temporary file in the same folder, sha256-checked, then moved into place with
   :func:`os.replace`. No partial file ever carries the final name, also on errors and
   ``KeyboardInterrupt`` (the temporary file is removed). A download with the wrong sha256 is
   discarded and the next URL is tried.

Every verification hashes the file's bytes again (nothing trusts a file's size or mtime).

Without network and without a mirror, :func:`fetch` raises :class:`DatasetUnavailableError`
(a :class:`FileNotFoundError`) naming the dataset, the URL(s) tried and how to provide the file.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

import yaml

from ._config import one_line_yaml_error

__all__ = [
    "FORMATS",
    "GENERATION_FORMATS",
    "MIRROR_ENV",
    "Dataset",
    "DatasetUnavailableError",
    "Manifest",
    "dataset",
    "default_dest",
    "fetch",
    "load_manifest",
    "locate",
    "resolve",
    "sha256_file",
]

#: Generation formats (readers of :mod:`leash.formats`) a manifest entry may name.
GENERATION_FORMATS = ("samples", "counts", "summary", "evaluator", "nested")
#: Every ``format`` a manifest entry may name: generation formats, benchmark question files
#: (:func:`leash.rescore.load_benchmark`) and other tables kept for cross-checking ("csv").
FORMATS = (*GENERATION_FORMATS, "benchmark", "csv")
#: Environment variable naming the mirror root.
MIRROR_ENV = "LEASH_DATA_MIRROR"

_REPO_ROOT = Path(__file__).resolve().parents[2]
_MANIFEST_PATH = _REPO_ROOT / "data" / "manifest.yaml"
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 16
_REQUIRED = ("urls", "sha256", "path", "format", "license", "description")
_OPTIONAL = ("mapping", "model", "model_id", "benchmark", "step")


class DatasetUnavailableError(FileNotFoundError):
    """A dataset is neither cached, nor in the mirror, nor downloadable."""


@dataclass(frozen=True)
class Dataset:
    """One external file of the manifest.

    Attributes
    ----------
    name : str
        Manifest key, e.g. ``"gsm8k-probe-sft"``.
    urls : tuple of str
        Upstream URLs serving the exact bytes, tried in order.
    sha256 : str
        Lower-case hex sha256 of the bytes.
    path : str
        POSIX path relative to the mirror root and to the download cache.
    format : str
        One of :data:`FORMATS`: a generations reader name, "benchmark" or "csv".
    license, description : str
        Provenance notes.
    mapping, model, model_id, benchmark : str or None
        Reader preset and labels for the summary frame, where meaningful.
    step : int or None
        Training checkpoint, where meaningful.
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

    @property
    def is_generations(self) -> bool:
        """Whether the file is a generations input (readable by :mod:`leash.summarize`)."""
        return self.format in GENERATION_FORMATS

    def reader_kwargs(self) -> dict:
        """Keyword arguments for the generations readers (``fmt``, ``model``, ``benchmark``,
        ``step``, ``mapping``), the non-None ones only."""
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
                f"The dataset or group name must be a str. Got {type(name_or_group).__name__}."
            )
        if name_or_group in self.datasets:
            return [name_or_group]
        if name_or_group in self.groups:
            return list(self.groups[name_or_group])
        if name_or_group == "all":
            return list(self.datasets)
        raise ValueError(
            f"Unknown dataset or group {name_or_group!r} in {self.source}. "
            f"Datasets: {', '.join(self.datasets)}. "
            f"Groups: {', '.join([*self.groups, 'all'])}."
        )


def _is_relative_file_path(path: object) -> bool:
    """Whether ``path`` names a file below a root: not empty (nor "." or a folder with a
    trailing slash, which would put the file where the folder should be), not absolute (POSIX
    or Windows), no ".." part."""
    if not isinstance(path, str) or not path.strip() or path.endswith(("/", "\\")):
        return False
    posix, windows = PurePosixPath(path), PureWindowsPath(path)
    if posix.is_absolute() or windows.anchor or ".." in posix.parts or ".." in windows.parts:
        return False
    return any(part != "." for part in posix.parts)


def _parse_manifest(raw: object, source: str) -> Manifest:
    if not isinstance(raw, dict) or not isinstance(raw.get("datasets"), dict):
        raise ValueError(f"The manifest {source} must be a mapping with a 'datasets' mapping.")
    datasets: dict[str, Dataset] = {}
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
        urls = entry["urls"]
        if isinstance(urls, str):
            urls = [urls]
        if not urls or not all(isinstance(u, str) and "://" in u for u in urls):
            raise ValueError(f"The 'urls' of the {where} must be a non-empty list of URLs. "
                             f"Got {entry['urls']!r}.")
        sha = str(entry["sha256"]).lower()
        if not _SHA_RE.match(sha):
            raise ValueError(f"The 'sha256' of the {where} must be 64 hex digits. "
                             f"Got {entry['sha256']!r}.")
        path = entry["path"]
        if not _is_relative_file_path(path):
            raise ValueError(f"The 'path' of the {where} must be a relative file path without "
                             f"'..' (e.g. folder/file.jsonl). Got {path!r}.")
        if entry["format"] not in FORMATS:
            raise ValueError(f"The 'format' of the {where} must be one of {FORMATS}. "
                             f"Got {entry['format']!r}.")
        step = entry.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise ValueError(f"The 'step' of the {where} must be an int. Got {step!r}.")
        datasets[name] = Dataset(
            name=name, urls=tuple(urls), sha256=sha, path=path, format=entry["format"],
            license=str(entry["license"]).strip(), description=str(entry["description"]).strip(),
            mapping=entry.get("mapping"), model=entry.get("model"),
            model_id=entry.get("model_id"), benchmark=entry.get("benchmark"), step=step,
        )
    groups: dict[str, tuple[str, ...]] = {}
    for gname, members in (raw.get("groups") or {}).items():
        if gname in datasets or gname == "all":
            raise ValueError(f"The group name {gname!r} of the manifest {source} clashes with a "
                             "dataset name or the implicit group 'all'.")
        if not isinstance(members, list) or not members:
            raise ValueError(f"The group {gname!r} of the manifest {source} must be a "
                             f"non-empty list. Got {members!r}.")
        unknown = [m for m in members if m not in datasets]
        if unknown:
            raise ValueError(f"The group {gname!r} of the manifest {source} names unknown "
                             f"dataset(s) {unknown}.")
        groups[gname] = tuple(members)
    return Manifest(datasets=datasets, groups=groups, source=source)


# Parsed manifests keyed by path, kept with the bytes they were parsed from: reading a few KB
# is cheap and, unlike size/mtime/ctime, cannot be fooled by an edit in place.
_MANIFEST_CACHE: dict[Path, tuple[bytes, Manifest]] = {}


def load_manifest(path: str | os.PathLike | None = None) -> Manifest:
    """Read and validate a manifest file.

    Parameters
    ----------
    path : path-like, optional
        Manifest YAML; default ``data/manifest.yaml`` of the repository.

    Returns
    -------
    Manifest
    """
    p = Path(path) if path is not None else _MANIFEST_PATH
    if not p.is_file():
        raise FileNotFoundError(f"The manifest file {p} does not exist.")
    data = p.read_bytes()
    cached = _MANIFEST_CACHE.get(p)
    if cached is not None and cached[0] == data:
        return cached[1]
    try:
        raw = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"The manifest {p} is not UTF-8 text (byte {exc.start}).") from None
    except yaml.YAMLError as exc:
        line, reason = one_line_yaml_error(exc)
        at = f", line {line}" if line else ""
        raise ValueError(f"The manifest {p}{at} is not valid YAML: {reason}.") from None
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
    """The download cache ``data/raw/`` of the repository."""
    return _REPO_ROOT / "data" / "raw"


def _mirror_root(mirror: str | os.PathLike | None) -> Path | None:
    if mirror is not None:
        return Path(mirror)
    env = os.environ.get(MIRROR_ENV)
    return Path(env) if env else None


# No cache: a file is hashed each time it is verified. A cache keyed on (size, mtime) returned
# a file edited in place as verified; hashing is cheap next to reading the file at all (the
# largest mirror file, 2.2 MB, takes 3 ms, at about 1.1 GB/s, while parsing runs below
# 0.2 GB/s), and only the bytes themselves can say that they are the pinned ones.
def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes (read every time: nothing is cached)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class _ChecksumMismatch(ValueError):
    """Bytes whose sha256 is not the manifest's (``got`` holds theirs)."""

    def __init__(self, message: str, got: str):
        super().__init__(message)
        self.got = got


def _checksum_error(ds: Dataset, where: str, got: str) -> ValueError:
    return _ChecksumMismatch(
        f"Checksum mismatch for dataset {ds.name!r} ({where}): expected sha256 {ds.sha256}, "
        f"got {got}.", got
    )


def locate(
    name: str,
    *,
    dest: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    manifest: Manifest | None = None,
) -> Path | None:
    """Local verified path of a dataset, without any network access.

    Looks in the download cache (``dest / path``), then in the mirror (``mirror / path``,
    default env ``LEASH_DATA_MIRROR``). A file whose sha256 differs is ignored in the cache
    (:func:`fetch` replaces it) and an error in the mirror.

    Parameters
    ----------
    name : str
        Dataset name of the manifest.
    dest : path-like, optional
        Download cache; default ``data/raw/`` of the repository.
    mirror : path-like, optional
        Mirror root; default the environment variable ``LEASH_DATA_MIRROR``.
    manifest : Manifest, optional
        Default: ``data/manifest.yaml``.

    Returns
    -------
    pathlib.Path or None
        None when no verified local copy exists.
    """
    ds = dataset(name, manifest=manifest)
    cache = Path(dest) if dest is not None else default_dest()
    local = cache / ds.path
    if local.is_file() and sha256_file(local) == ds.sha256:
        return local
    root = _mirror_root(mirror)
    if root is not None:
        candidate = root / ds.path
        if candidate.is_file():
            got = sha256_file(candidate)
            if got != ds.sha256:
                raise _checksum_error(ds, f"mirror file {candidate}", got)
            return candidate
    return None


def _urlopen(url: str, timeout: float):
    # Indirection so that tests can substitute a fake upstream without any network.
    return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 (URLs come from the manifest)


class _Progress:
    """A one-line progress bar on stderr (hand-written: avoids a dependency for ~20 lines)."""

    def __init__(self, label: str, total: int | None, enabled: bool):
        self.label, self.total, self.enabled, self.done = label, total, enabled, 0

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        mb = self.done / 1e6
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            total = self.total / 1e6
            msg = f"\r{self.label}: [{bar:<30}] {100 * frac:5.1f}% {mb:.1f}/{total:.1f} MB"
        else:
            msg = f"\r{self.label}: {mb:.1f} MB"
        sys.stderr.write(msg)
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _download(ds: Dataset, url: str, target: Path, *, progress: bool, timeout: float) -> Path:
    """Stream ``url`` into ``target`` atomically, verifying the sha256 before the final rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, _urlopen(url, timeout) as resp:
            length = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            bar = _Progress(f"fetch {ds.name}", int(length) if length else None, progress)
            try:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    h.update(chunk)
                    bar.update(len(chunk))
            finally:
                bar.close()
        got = h.hexdigest()
        if got != ds.sha256:
            raise _checksum_error(ds, f"download from {url}", got)
        os.replace(tmp, target)
    finally:
        # Reached with the temporary file still present only on failure (including
        # KeyboardInterrupt): never leave a partial file behind.
        if tmp.exists():
            tmp.unlink()
    return target


def _fetch_one(ds: Dataset, cache: Path, mirror: Path | None, *, force: bool, progress: bool,
               timeout: float) -> Path:
    local = cache / ds.path
    if local.is_file() and not force:
        if sha256_file(local) == ds.sha256:
            return local
        if progress:
            sys.stderr.write(f"fetch {ds.name}: cached file {local} has a wrong sha256; "
                             "fetching it again\n")
    if mirror is not None:
        candidate = mirror / ds.path
        if candidate.is_file():
            got = sha256_file(candidate)
            if got != ds.sha256:
                raise _checksum_error(ds, f"mirror file {candidate}", got)
            return candidate
    errors, mismatch = [], False
    for url in ds.urls:
        try:
            return _download(ds, url, local, progress=progress, timeout=timeout)
        except _ChecksumMismatch as exc:
            # Wrong bytes (a moved tag, an HTML error page served with status 200, ...): the
            # download is discarded and the next URL may still serve the pinned bytes.
            errors.append(f"{url} (expected sha256 {ds.sha256}, got {exc.got}; discarded)")
            mismatch = True
        except (urllib.error.URLError, OSError) as exc:
            # URLError is an OSError; HTTP errors, DNS failures, refused connections, timeouts.
            http = isinstance(exc, urllib.error.HTTPError)  # its reason lacks the status
            errors.append(f"{url} ({exc if http else getattr(exc, 'reason', exc)})")
    if mismatch:
        # Not a DatasetUnavailableError (which notebooks report as a skip): bytes that differ
        # from the pinned ones are an error to look at.
        raise ValueError(
            f"Checksum mismatch for dataset {ds.name!r}: no URL served the expected bytes: "
            f"{'; '.join(errors)}. Provide a verified copy at {local} or in the mirror "
            f"({MIRROR_ENV}) as {ds.path}.")
    mirror_note = (f"the mirror {mirror} has no file {ds.path}" if mirror is not None
                   else f"no mirror is set (env {MIRROR_ENV})")
    raise DatasetUnavailableError(
        f"Cannot fetch dataset {ds.name!r}: download failed from {'; '.join(errors)} and "
        f"{mirror_note}. Provide the file by setting {MIRROR_ENV} to a folder that contains "
        f"{ds.path}, or place the file at {local} (sha256 {ds.sha256})."
    )


def fetch(
    name_or_group: str,
    *,
    dest: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    force: bool = False,
    progress: bool = True,
    timeout: float = 60.0,
    manifest: Manifest | None = None,
) -> Path | dict[str, Path]:
    """Verified local path(s) of a dataset or a group, downloading what is missing.

    Parameters
    ----------
    name_or_group : str
        A dataset name, a group name, or ``"all"``.
    dest : path-like, optional
        Download cache; default ``data/raw/`` of the repository. Files go to ``dest / path``.
    mirror : path-like, optional
        Mirror root; default env ``LEASH_DATA_MIRROR``. Verified mirror files are returned in
        place (not copied).
    force : bool, default False
        Ignore the download cache and fetch again.
    progress : bool, default True
        Show a download progress bar on stderr.
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
        Unknown name, a mirror file with the wrong sha256, or no cached or mirrored copy and
        at least one URL served bytes with the wrong sha256 (the message names the dataset,
        the expected sha256, and each URL with why it failed). A download with the wrong
        sha256 is discarded and the next URL is tried.
    DatasetUnavailableError
        No cached or mirrored copy and every URL failed to download (each named, with why).
    """
    m = manifest if manifest is not None else load_manifest()
    names = m.names(name_or_group)
    cache = Path(dest) if dest is not None else default_dest()
    root = _mirror_root(mirror)
    out = {n: _fetch_one(m.datasets[n], cache, root, force=force, progress=progress,
                         timeout=timeout) for n in names}
    if name_or_group in m.datasets:
        return out[name_or_group]
    return out


def resolve(name_or_path: str | os.PathLike, **fetch_kwargs) -> list[tuple[Path, Dataset | None]]:
    """An existing file path as is, or the fetched file(s) of a manifest dataset or group name.

    Returns a list of ``(path, dataset or None)`` pairs, so that readers can take labels
    (format, model, benchmark, step) from the manifest entry.
    """
    p = Path(name_or_path)
    if p.exists():
        return [(p, None)]
    m = fetch_kwargs.pop("manifest", None) or load_manifest()
    name = str(name_or_path)
    try:
        names = m.names(name)
    except ValueError:
        raise FileNotFoundError(
            f"{name!r} is neither an existing file nor a dataset or group of the manifest "
            f"{m.source}."
        ) from None
    got = fetch(name, manifest=m, **fetch_kwargs)
    paths = {name: got} if isinstance(got, Path) else got
    return [(paths[n], m.datasets[n]) for n in names]
