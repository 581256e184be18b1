"""Run every benchmark (benchmarks/bench_*.py), each in its own process so peak memory is its own.

Usage: python benchmarks/run.py [--quick]
Numbers are ratios against baselines measured in the same run; this machine is shared and noisy,
so absolute times vary between runs while ratios are more stable.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    here = Path(__file__).resolve().parent
    failed = []
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.stem}", flush=True)
        t = time.perf_counter()
        rc = subprocess.call([sys.executable, str(script), *argv])
        print(f"   ({time.perf_counter() - t:.1f} s wall, exit {rc})\n", flush=True)
        if rc:
            failed.append(script.stem)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
