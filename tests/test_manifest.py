"""Tests of leash_eval.manifest: manifest validity, mirror use, download, checksum, atomicity,
offline.

No test contacts the network: downloads come from a local fake upstream (file:// URLs, an HTTP
server on 127.0.0.1, or a substituted downloader).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import re
import threading
from pathlib import Path

import pytest
import requests

from leash_eval import manifest as mf

REPO = Path(__file__).resolve().parents[1]


def _mirror_root() -> Path | None:
    env = os.environ.get(mf.MIRROR_ENV)
    root = Path(env) if env else REPO.parent / "shared" / "data"
    return root if root.is_dir() else None


MIRROR = _mirror_root()
needs_mirror = pytest.mark.skipif(MIRROR is None, reason="data mirror not found "
                                  "(set LEASH_DATA_MIRROR)")


def _fake_manifest(tmp_path: Path, payload: bytes, *, sha: str | None = None,
                   urls: list[str] | None = None) -> mf.Manifest:
    upstream = tmp_path / "upstream" / "file.jsonl"
    upstream.parent.mkdir(parents=True, exist_ok=True)
    upstream.write_bytes(payload)
    raw = {
        "datasets": {
            "toy": {
                "urls": urls or [upstream.as_uri()],
                "sha256": sha or hashlib.sha256(payload).hexdigest(),
                "path": "sub/toy.jsonl",
                "format": "nested",
                "mapping": "rollouts",
                "license": "test",
                "description": "toy",
            },
        },
        "groups": {"toys": ["toy"]},
    }
    return mf._parse_manifest(raw, "fake")


# ----------------------------------------------------------------------------- the manifest file


def test_manifest_loads_and_names_every_known_dataset():
    m = mf.load_manifest()
    expected = {
        "gsm8k-probe-sft", "gsm8k-probe-rl-final", "gsm8k-probe-questions",
        "math-eval-example-cot100", "math500", "aime24", "amc23", "minerva-math", "olympiadbench",
        *(f"gsm8k-probe-rl-step-{s}" for s in (100, 300, 500, 1000)),
        "gsm8k-probe-per-question-final",
        *(f"gsm8k-probe-per-question-step-{s}" for s in (100, 300, 500, 1000)),
    }
    assert set(m.datasets) == expected
    assert len(m.names("gsm8k-probe")) == 12
    assert m.names("all") == list(m.datasets)
    assert m.datasets["gsm8k-probe-rl-step-300"].step == 300
    assert m.datasets["gsm8k-probe-sft"].reader_kwargs() == {
        "fmt": "nested", "model": "sft", "benchmark": "gsm8k", "mapping": "rollouts"}
    assert m.datasets["gsm8k-probe-rl-step-100"].reader_kwargs()["step"] == 100
    assert m.datasets["math-eval-example-cot100"].reader_kwargs() == {
        "fmt": "evaluator", "model": "qwen2.5-math-instruct", "benchmark": "math"}
    with pytest.raises(ValueError, match="not a generations format"):
        m.datasets["math500"].reader_kwargs()


def test_unknown_name_lists_choices():
    with pytest.raises(ValueError, match=r"Unknown dataset or group 'nope'.*gsm8k-probe-sft"):
        mf.dataset("nope")
    with pytest.raises(ValueError, match="is a group"):
        mf.dataset("gsm8k-probe")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("sha256", "abc", "64 hex digits"), ("format", "qwen-eval", "'format'"),
     ("path", "../escape", "relative"), ("urls", [], "non-empty list"), ("step", "7", "int")],
)
def test_manifest_validation(tmp_path, key, value, message):
    m = _fake_manifest(tmp_path, b"x")
    entry = {"urls": ["file:///x"], "sha256": "0" * 64, "path": "a", "format": "csv",
             "license": "l", "description": "d", key: value}
    with pytest.raises(ValueError, match=message):
        mf._parse_manifest({"datasets": {"bad": entry}}, "fake")
    assert m.datasets["toy"].format == "nested"


@needs_mirror
@pytest.mark.mirror
def test_manifest_agrees_with_mirror_readme_and_bytes():
    """Every row of the mirror's table appears verbatim in the manifest, and the bytes match."""
    readme = (MIRROR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \| (\S+) \|", readme, flags=re.M)
    assert len(rows) == 18
    by_path = {d.path: d for d in mf.load_manifest().datasets.values()}
    for path, sha, url in rows:
        ds = by_path[path]
        assert ds.sha256 == sha and ds.urls == (url,)
        assert mf.sha256_file(MIRROR / path) == sha


# ----------------------------------------------------------------------------- mirror


@needs_mirror
@pytest.mark.mirror
def test_fetch_group_from_mirror_returns_verified_mirror_paths(tmp_path):
    got = mf.fetch("gsm8k-probe-raw", dest=tmp_path, mirror=MIRROR, progress=False)
    assert list(got) == mf.load_manifest().names("gsm8k-probe-raw")
    for name, path in got.items():
        assert path == MIRROR / mf.dataset(name).path
    assert not any(tmp_path.iterdir())  # nothing copied
    assert mf.locate("math500", dest=tmp_path, mirror=MIRROR) == MIRROR / mf.dataset(
        "math500").path


@needs_mirror
@pytest.mark.mirror
def test_mirror_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(mf.MIRROR_ENV, str(MIRROR))
    assert mf.fetch("aime24", dest=tmp_path, progress=False) == MIRROR / mf.dataset(
        "aime24").path


def test_corrupt_mirror_file_is_an_error(tmp_path):
    m = _fake_manifest(tmp_path, b"good bytes\n")
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "toy.jsonl").write_bytes(b"bad bytes\n")
    bad_sha = hashlib.sha256(b"bad bytes\n").hexdigest()
    with pytest.raises(ValueError, match=f"'toy'.*expected sha256 {m.datasets['toy'].sha256}"
                                         f", got {bad_sha}"):
        mf.fetch("toy", dest=tmp_path / "raw", mirror=mirror, manifest=m, progress=False)
    with pytest.raises(ValueError, match="Checksum mismatch"):
        mf.locate("toy", dest=tmp_path / "raw", mirror=mirror, manifest=m)


