"""A plain JupyterLab opens a notebook's Markdown as a notebook, with a double-click.

The notebooks are committed as jupytext Markdown. JupyterLab opens a ``.md`` in its text
editor unless its default viewer for Markdown is jupytext's "Jupytext Notebook"; the
repository's environment sets that (and a contents manager that lists each notebook once) in
its own Jupyter folder, ``<sys.prefix>/etc/jupyter/`` (``python -m leash_eval.run.lab``, run by
``make``'s set-up; see that module for why there). This test starts JupyterLab three ways a
user does, each with Jupyter's and JupyterLab's user folders (``JUPYTER_CONFIG_DIR``, the user
settings...) empty and temporary, so nothing can come from a home folder:

* ``jupyter lab`` started in the repository's root,
* ``jupyter lab`` started in ``notebooks/``,
* ``make lab`` (with ``LAB_ARGS`` for the port and token),

and in headless Chromium double-clicks ``notebooks/00a_walkthrough_support.md`` in the file
browser: a notebook opens (its cells, its kernel idle), not a text editor; the file browser
lists that notebook once although its paired ``.ipynb`` is on disk. Screenshots:
``build/browser/lab-double-click-<case>.png``. Nothing is run or saved.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from _chrome import chrome, free_port
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SHOTS = REPO / "build" / "browser"
STEM = "00a_walkthrough_support"
WINDOW = (1400, 900)


def _command(case: str, port: int, token: str) -> tuple[list[str], Path]:
    args = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
            f"--IdentityProvider.token={token}"]
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if case == "make-lab":
        return ["make", "--no-print-directory", "lab", f"LAB_ARGS={' '.join(args)}"], REPO
    cmd = [sys.executable, "-m", "jupyterlab", *args, *(["--allow-root"] if root else [])]
    return cmd, REPO if case == "root" else NOTEBOOKS


class Server:
    """JupyterLab started as ``case`` says, in its own process group (stopped with it)."""

    def __init__(self, case: str, home: Path, log: Path):
        self.port, self.token, self.log = free_port(), secrets.token_hex(24), log
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LEASH_", "JUPYTER")) and k != "MPLBACKEND"}
        for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                    "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
            env[var] = str(home / var.lower())
        cmd, cwd = _command(case, self.port, self.token)
        log.parent.mkdir(parents=True, exist_ok=True)
        self._logfile = open(log, "w")
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=self._logfile,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        req = urllib.request.Request(f"{self.base}/api/status",
                                     headers={"Authorization": f"token {self.token}"})
        try:
            urllib.request.urlopen(req, timeout=5).close()
            return True
        except (OSError, urllib.error.URLError):
            return False

    def wait_ready(self, timeout: float = 240) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"JupyterLab exited ({self.proc.returncode}); log {self.log}:\n"
                            + self.log.read_text(errors="replace")[-3000:])
            if self.answers():
                return
            time.sleep(0.5)
        pytest.fail(f"JupyterLab did not answer within {timeout:.0f} s; log {self.log}")

    def stop(self) -> None:
        try:
            if self.proc.poll() is None:
                req = urllib.request.Request(f"{self.base}/api/shutdown", method="POST",
                                             headers={"Authorization": f"token {self.token}"})
                try:
                    urllib.request.urlopen(req, timeout=10).close()
                except (OSError, urllib.error.URLError):
                    pass
                for sig in (None, signal.SIGTERM, signal.SIGKILL):
                    if sig is not None:  # the process group this test started, and only it
                        os.killpg(self.proc.pid, sig)
                    try:
                        self.proc.wait(timeout=30)
                        break
                    except subprocess.TimeoutExpired:
                        continue
        finally:
            self._logfile.close()


def _items(driver) -> list[str]:
    return [e.text.strip() for e in driver.find_elements(
        By.CSS_SELECTOR, ".jp-DirListing-content .jp-DirListing-itemText")]


def _double_click(driver, name: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for e in driver.find_elements(By.CSS_SELECTOR,
                                      ".jp-DirListing-content .jp-DirListing-item"):
            try:
                text = e.find_element(By.CSS_SELECTOR, ".jp-DirListing-itemText").text.strip()
                if text == name:
                    ActionChains(driver).double_click(e).perform()
                    return
            except WebDriverException:
                break  # the listing changed under us: look again
        time.sleep(0.5)
    pytest.fail(f"{name!r} not in the file browser within {timeout:.0f} s: {_items(driver)}")


OPENED_JS = """
const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
const editor = document.querySelector('.jp-FileEditor:not(.lm-mod-hidden)');
const tab = document.querySelector(
  '.lm-DockPanel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel');
if (!panel) return {notebook: false, editor: !!editor, tab: tab ? tab.textContent : null};
const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
const kernel = panel.querySelector('.jp-KernelName, .jp-Toolbar-kernelName');
return {notebook: true, editor: !!editor, tab: tab ? tab.textContent : null,
        cells: panel.querySelectorAll('.jp-Notebook .jp-Cell').length,
        code: panel.querySelectorAll('.jp-Notebook .jp-CodeCell').length,
        status: indicator ? indicator.dataset.status : null,
        kernel: kernel ? kernel.textContent.trim() : null};
"""


@pytest.mark.parametrize("case", ["root", "notebooks", "make-lab"])
def test_a_double_click_on_the_markdown_opens_a_notebook(case, tmp_path):
    assert (NOTEBOOKS / f"{STEM}.ipynb").is_file(), \
        f"notebooks/{STEM}.ipynb absent: make test-browser writes the pairs (make install)"
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = Server(case, tmp_path / "home", SHOTS / f"lab-double-click-{case}.log")
    driver = None
    try:
        server.wait_ready()
        driver = chrome(tmp_path / "chrome-profile", WINDOW)
        driver.get(f"{server.base}/lab?reset&token={server.token}")
        if case == "root":
            _double_click(driver, "notebooks")
        _double_click(driver, f"{STEM}.md")
        end, state = time.monotonic() + 180, None
        while time.monotonic() < end:
            state = driver.execute_script(OPENED_JS)
            # done: a text editor, or the notebook loaded (its cells) with its kernel started
            if state and (state["editor"] or (
                    state["notebook"] and state["cells"] > 1 and state["status"] == "idle"
                    and state["kernel"] not in (None, "", "No Kernel"))):
                break
            time.sleep(0.5)
        driver.save_screenshot(str(SHOTS / f"lab-double-click-{case}.png"))
        print(f"\n{case}: {state}", flush=True)
        assert state and not state["editor"], f"{case}: opened in the text editor: {state}"
        assert state["notebook"], f"{case}: no notebook opened: {state}"
        assert state["tab"] == f"{STEM}.md", state
        assert state["cells"] > 10 and state["code"] > 3, state
        assert state["status"] == "idle" and state["kernel"] not in (None, "No Kernel"), \
            f"{case}: the kernel did not start: {state}"
        listed = _items(driver)
        assert f"{STEM}.md" in listed and f"{STEM}.ipynb" not in listed, listed
        assert not [n for n in listed if n.endswith(".ipynb")], listed  # every one has its .md
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
