"""Writing a file or folder a user named whole or not at all: the one place both packages write
their outputs through.

A file is written to a temporary file beside it (same folder, so same file system), flushed to
disk, then moved onto the target with ``os.replace``, which is atomic on POSIX and Windows: a
reader, a kill (even SIGKILL) or a full disk sees either the previous file or the new one,
never a part. A folder (:func:`replacing_folder`) is written beside it and renamed into place
when it is new; when it exists, each of its files is moved in whole (a folder cannot be swapped
atomically), after every file was written.

Temporary names are ``.NAME.PID.XXXX.tmp``: one left by a process killed with SIGKILL (which
no code can clean up after) is removed by the next write of the same target, once no live
process has that pid. They are created new (``tempfile``: ``O_EXCL``, a random part), so nothing
planted under a name (a symlink to another file) is ever written through; each file then gets
the mode ``open()`` gives under the umask (``mkstemp`` creates 0600). A lock file, whose name
must be known in advance, is opened by :func:`open_lock`, which refuses a symlink.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["alive", "folder_beside", "open_lock", "replacing", "replacing_folder", "write_bytes",
           "write_text"]

_umask = os.umask(0)
os.umask(_umask)
_FILE_MODE = 0o666 & ~_umask  # what open() gives (mkstemp creates files 0600)
_DIR_MODE = 0o777 & ~_umask


def alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (someone else's counts: it cannot be signalled, but is).
    Always true on Windows, where ``os.kill(pid, 0)`` would end the process.
    """
    if os.name == "nt":  # pragma: no cover - Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: someone else's process
        return True
    return True


def _prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _remove_stale(path: Path) -> None:
    """Remove the temporaries of ``path`` left by processes that no longer run (SIGKILL)."""
    with contextlib.suppress(OSError):
        for p in path.parent.glob(f".{path.name}.*.tmp"):
            pid = p.name[len(path.name) + 2:].split(".", 1)[0]
            if not pid.isdigit() or alive(int(pid)):
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)


def _fsync(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; moved onto ``path`` when the block ends
    without an error, removed when it raises (the previous file is then untouched).

    Parameters
    ----------
    path : str or os.PathLike
        The target; its folder is created if missing.

    Yields
    ------
    pathlib.Path
        Where the block writes the file (by name: ``pq.write_table(table, tmp)``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with replacing(target) as tmp:
    ...     _ = tmp.write_text("whole")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('whole', ['out.txt'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    fd, name = tempfile.mkstemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _FILE_MODE)
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_lock(path):
    """The lock file ``path`` opened for reading and writing (created if missing, with the mode
    ``open()`` gives), never through a symlink: a lock's name is known in advance, so a symlink
    planted there would otherwise be followed (and the file it names truncated). An OSError
    naming ``path`` when it is a symlink.

    Returns
    -------
    io.TextIOWrapper
        Text mode, UTF-8, positioned at the start.
    """
    path = Path(path)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if path.is_symlink():
            raise OSError(f"{path} is a symlink; a lock file is never opened through one: "
                          "remove it.") from None
        raise exc
    return os.fdopen(fd, "r+", encoding="utf-8")


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (:func:`replacing`); returns ``path``."""
    path = Path(path)
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return path


def write_text(path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` whole or not at all; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def _temporary_folder(path: Path) -> Path:
    """A new temporary folder beside ``path`` (its folder created if missing), after removing
    one a killed process left.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    return Path(tempfile.mkdtemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent))


@contextlib.contextmanager
def folder_beside(path) -> Iterator[Path]:
    """A temporary folder beside ``path`` (same file system, so its files move onto ``path``
    with ``os.replace``), removed with what is left in it when the block ends; one a killed
    process left is removed first. For writers that name their own files (a download).
    """
    path = Path(path)
    tmp = _temporary_folder(path)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def replacing_folder(path, *, whole: bool = False) -> Iterator[Path]:
    """A temporary folder beside ``path`` to write files into; when the block ends without an
    error it becomes ``path`` (renamed, when ``path`` does not exist) or its files are moved
    into ``path`` one by one with ``os.replace`` (each whole; files of ``path`` the block did not
    write stay); when it raises, the temporary folder is removed and ``path`` is untouched.

    Parameters
    ----------
    path : str or os.PathLike
        The folder to write.
    whole : bool, default False
        Replace an existing ``path`` as a whole (what it held and the block did not write goes):
        the new folder and the old one are exchanged in one step where the system can
        (Linux's ``renameat2(RENAME_EXCHANGE)``), else by two renames, and the old one is then
        removed. A kill at any moment leaves the previous folder or the new one at ``path``
        (between the two renames of the fallback, the previous one beside it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> with replacing_folder(target) as tmp:
    ...     _ = (tmp / "a.txt").write_text("a")
    >>> sorted(p.name for p in target.iterdir()), sorted(p.name for p in target.parent.iterdir())
    (['a.txt'], ['demo'])
    >>> with replacing_folder(target, whole=True) as tmp:
    ...     _ = (tmp / "b.txt").write_text("b")
    >>> sorted(p.name for p in target.iterdir()), sorted(p.name for p in target.parent.iterdir())
    (['b.txt'], ['demo'])
    """
    path = Path(path)
    tmp = _temporary_folder(path)
    try:
        yield tmp
        for f in tmp.rglob("*") if whole else tmp.iterdir():
            if f.is_file() and not f.is_symlink():
                _fsync(f)
        os.chmod(tmp, _DIR_MODE)
        if not path.exists() and not path.is_symlink():
            os.rename(tmp, path)
            return
        if whole:
            _exchange(tmp, path)  # tmp now holds the previous folder
            shutil.rmtree(tmp, ignore_errors=True)
            return
        for f in sorted(tmp.iterdir()):
            os.replace(f, path / f.name)
        tmp.rmdir()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _exchange(a: Path, b: Path) -> None:
    """Exchange the entries ``a`` and ``b`` of one folder: in one step with Linux's
    ``renameat2(RENAME_EXCHANGE)`` (through ctypes: Python has no binding), else ``b`` renamed
    onto ``a``'s empty place via a third name, then ``a`` onto ``b``.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            renameat2 = libc.renameat2
        except (OSError, AttributeError):  # pragma: no cover - a libc without it (glibc < 2.28)
            renameat2 = None
        if renameat2 is not None:
            at_fdcwd, rename_exchange = -100, 2
            if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b),
                         rename_exchange) == 0:
                return
            err = ctypes.get_errno()
            if err not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # the file system can
                raise OSError(err, os.strerror(err), str(b))
    aside = Path(tempfile.mkdtemp(prefix=_prefix(b), suffix=".tmp", dir=b.parent))
    os.rename(b, aside)  # onto an empty folder: allowed
    os.rename(a, b)
    os.rename(aside, a)