# ----------------------------------------------------------------------------- download


def test_download_from_file_url_then_cached(tmp_path, monkeypatch, capsys):
    payload = b'{"qid": 1}\n' * 1000
    m = _fake_manifest(tmp_path, payload)
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    dest = tmp_path / "raw"
    assert mf.locate("toy", dest=dest, manifest=m) is None
    path = mf.fetch("toy", dest=dest, manifest=m, progress=True)
    assert path == dest / "sub" / "toy.jsonl"
    assert path.read_bytes() == payload
    assert "fetch toy" in capsys.readouterr().err  # progress on stderr
    assert [p.name for p in path.parent.iterdir()] == ["toy.jsonl"]  # no temp file left

    # Second call: served from the cache without opening any URL.
    def no_network(url, bar, timeout, size=None):
        raise AssertionError("network used although the cache is valid")

    monkeypatch.setattr(mf, "_downloader", no_network)
    assert mf.fetch("toys", dest=dest, manifest=m, progress=False) == {"toy": path}
    assert mf.locate("toy", dest=dest, manifest=m) == path


def test_force_downloads_again(tmp_path, monkeypatch):
    m = _fake_manifest(tmp_path, b"payload")
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    dest = tmp_path / "raw"
    path = mf.fetch("toy", dest=dest, manifest=m, progress=False)
    opened = []
    real = mf._downloader
    monkeypatch.setattr(mf, "_downloader", lambda url, bar, timeout, size=None: opened.append(
        url) or real(url, bar, timeout))
    assert mf.fetch("toy", dest=dest, manifest=m, progress=False) == path
    assert opened == []
    assert mf.fetch("toy", dest=dest, manifest=m, progress=False, force=True) == path
    assert opened == list(m.datasets["toy"].urls)


def test_download_checksum_mismatch_leaves_nothing(tmp_path, monkeypatch):
    m = _fake_manifest(tmp_path, b"payload", sha="1" * 64)
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    got = hashlib.sha256(b"payload").hexdigest()
    with pytest.raises(ValueError, match=f"'toy'.*expected sha256 {'1' * 64}, got {got}"):
        mf.fetch("toy", dest=tmp_path / "raw", manifest=m, progress=False)
    assert not any((tmp_path / "raw" / "sub").iterdir())


def _breaking(exc: BaseException):
    """A substitute for ``mf._downloader``: its downloader writes some bytes and then fails."""

    def download(url, output_file, pooch):
        Path(output_file).write_bytes(b"x" * 100)
        raise exc

    return lambda url, bar, timeout, size=None: download


@pytest.mark.parametrize("exc", [ConnectionResetError("reset"), KeyboardInterrupt()])
def test_interrupted_download_leaves_no_partial_file(tmp_path, monkeypatch, exc):
    m = _fake_manifest(tmp_path, b"payload")
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    monkeypatch.setattr(mf, "_downloader", _breaking(exc))
    dest = tmp_path / "raw"
    expected = mf.DatasetUnavailableError if isinstance(exc, OSError) else KeyboardInterrupt
    with pytest.raises(expected):
        mf.fetch("toy", dest=dest, manifest=m, progress=False)
    assert not (dest / "sub" / "toy.jsonl").exists()
    assert list((dest / "sub").iterdir()) == []


