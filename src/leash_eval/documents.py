"""Untrusted bytes read within bounds: whole JSON documents, compressed files and zip members.

The readers of one-document formats (OpenCompass results, JSON objects keyed by question id,
Reasoning Gym's evaluation results) and of inspect_ai's ``.eval`` archives hold a document in
memory, so what they read is bounded here, while it is read:

- decompressed size: a gzip file or a zip member yields at most :func:`cap` bytes, a multiple
  (:data:`RATIO`) of its compressed size (never less than :data:`FLOOR`), checked while
  streaming, so a 33 kB member cannot expand to gigabytes (a "zip bomb");
- nesting depth: JSON nested deeper than Python's parser follows is one line, not a
  ``RecursionError``;
- duplicate keys: a key twice in one JSON object (which value is meant? DuckDB reads the first,
  Python's ``json`` the last) is refused, naming the object's place and the key;
- zip members: a name given twice, an encrypted member, a compression method other than
  stored, deflate or zstd (deflate64...) are refused, naming the member.

Each refusal is a :class:`leash.errors.LeashValueError` naming the file (``file``), where in it
(``line``: a line, a member, or the JSON path of an object) and the key or value.
Python's ``json`` and ``zipfile`` do the reading; what they do not bound is bounded here.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

from leash.errors import LeashValueError

__all__ = ["RATIO", "FLOOR", "cap", "read_bytes", "first_line", "parse", "load", "open_zip",
           "zip_member", "zip_json"]

#: The most a compressed file or member may expand, as a multiple of its compressed size:
#: JSON text compresses 5-20 times with gzip or zstd, very repetitive JSON up to about 100.
RATIO = 200
#: The size every compressed input may reach whatever its ratio (a small file of repeated
#: verdicts compresses far beyond :data:`RATIO`): 64 MiB.
FLOOR = 64 << 20
ZSTD = 93  # the zip compression method of zstandard (inspect_ai since 0.3.206)
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", ZSTD: "zstd"}
_OTHER_METHODS = {9: "deflate64", 12: "bzip2", 14: "lzma", 98: "PPMd", 99: "AES-encrypted"}


def cap(compressed: int) -> int:
    """The most bytes an input of ``compressed`` bytes may decompress to."""
    return max(FLOOR, RATIO * int(compressed))


def _too_large(path, what: str, compressed: int, line=None) -> LeashValueError:
    return LeashValueError(
        f"{path}: {what + ': ' if what else ''}decompresses to more than {cap(compressed):,} "
        f"bytes, {RATIO} times its {compressed:,} compressed bytes (a zip bomb?); leash bounds "
        "what it holds in memory by the input's size: decompress it yourself and read the "
        "plain file.", file=path, line=line or what or None, value=compressed)


def _is_gz(path: Path) -> bool:
    return path.name.lower().endswith(".gz")


def read_bytes(path) -> bytes:
    """The bytes of a file, decompressed when its name ends in ``.gz``, at most :func:`cap` of
    the file's size (checked while decompressing).
    """
    path = Path(path)
    if not _is_gz(path):
        return path.read_bytes()
    size = path.stat().st_size
    with gzip.open(path, "rb") as fh:
        data = fh.read(cap(size) + 1)
    if len(data) > cap(size):
        raise _too_large(path, "", size)
    return data


def first_line(path, limit: int | None = None) -> bytes:
    """The first non-blank line of a file (decompressed when ``.gz``), reading at most ``limit``
    bytes of it (default: :func:`cap` of the file's size for ``.gz``, the file's size
    otherwise); a longer line is a LeashValueError naming it.
    """
    path = Path(path)
    size = path.stat().st_size
    bomb = limit is None and _is_gz(path)
    limit = limit if limit is not None else cap(size) if _is_gz(path) else size + 1
    with (gzip.open(path, "rb") if _is_gz(path) else open(path, "rb")) as fh:
        lineno = 0
        while line := fh.readline(limit + 1):
            lineno += 1
            if len(line) > limit and bomb:
                raise _too_large(path, f"line {lineno}", size)
            if len(line) > limit:
                raise LeashValueError(f"{path}: line {lineno}: longer than {limit:,} bytes, the "
                                      "most leash reads of one line here.", file=path,
                                      line=lineno)
            if line.strip():
                return line
    return b""


class _Twice(Exception):
    def __init__(self, key):
        self.key = key


def _no_twice(pairs):
    out = dict(pairs)
    if len(out) < len(pairs):
        seen = set()
        raise _Twice(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _marking(pairs):
    """Object hook of the error pass: a dict that remembers its first key given twice."""
    out = _Obj(pairs)
    if len(out) < len(pairs):
        seen = set()
        out.twice = next(k for k, _ in pairs if k in seen or seen.add(k))
    return out


class _Obj(dict):
    twice = None


def _where_twice(doc, at=""):
    """(JSON path, key) of the first object holding a key twice, depth first (error path)."""
    stack = [(doc, at or "$")]
    while stack:
        v, p = stack.pop()
        if isinstance(v, _Obj):
            if v.twice is not None:
                return p, v.twice
            stack.extend((x, f"{p}.{k}" if str(k).isidentifier() else f"{p}[{json.dumps(k)}]")
                         for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, f"{p}[{i}]") for i, x in reversed(list(enumerate(v))))
    return at or "$", None


def _line_of_second(data: bytes, key: str) -> int | None:
    """The line of the second ``"key":`` in the text (a hint for a top-level key), or None."""
    needle = json.dumps(key).encode()
    hits, i = 0, -1
    while (i := data.find(needle, i + 1)) >= 0:
        rest = data[i + len(needle): i + len(needle) + 8].lstrip()
        if rest.startswith(b":"):
            hits += 1
            if hits == 2:
                return data.count(b"\n", 0, i) + 1
    return None


def parse(data: bytes | str, path, where: str = ""):
    """``json.loads`` of a whole document, refusing a key twice in one object (every level)
    and nesting deeper than Python's parser follows, in one line each naming ``path`` and
    ``where`` (a zip member; "" for the file) and the place of the bad object.
    """
    at = f"{where}: " if where else ""
    try:
        return json.loads(data, object_pairs_hook=_no_twice)
    except _Twice:
        place, key = _where_twice(json.loads(data, object_pairs_hook=_marking))
        line = _line_of_second(data.encode() if isinstance(data, str) else data, key) \
            if place == "$" else None
        loc = f"line {line}: " if line else ""
        raise LeashValueError(
            f"{path}: {at}{loc}the object at {place} holds the key {key!r} twice; which value "
            "is meant is ambiguous: remove or rename one.", file=path,
            line=where or (f"line {line}" if line else place), key=key, value=key) from None
    except RecursionError:
        raise LeashValueError(f"{path}: {at}JSON nested too deeply (more levels than Python's "
                              "parser follows); no layout leash reads nests so deep.",
                              file=path, line=where or None) from None
    except json.JSONDecodeError as exc:
        raise LeashValueError(f"{path}: {at}line {exc.lineno}, column {exc.colno}: malformed "
                              f"JSON ({exc.msg}).", file=path, line=where or exc.lineno) \
            from None
    except (UnicodeDecodeError, ValueError) as exc:  # not UTF-8; an integer of 4300+ digits
        raise LeashValueError(f"{path}: {at}not a JSON document ({str(exc).split(':')[0]}).",
                              file=path, line=where or None) from None


_CACHE: dict = {}


def load(path):
    """(document, raw bytes) of a file holding one JSON document (``.gz`` too), within the
    bounds of :func:`read_bytes` and :func:`parse`; cached for the last file read (detection
    reads it, then the reader), keyed by its path, size and modification time.
    """
    path = Path(path)
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _CACHE:
        raw = read_bytes(path)
        doc = parse(raw, path)
        _CACHE.clear()
        _CACHE[key] = (doc, raw)
    return _CACHE[key]


def open_zip(path) -> zipfile.ZipFile:
    """A zip archive whose members are named once each (a name given twice: which member is
    meant?); a LeashValueError naming the file when it is no readable zip, or the member.
    """
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise LeashValueError(f"{path}: not a readable zip archive ({exc}); an inspect_ai .eval "
                              "log is a zip (truncated or not an .eval file?).",
                              file=path) from None
    seen = set()
    for info in zf.infolist():
        if info.filename in seen:
            zf.close()
            raise LeashValueError(f"{path}: member {info.filename}: the archive holds two "
                                  "members of this name; which one is meant is ambiguous.",
                                  file=path, line=f"member {info.filename}",
                                  key=info.filename)
        seen.add(info.filename)
    return zf


def zip_member(zf: zipfile.ZipFile, path, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, at most :func:`cap` of its compressed size (checked before and while
    decompressing): stored and deflate by ``zipfile``, zstd by ``zipfile`` where Python has it
    (3.14), else by the ``zstandard`` package over the member's raw bytes; an encrypted member
    or another method is one line naming it.
    """
    where = f"member {info.filename}"

    def fail(what):
        return LeashValueError(f"{path}: {where}: {what}.", file=path, line=where,
                               key=info.filename)

    if info.flag_bits & 0x1:
        raise fail("encrypted; leash reads unencrypted archives (extract it with its password "
                   "and zip it again)")
    if info.compress_type not in _METHODS:
        name = _OTHER_METHODS.get(info.compress_type, f"method {info.compress_type}")
        raise fail(f"compressed with {name}; leash reads stored, deflate and zstd members "
                   "(as inspect_ai writes them)")
    limit = cap(info.compress_size)
    if info.file_size > limit:
        raise _too_large(path, where, info.compress_size)
    try:
        if info.compress_type != ZSTD or getattr(zipfile, "ZIP_ZSTANDARD", None) == ZSTD:
            with zf.open(info) as fh:  # zipfile stops at the declared size and checks the CRC
                return fh.read(limit + 1)
        return _zstd_member(path, info, limit, fail)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise fail(f"cannot read ({exc})") from None
    except (NotImplementedError, RuntimeError) as exc:  # a method or encryption zipfile lacks
        raise fail(f"cannot read ({exc})") from None
    except Exception as exc:  # zlib.error of a corrupt deflate stream
        if type(exc).__module__ == "zlib":
            raise fail(f"cannot decompress ({exc})") from None
        raise


def _zstd_member(path, info, limit, fail) -> bytes:
    import io
    import struct

    try:
        import zstandard
    except ImportError:
        raise fail("compressed with zstd (inspect_ai 0.3.206 and later); install the "
                   "'zstandard' package to read it") from None
    with open(path, "rb") as fh:  # the local header: 30 bytes, then the name and extra field
        fh.seek(info.header_offset)
        head = fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise fail("no local header (a truncated or corrupt archive)")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        data = fh.read(info.compress_size)
    try:  # streamed: at most limit + 1 bytes are ever produced, whatever the frame claims
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
            out = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise fail(f"cannot decompress ({exc})") from None
    if len(out) > limit:
        raise _too_large(path, f"member {info.filename}", info.compress_size)
    if len(out) != info.file_size or zipfile.crc32(out) != info.CRC:
        raise fail("size or CRC mismatch (a corrupt archive)")
    return out


def zip_json(zf: zipfile.ZipFile, path, info: zipfile.ZipInfo):
    """A member parsed as one JSON document (:func:`zip_member`, then :func:`parse`)."""
    return parse(zip_member(zf, path, info), path, f"member {info.filename}")
