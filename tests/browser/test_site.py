"""The site of `make site` in a real (headless) Chromium: every page loads offline and clean.

Part of `make test-browser` (not of `make test`; see tests/browser/test_jupyterlab.py for what
it needs). The fixture builds ``build/site/`` with this interpreter (``python -m
leash_eval.run.site``, which runs ``make reproduce`` first when the executed notebooks are absent),
serves it with ``python -m http.server`` bound to 127.0.0.1, and Chromium resolves no other
host (``--host-resolver-rules``). Every HTML page of the site is opened: no console error,
every image loaded (``naturalWidth > 0``), every request the performance log shows went to
that server (or is a ``data:`` URL or the browser's own ``chrome://``), MathJax (where a page
loads it) finished typesetting. Screenshots go to ``build/browser/site-*.png``: the whole
index (and its audit and "not regenerated" sections), the top of each notebook page,
the data formats page and the API reference's front page.
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

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "build" / "site"
SHOTS = REPO / "build" / "browser"
WINDOW = (1400, 1000)
TALLEST = 16000  # the full-page screenshot of the index is at most this tall
# where a page's state is read: images, and MathJax 2 (when the page loads it) idle
STATE_JS = """
const imgs = [...document.images].map(i => ({src: i.currentSrc.slice(0, 120),
                                              loaded: i.complete && i.naturalWidth > 0}));
const mj = window.MathJax && window.MathJax.Hub;
const typeset = !mj || (window.MathJax.isReady && mj.queue.pending === 0 && !mj.queue.running);
return {ready: document.readyState === 'complete' && imgs.every(i => i.loaded) && typeset,
        images: imgs, mathjax: !!mj, typeset: typeset, height: document.body.scrollHeight};
"""



@pytest.fixture(scope="module")
def site():
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEASH_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    subprocess.run([sys.executable, "-m", "leash_eval.run.site"], cwd=REPO, env=env, check=True)
    assert (SITE / "index.html").is_file()
    SHOTS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = open(SHOTS / "site-http.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1", "--directory", str(SITE)], stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        wait_for_url(base + "index.html", timeout=10)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chrome(tmp_path_factory.mktemp("chrome-profile"), WINDOW, offline=True,
                    logs=("browser", "performance"))
    try:
        yield driver
    finally:
        driver.quit()


def requests(entries) -> list[str]:
    """The URLs the page asked for (performance log: Network.requestWillBeSent)."""
    urls = []
    for e in entries:
        msg = json.loads(e["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def visit(driver, url: str, timeout: float = 30.0) -> dict:
    driver.get_log("performance")  # drop what earlier pages left
    driver.get_log("browser")
    driver.get(url)
    end, state = time.monotonic() + timeout, None
    while time.monotonic() < end:
        state = driver.execute_script(STATE_JS)
        if state["ready"]:
            break
        time.sleep(0.2)
    time.sleep(0.3)  # late requests (MathJax fonts) reach the log
    state = driver.execute_script(STATE_JS)
    state["console"] = [f"{e['level']}: {e['message']}" for e in driver.get_log("browser")
                        if e["level"] in ("SEVERE", "WARNING")]
    state["requests"] = requests(driver.get_log("performance"))
    return state


def page_paths() -> list[str]:
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html"))


def shot(driver, name: str, full: bool = False) -> Path:
    path = SHOTS / f"site-{name}.png"
    if full:
        height = driver.execute_script("return document.body.scrollHeight;")
        driver.set_window_size(WINDOW[0], int(min(max(height + 40, WINDOW[1]), TALLEST)))
        time.sleep(0.5)
    driver.save_screenshot(str(path))
    if full:
        driver.set_window_size(*WINDOW)
    return path


def test_every_page_of_the_site_loads_offline_without_errors(site, browser):
    for old in SHOTS.glob("site-*.png"):
        old.unlink()
    pages = page_paths()
    assert "index.html" in pages and any(p.startswith("runs/") for p in pages), pages
    problems, images, mathjax = [], 0, 0
    for page in ["index.html"] + [p for p in pages if p != "index.html"]:
        state = visit(browser, site + page)
        images += len(state["images"])
        mathjax += state["mathjax"]
        if not state["ready"]:
            problems.append(f"{page}: not ready (images or MathJax) within the timeout")
        problems += [f"{page}: image not loaded: {i['src']}" for i in state["images"]
                     if not i["loaded"]]
        problems += [f"{page}: console {c}" for c in state["console"]]
        # chrome:// is the browser's own (its new tab page, before the first get)
        problems += [f"{page}: request outside the site: {u}" for u in state["requests"]
                     if not u.startswith((site, "data:", "chrome:", "about:"))]
        if page == "index.html":
            shot(browser, "index", full=True)
            shot(browser, "index-top")
            for section in ("audit", "not-regenerated"):  # below the tallest full screenshot
                if browser.execute_script(f"const e = document.getElementById('{section}');"
                                          "if (e) e.scrollIntoView(); return !!e;"):
                    time.sleep(0.3)
                    shot(browser, f"index-{section}")
        elif page.startswith("runs/"):
            shot(browser, "run-" + Path(page).stem)
        elif page in ("data-formats.html", "api/leash.html"):
            shot(browser, Path(page).stem)
    print(f"\nsite: {len(pages)} pages, {images} images loaded, MathJax on {mathjax} pages; "
          f"screenshots in {SHOTS}", flush=True)
    assert not problems, "\n".join(problems)
