"""Headless Chromium for the browser tests: the system chromedriver and one set of flags.

Selenium is given the system ``chromedriver`` explicitly, so it never looks for or downloads
one. The flags are the ones this kind of machine needs (no sandbox as root, no background
networking: outside hosts are unreachable); ``offline=True`` also makes every host but
127.0.0.1 unresolvable, so a page that asks for anything else shows it in the request log.
"""

from __future__ import annotations

import shutil
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_url(url: str, timeout: float = 30.0) -> None:
    """Return once ``url`` answers (a server the test started is up), or after ``timeout``
    seconds (the test's own checks then say what is missing).
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)


def chrome(profile: Path, window: tuple[int, int], *, offline: bool = False, logs=()):
    """A headless Chromium driver with its own profile folder; ``logs`` names the log types
    (``"browser"``, ``"performance"``) to keep.
    """
    driver_path = shutil.which("chromedriver")
    if not driver_path:
        pytest.fail("chromedriver not found on PATH: install Chromium and its driver (Debian: "
                    "apt-get install chromium chromium-driver) or Chrome and chromedriver")
    options = webdriver.ChromeOptions()
    for flag in [*FLAGS, *([OFFLINE] if offline else [])]:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={window[0]},{window[1]}")
    if logs:
        options.set_capability("goog:loggingPrefs", dict.fromkeys(logs, "ALL"))
    binary = next((shutil.which(n) for n in BINARIES if shutil.which(n)), None)
    if binary:
        options.binary_location = binary
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_window_size(*window)
    return driver
