"""Settings for the whole suite."""

import signal
from pathlib import Path

import pytest
from hypothesis import settings

# No deadlines: the machine is shared and `make test` runs a notebook worker beside the other
# tests, so a slow example says nothing about the code; every property is still checked.
settings.register_profile("leash", deadline=None)
settings.load_profile("leash")

# A suite started in the background of a non-interactive shell (`make test &` in a script)
# inherits SIGINT ignored, and so would every process it starts: Python then installs no
# KeyboardInterrupt, and the Ctrl-C tests of the runner would send a signal nobody hears. A
# terminal gives its foreground job the default; so do the tests (this process and the xdist
# workers, whose children then start with it).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# tests/browser/ drives JupyterLab in a real browser (minutes, needs Chromium): collected only
# when named on the command line (`pytest tests/browser`, as `make test-browser` does), so
# `make test` and a plain `pytest` never run it.
_BROWSER = Path(__file__).resolve().parent / "browser"


def pytest_ignore_collect(collection_path, config):
    return True if collection_path.resolve() == _BROWSER else None


@pytest.fixture
def cached(monkeypatch, tmp_path):
    """Study summary caches under tmp_path, not the repository's build/."""
    import leash.paths
    import leash.sources.study as study_mod
    import leash_eval.study_init as init_mod

    def folder(name):
        return tmp_path / "build" / leash.paths.slug(name)

    monkeypatch.setattr(study_mod, "study_folder", folder)
    monkeypatch.setattr(init_mod, "study_folder", folder)
    return tmp_path / "build"