@pytest.fixture
def http_upstream(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path / "upstream"``: (base URL, paths asked)."""
    folder, asked = tmp_path / "upstream", []
    folder.mkdir(exist_ok=True)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", asked
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_download_over_http_reports_progress_and_http_errors(tmp_path, monkeypatch, capsys,
                                                             http_upstream):
    base, asked = http_upstream
    payload = b'{"qid": 1}\n' * 1000  # 11,000 bytes
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    m = _fake_manifest(tmp_path, payload, urls=[f"{base}/missing.jsonl", f"{base}/file.jsonl"])
    dest = tmp_path / "raw"
    path = mf.fetch("toy", dest=dest, manifest=m, progress=True)
    assert path == dest / "sub" / "toy.jsonl" and path.read_bytes() == payload
    assert asked == ["/missing.jsonl", "/file.jsonl"]  # the 404 first, then the next URL
    err = capsys.readouterr().err
    assert "fetch toy" in err and "11.0k" in err  # tqdm's bar, scaled from the 11,000 bytes
    assert [p.name for p in path.parent.iterdir()] == ["toy.jsonl"]

    only_missing = _fake_manifest(tmp_path, payload, urls=[f"{base}/missing.jsonl"])
    with pytest.raises(mf.DatasetUnavailableError) as info:
        mf.fetch("toy", dest=tmp_path / "raw2", manifest=only_missing, progress=False)
    assert f"download failed from {base}/missing.jsonl (HTTP 404 " in str(info.value)
    assert "\n" not in str(info.value) and capsys.readouterr().err == ""  # quiet: no pooch log
    assert list((tmp_path / "raw2" / "sub").iterdir()) == []


def test_stale_cache_file_is_replaced(tmp_path, monkeypatch):
    payload = b"fresh"
    m = _fake_manifest(tmp_path, payload)
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    stale = tmp_path / "raw" / "sub" / "toy.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale")
    assert mf.locate("toy", dest=tmp_path / "raw", manifest=m) is None
    assert mf.fetch("toy", dest=tmp_path / "raw", manifest=m, progress=False).read_bytes() == (
        payload)


def test_offline_without_mirror_explains_how_to_provide_the_file(tmp_path, monkeypatch):
    url = "https://example.invalid/toy.jsonl"
    m = _fake_manifest(tmp_path, b"payload", urls=[url])
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)

    monkeypatch.setattr(mf, "_downloader", _breaking(
        requests.exceptions.ConnectionError("Name or service not known")))
    dest = tmp_path / "raw"
    with pytest.raises(FileNotFoundError) as info:
        mf.fetch("toy", dest=dest, manifest=m, progress=False)
    msg = str(info.value)
    assert "'toy'" in msg and url in msg and mf.MIRROR_ENV in msg
    assert str(dest / "sub" / "toy.jsonl") in msg
    assert isinstance(info.value, mf.DatasetUnavailableError)


def test_resolve_paths_and_names(tmp_path, monkeypatch):
    m = _fake_manifest(tmp_path, b"payload")
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    f = tmp_path / "local.jsonl"
    f.write_text("{}\n")
    assert mf.resolve(f) == [(f, None)]
    [(p, ds)] = mf.resolve("toy", manifest=m, dest=tmp_path / "raw", progress=False)
    assert p.read_bytes() == b"payload" and ds.name == "toy"
    with pytest.raises(FileNotFoundError, match="neither an existing file"):
        mf.resolve(tmp_path / "missing.jsonl", manifest=m)


# ----------------------------------------------------------------------------- bounded fetch


@pytest.fixture
def bad_upstream():
    """An HTTP server on 127.0.0.1: /endless sends bytes for ever, /slow one byte every 0.3 s."""
    import time

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x" * (1 << 16) if self.path == "/endless" else b"x")
                    if self.path == "/slow":
                        self.wfile.flush()
                        time.sleep(0.3)
            except OSError:  # the client went away
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_fetch_stops_at_the_manifest_size_and_the_deadline(tmp_path, monkeypatch, bad_upstream):
    import dataclasses

    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    payload = b"three kB " * 333
    m = _fake_manifest(tmp_path, payload, urls=[f"{bad_upstream}/endless"])
    toy = dataclasses.replace(m.datasets["toy"], size=len(payload))
    m = dataclasses.replace(m, datasets={"toy": toy})
    dest = tmp_path / "raw"
    with pytest.raises(mf.DatasetUnavailableError, match=f"more than the manifest's "
                                                         f"{len(payload):,} bytes"):
        mf.fetch("toy", dest=dest, manifest=m, progress=False)
    assert list((dest / "sub").iterdir()) == []  # nothing left behind
    monkeypatch.setattr(mf, "DEADLINE", 1.0)
    slow = dataclasses.replace(m, datasets={"toy": dataclasses.replace(
        toy, urls=(f"{bad_upstream}/slow",))})
    with pytest.raises(mf.DatasetUnavailableError, match="not finished within 1 s"):
        mf.fetch("toy", dest=dest, manifest=slow, progress=False)
    assert list((dest / "sub").iterdir()) == []


def test_a_killed_fetchs_temporary_folder_is_removed(tmp_path, monkeypatch):
    payload = b"fresh\n"
    m = _fake_manifest(tmp_path, payload)
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    stale = tmp_path / "raw" / "sub" / ".toy.jsonl.999999999.abcd.tmp"  # a pid no process has
    stale.mkdir(parents=True)
    (stale / "tmpabcdef").write_bytes(b"half a download")
    path = mf.fetch("toy", dest=tmp_path / "raw", manifest=m, progress=False)
    assert path.read_bytes() == payload
    assert [p.name for p in path.parent.iterdir()] == ["toy.jsonl"]
