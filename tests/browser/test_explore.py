"""The explorer as `make explore` serves it: Voila on 127.0.0.1, opened in headless Chromium.

Not part of `make test` (see tests/conftest.py); `make test-browser` runs it. The notebook is
prepared with the demo study as `make explore` does (papermill --prepare-only), served by Voila
on a free port of 127.0.0.1, and opened; the test waits for the figure, moves the budget slider
with the keyboard (as a user does), and checks that the slider's readout and the figure change,
that the page asked for nothing beyond 127.0.0.1 and that Voila logged no traceback.
Screenshots: build/browser/explore-start.png and explore-k-moved.png.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _chrome import chrome, free_port, wait_for_url
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "build" / "browser"
WINDOW = (1250, 1500)



@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    pytest.importorskip("voila", reason="the explore extra is not installed")
    work = tmp_path_factory.mktemp("explore")
    nb = work / "12_explore.ipynb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEASH_")}
    env["JUPYTER_PATH"] = str(REPO / "src" / "leash_eval" / "run")  # the template, as make explore
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    subprocess.run([sys.executable, "-m", "papermill", "--prepare-only", "-k", "python3",
                    str(REPO / "notebooks" / "12_explore.ipynb"), str(nb), "-p", "study",
                    "demo"], check=True, env=env, capture_output=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = SHOTS / "explore-voila.log"
    log = open(log_path, "w")
    server = subprocess.Popen([sys.executable, "-m", "voila", str(nb), "--no-browser",
                               "--Voila.ip=127.0.0.1", f"--port={port}", "--template=leash"],
                              env=env, stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=work)
    base = f"http://127.0.0.1:{port}/"
    try:
        wait_for_url(base + "voila/static/voila.js", timeout=60)
        yield base, log_path
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


@pytest.fixture
def browser(tmp_path):
    driver = chrome(tmp_path / "chrome-profile", WINDOW, offline=True, logs=("performance",))
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(predicate, timeout=180.0, what="the page"):
    end = time.time() + timeout
    while time.time() < end:
        out = predicate()
        if out:
            return out
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def figure_bytes(driver) -> str:
    """The figure as the page shows it (the image widget's data, read in the page)."""
    return driver.execute_script("""
        const img = document.querySelector('.widget-image');
        if (!img || !img.complete || !img.naturalWidth) return '';
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        c.getContext('2d').drawImage(img, 0, 0);
        return c.toDataURL();""")


def test_moving_the_budget_slider_changes_the_figure(voila, browser):
    base, log_path = voila
    browser.get(base)
    before = wait_for(lambda: figure_bytes(browser), what="the explorer's figure")
    readout = browser.find_elements(By.CSS_SELECTOR, ".widget-readout")[0]
    assert readout.text == "8192"  # the paper's setting: the full budget
    browser.save_screenshot(str(SHOTS / "explore-start.png"))
    handle = browser.find_elements(By.CSS_SELECTOR, ".widget-slider .noUi-handle")[0]
    handle.click()
    for _ in range(5):
        handle.send_keys(Keys.ARROW_LEFT)
    wait_for(lambda: readout.text == "256", 30, "the slider's readout")
    after = wait_for(lambda: (f := figure_bytes(browser)) != before and f, 60,
                     "the figure to change")
    assert after != before
    wait_for(lambda: "k moved from" in browser.find_element(By.TAG_NAME, "body").text, 30,
             "the table of questions that changed category")
    browser.save_screenshot(str(SHOTS / "explore-k-moved.png"))
    urls = []
    for e in browser.get_log("performance"):
        msg = json.loads(e["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    outside = [u for u in urls if u.startswith(("http", "ws"))
               and not u.startswith(("http://127.0.0.1:", "ws://127.0.0.1:"))]
    assert not outside, f"the explorer asked for pages beyond 127.0.0.1: {outside[:5]}"
    assert "Traceback" not in log_path.read_text()
