"""What several test files need: the repository, the real-data mirror, optional packages.

The mirror is $LEASH_DATA_MIRROR, else the shared data folder beside the repository (where CI
has it); tests that need it are skipped, with the reason, when it is absent.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_env = os.environ.get("LEASH_DATA_MIRROR")
MIRROR = Path(_env) if _env else REPO.parent / "shared" / "data"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(),
                                  reason="data mirror not found (set LEASH_DATA_MIRROR)")

try:
    import math_verify  # noqa: F401

    HAVE_MV = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MV = False
needs_mv = pytest.mark.skipif(not HAVE_MV, reason="math-verify not installed")
