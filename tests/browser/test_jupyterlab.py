"""The notebooks as a user runs them: JupyterLab "Run All Cells" in a real (headless) Chromium.

Not part of `make test` (tests/conftest.py collects this folder only when it is named:
``pytest tests/browser``); `make test-browser` runs it. It needs Chromium (or Chrome) and a matching
chromedriver on PATH (Debian: ``apt-get install chromium chromium-driver``); Selenium drives
that chromedriver and never downloads one.

One JupyterLab server on 127.0.0.1 (a free port, a random token, root_dir ``notebooks/``, so
each kernel runs where a user opens the notebook), started with this interpreter, whose
``python3`` kernel is then this interpreter too. The server's environment has ``src/`` first on
PYTHONPATH, so the kernel imports this checkout's ``leash`` whichever checkout the interpreter
has installed, and no ``LEASH_*`` or ``MPLBACKEND`` variable: the notebooks must run as pages
with nothing set. JupyterLab's user settings and workspaces live in a temporary folder: autosave
is on, every 3 s (as a user's JupyterLab saves, only sooner), windowing is off (every cell is in
the page, so the test can read each prompt), no news or update check.

Per notebook: open it, wait for the kernel, Run > Run All Cells, wait until the kernel is idle
and every code cell has an execution count, then check that no output is an error or stderr,
that at least one image is shown inline, and save screenshots to ``build/browser/``
(``<notebook>-top.png``, ``-end.png`` and ``-full-1.png``, the whole notebook in one tall
window, or several for a long notebook). Then wait for the autosave: the notebook's paired
``.ipynb`` holds the outputs, and ``git status`` is clean (the committed Markdown of the
notebook is unchanged; the ``.ipynb`` is git-ignored; see leash.notebook_files). The committed
``figures/`` must be unchanged too (by hand, a notebook writes to the scratch folder
``build/figures/``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from _chrome import chrome, free_port
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
FIGURES = REPO / "figures"
SHOTS = REPO / "build" / "browser"

# notebook -> seconds allowed for Run All Cells (generous: two shared cores)
CASES = {"00a_walkthrough_support.ipynb": 180, "00b_walkthrough_noise.ipynb": 240,
         "00c_walkthrough_curves.ipynb": 240, "01_table1_support.ipynb": 180}
WINDOW = (1400, 1000)
STDERR = "application/vnd.jupyter.stderr"  # JupyterLab shows errors and stderr with this type


def tree_hash(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``folder``."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def changes(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))



def write_settings(settings: Path) -> None:
    """JupyterLab user settings of the test (JUPYTERLAB_SETTINGS_DIR)."""
    values = {
        # save as a user's JupyterLab does (default every 120 s), only sooner
        "docmanager-extension/plugin": {"autosave": True, "autosaveInterval": 3},
        # every cell attached to the page, whatever the JupyterLab version's default
        "notebook-extension/tracker": {"windowingMode": "none"},
        # no news toast, no update check (nothing outside is reachable)
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }
    for name, value in values.items():
        path = settings / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


def tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


class Lab:
    """A running JupyterLab server: ``url(path)`` opens a notebook, ``shutdown()`` stops it."""

    def __init__(self, home: Path, log: Path):
        self.port, self.token, self.log = free_port(), secrets.token_hex(24), log
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("LEASH_") and k != "MPLBACKEND"}
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO / "src")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        for var, sub in [("JUPYTERLAB_SETTINGS_DIR", "settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                         ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime")]:
            env[var] = str(home / sub)
            (home / sub).mkdir(parents=True, exist_ok=True)
        write_settings(home / "settings")
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={NOTEBOOKS}",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        log.parent.mkdir(parents=True, exist_ok=True)
        self._logfile = open(log, "w")
        self.proc = subprocess.Popen(cmd, env=env, cwd=NOTEBOOKS, stdout=self._logfile,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def wait_ready(self, timeout: float = 90) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with status {self.proc.returncode} before "
                            f"answering; its log ({self.log}):\n{tail(self.log)}")
            try:
                self.api("/api/status")
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
        pytest.fail(f"JupyterLab did not answer on port {self.port} within {timeout:.0f} s; "
                    f"its log ({self.log}):\n{tail(self.log)}")

    def url(self, notebook: str) -> str:
        # ?reset: an empty workspace, so only this notebook is opened
        return f"{self.base}/lab/tree/{notebook}?reset&token={self.token}"

    def shutdown_kernels(self) -> None:
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def shutdown(self) -> None:
        """Ask the server to stop (it stops its kernels); kill it if it does not."""
        try:
            if self.proc.poll() is None:
                try:
                    self.api("/api/shutdown", method="POST")
                except (OSError, urllib.error.URLError):
                    pass
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            self._logfile.close()


def git_status() -> str:
    """``git status --porcelain`` of the checkout ("" when clean, or when it is no clone)."""
    proc = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                          text=True)
    return proc.stdout if proc.returncode == 0 else ""


@pytest.fixture(scope="module")
def committed():
    """Hashes of figures/ and the notebooks' Markdown, and git's status, before any browser
    run."""
    return tree_hash(FIGURES), {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                                for p in NOTEBOOKS.glob("*.md")}, git_status()


@pytest.fixture(scope="module")
def lab(committed):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="leash-lab-") as home:
        server = Lab(Path(home), SHOTS / "jupyterlab.log")
        try:
            server.wait_ready()
            yield server
        finally:
            server.shutdown()
            if server.proc.poll() is None:  # pragma: no cover - shutdown() kills it already
                server.proc.kill()


@pytest.fixture
def browser(tmp_path):
    driver = chrome(tmp_path / "chrome-profile", WINDOW)
    try:
        yield driver
    finally:
        driver.quit()


# --- reading the page --------------------------------------------------------------------------

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

CELL_STATE_JS = f"""
const panel = document.querySelector('{PANEL}');
if (!panel) return null;
const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
const cells = [...panel.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, i) => ({{
  index: i,
  code: cell.classList.contains('jp-CodeCell'),
  prompt: (cell.querySelector('.jp-InputPrompt') || {{}}).textContent || '',
  source: ((cell.querySelector('.cm-content') || {{}}).innerText || '').trim(),
  // an exercise's solution is shown collapsed (jupyter.source_hidden): no prompt is drawn,
  // only a placeholder; it has run once its output is there (every solution shows one)
  hidden: !!cell.querySelector('.jp-InputPlaceholder'),
  outputs: cell.querySelectorAll('.jp-OutputArea-child').length,
}}));
return {{status: indicator ? indicator.dataset.status : null, cells: cells}};
"""

OUTPUTS_JS = f"""
const panel = document.querySelector('{PANEL}');
const bad = [...panel.querySelectorAll('.jp-OutputArea [data-mime-type="{STDERR}"]')];
const imgs = [...panel.querySelectorAll('.jp-OutputArea img')];
return {{
  errors: bad.map(e => {{
    const cell = e.closest('.jp-Cell');
    const all = [...panel.querySelectorAll('.jp-Notebook .jp-Cell')];
    const t = e.innerText;  // a traceback's last line says what went wrong: keep both ends
    return {{cell: all.indexOf(cell),
             text: t.length > 900 ? t.slice(0, 300) + '\\n[...]\\n' + t.slice(-600) : t}};
  }}),
  images: imgs.map(i => ({{loaded: i.complete && i.naturalWidth > 0,
                           width: i.naturalWidth, height: i.naturalHeight}})),
}};
"""

SCROLLER_JS = f"""
const panel = document.querySelector('{PANEL}');
return panel.querySelector('.jp-WindowedPanel-outer') || panel.querySelector('.jp-Notebook');
"""


def cell_state(driver):
    return driver.execute_script(CELL_STATE_JS)


def executed(cell) -> bool:
    """JupyterLab's prompt '[3]:' (done), '[*]:' (running or queued) or '[ ]:' (not run); a
    collapsed cell (an exercise's solution) has no prompt drawn: done once it shows output."""
    inner = cell["prompt"].strip().removesuffix(":").strip("[] ")
    return inner.isdigit() or (cell.get("hidden", False) and cell.get("outputs", 0) > 0)


def describe(cell) -> str:
    first = (cell["source"].splitlines() or [""])[0][:80]
    return f"cell {cell['index']} {cell['prompt'].strip() or '[ ]:'} `{first}`"


def wait_until(driver, what: str, predicate, timeout: float, poll: float = 0.5):
    """``predicate(driver)`` until it returns something true; fail naming ``what``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            value = predicate(driver)
        except WebDriverException:
            value = None
        if value:
            return value
        time.sleep(poll)
    pytest.fail(f"{what}: not within {timeout:.0f} s")


def accept_dialog(driver) -> bool:
    """Accept a JupyterLab dialog (e.g. "Select Kernel" if the kernelspec were unknown)."""
    buttons = driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept")
    for b in buttons:
        if b.is_displayed():
            b.click()
            return True
    return False


def code_cells(notebook: str) -> int:
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    return sum(c["cell_type"] == "code" for c in cells)


def autosaved(stem: str):
    """The page has no unsaved change and the saved .ipynb holds the outputs: their count."""
    def check(driver):
        if driver.find_elements(By.CSS_SELECTOR, ".lm-TabBar-tab.jp-mod-dirty"):
            return None
        cells = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        return sum(len(c.get("outputs", [])) for c in cells)
    return check


def ready(expected: int):
    """Kernel idle and all ``expected`` code cells of the file in the page."""
    def check(driver):
        accept_dialog(driver)
        state = cell_state(driver)
        return state if (state and state["status"] == "idle"
                         and sum(c["code"] for c in state["cells"]) == expected) else None
    return check


def wait_for_run(driver, timeout: float, settle: float = 5.0):
    """Poll until every code cell has an execution count with the kernel idle ("done"), until
    the kernel has been idle for ``settle`` s with no cell running or queued but some not run
    (Run All stops at an error: "stopped"), or ``timeout`` s ("timeout"). Returns the last
    state of the page and the outcome."""
    end, idle_since, state = time.monotonic() + timeout, None, None
    while time.monotonic() < end:
        accept_dialog(driver)
        try:
            state = cell_state(driver) or state
        except WebDriverException:
            pass
        codes = [c for c in state["cells"] if c["code"]] if state else []
        if codes and state["status"] == "idle":
            if all(executed(c) for c in codes):
                return state, "done"
            if not any("*" in c["prompt"] for c in codes):
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > settle:
                    return state, "stopped"
            else:
                idle_since = None
        else:
            idle_since = None
        time.sleep(1.0)
    return state, "timeout"


def run_all_cells(driver) -> str:
    """Run > Run All Cells from the menu bar; the command palette if the menu item is absent."""
    for item in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item"):
        if item.text.strip() == "Run":
            item.click()
            entries = wait_until(driver, "the Run menu", lambda d: d.find_elements(
                By.CSS_SELECTOR, '.lm-Menu li[data-command="runmenu:run-all"]'), 10)
            entries[0].click()
            return "menu Run > Run All Cells"
    # fallback: the command palette (Ctrl+Shift+C), the notebook's own command
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(driver).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("c") \
        .key_up(Keys.SHIFT).key_up(Keys.CONTROL).perform()
    box = wait_until(driver, "the command palette", lambda d: d.find_elements(
        By.CSS_SELECTOR, ".lm-CommandPalette-input"), 10)[0]
    box.send_keys("Run All Cells")
    wait_until(driver, "Run All Cells in the palette", lambda d: d.find_elements(
        By.CSS_SELECTOR, '.lm-CommandPalette-item[data-command="notebook:run-all-cells"]'),
        10)[0].click()
    return "command palette: Run All Cells"


# the height of the notebook's content: the bottom of its last cell (JupyterLab adds blank space
# below it to scroll past the end)
CONTENT_JS = f"""
const scroller = arguments[0];
const cells = document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell');
const last = cells[cells.length - 1];
return last.getBoundingClientRect().bottom - scroller.getBoundingClientRect().top
       + scroller.scrollTop;
"""
PAGE = 10000  # tallest window of the full screenshots; a longer notebook takes several


def screenshots(driver, stem: str) -> list[Path]:
    """``<stem>-top.png`` and ``-end.png`` (its last cell) in the 1400x1000 window, then the
    whole notebook in a window as tall as it (``-full-1.png``; ``-full-2.png``... beyond
    ``PAGE`` pixels)."""
    for old in SHOTS.glob(f"{stem}-*.png"):
        old.unlink()
    shots = [SHOTS / f"{stem}-top.png", SHOTS / f"{stem}-end.png"]
    scroller = driver.execute_script(SCROLLER_JS)
    driver.execute_script("arguments[0].scrollTop = 0;", scroller)
    time.sleep(0.5)
    driver.save_screenshot(str(shots[0]))
    driver.execute_script(f"[...document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell')]"
                          ".pop().scrollIntoView({block: 'end'});")
    time.sleep(0.5)
    driver.save_screenshot(str(shots[1]))
    content = driver.execute_script(CONTENT_JS, scroller)
    visible = driver.execute_script("return arguments[0].clientHeight;", scroller)
    driver.set_window_size(WINDOW[0], int(min(WINDOW[1] + content - visible + 20, PAGE)))
    time.sleep(1.0)
    content = driver.execute_script(CONTENT_JS, scroller)  # again: the layout may have changed
    visible = driver.execute_script("return arguments[0].clientHeight;", scroller)
    top, page = 0, 1
    while True:
        # the last page ends just below the last cell (it overlaps the page before)
        driver.execute_script("arguments[0].scrollTop = arguments[1];", scroller,
                              max(0, min(top, content - visible + 80)))
        time.sleep(1.0)
        shots.append(SHOTS / f"{stem}-full-{page}.png")
        driver.save_screenshot(str(shots[-1]))
        top, page = top + visible, page + 1
        if top >= content - 1:
            break
    driver.set_window_size(*WINDOW)
    return shots


@pytest.mark.parametrize("notebook", list(CASES), ids=lambda n: n.removesuffix(".ipynb"))
def test_run_all_cells_in_jupyterlab(notebook, lab, browser, committed):
    stem, timeout = notebook.removesuffix(".ipynb"), CASES[notebook]
    assert (NOTEBOOKS / notebook).is_file(), \
        f"{notebook} not found in notebooks/ (make install writes it from its .md)"
    markdown = NOTEBOOKS / f"{stem}.md"
    written = markdown.stat().st_mtime_ns
    browser.get(lab.url(notebook))
    try:
        expected = code_cells(notebook)
        state = wait_until(browser, f"{notebook}: the notebook open with its {expected} code "
                           "cells and its kernel idle", ready(expected), 120)
        codes = [c for c in state["cells"] if c["code"]]
        how = run_all_cells(browser)
        started = time.monotonic()
        print(f"\n{stem}: {len(codes)} code cells, {how}", flush=True)

        state, outcome = wait_for_run(browser, timeout)
        seconds = time.monotonic() - started
        if outcome != "done":
            codes = [c for c in state["cells"] if c["code"]]
            ran = [c for c in codes if executed(c)]
            reached = next((c for c in codes if "*" in c["prompt"]), ran[-1] if ran else codes[0])
            browser.save_screenshot(str(SHOTS / f"{stem}-{outcome}.png"))
            errors = browser.execute_script(OUTPUTS_JS)["errors"]
            why = (f"did not finish within {timeout} s" if outcome == "timeout" else
                   f"stopped after {seconds:.0f} s (kernel idle, cells left unrun)")
            pytest.fail(f"{notebook}: Run All Cells {why}: {len(ran)} of {len(codes)} code "
                        f"cells have an execution count, kernel {state['status']}; last cell "
                        f"reached: {describe(reached)} (screenshot {stem}-{outcome}.png)"
                        + "".join(f"\n  cell {e['cell']}: {e['text']}" for e in errors))
        print(f"{stem}: Run All Cells finished in {seconds:.1f} s", flush=True)

        time.sleep(1.0)  # let the last outputs (images) render
        out = browser.execute_script(OUTPUTS_JS)
        shots = screenshots(browser, stem)
        print(f"{stem}: {len(out['images'])} inline images; screenshots "
              f"{', '.join(p.name for p in shots)}", flush=True)
        assert not out["errors"], f"{notebook}: error or stderr output:\n" + "\n".join(
            f"  cell {e['cell']}: {e['text']}" for e in out["errors"])
        assert out["images"], f"{notebook}: no image shown in any output"
        unloaded = [i for i, img in enumerate(out["images"]) if not img["loaded"]]
        assert not unloaded, f"{notebook}: images {unloaded} did not load"
        saved = wait_until(browser, f"{notebook}: the autosave of the run", autosaved(stem), 60)
        print(f"{stem}: autosaved, {saved} outputs in {notebook}", flush=True)
        # the save wrote the pair (jupytext's contents manager): an edit would reach the
        # Markdown, so it shows in git status; the run's outputs do not
        assert markdown.stat().st_mtime_ns > written, f"{markdown.name} was not saved"
    finally:
        lab.shutdown_kernels()
    figures, notebooks, status = committed
    assert not changes(figures, tree_hash(FIGURES)), \
        f"{notebook} changed the committed figures/: {changes(figures, tree_hash(FIGURES))}"
    now = tree_hash(NOTEBOOKS)
    assert all(now.get(n) == h for n, h in notebooks.items()), \
        f"{notebook}: the Markdown of a notebook in notebooks/ changed"
    assert git_status() == status, f"{notebook}: after Run All and autosave, git status " \
        f"shows:\n{git_status()}"
