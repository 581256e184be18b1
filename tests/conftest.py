"""Settings for the whole suite."""

from pathlib import Path

from hypothesis import settings

# No deadlines: the machine is shared and `make test` runs a notebook worker beside the other
# tests, so a slow example says nothing about the code; every property is still checked.
settings.register_profile("leash", deadline=None)
settings.load_profile("leash")


# tests/browser/ drives JupyterLab in a real browser (minutes, needs Chromium): collected only
# when named on the command line (`pytest tests/browser`, as `make test-browser` does), so
# `make test` and a plain `pytest` never run it.
_BROWSER = Path(__file__).resolve().parent / "browser"


def pytest_ignore_collect(collection_path, config):
    return True if collection_path.resolve() == _BROWSER else None
