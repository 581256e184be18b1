"""Run every benchmark (benchmarks/bench_*.py), each in its own process so peak memory is its own,
then print the ratios they measured (their lines starting with RATIO) together.

Usage: python benchmarks/run.py [--quick]
Numbers are ratios against baselines measured in the same run, each computing the same outputs
(checked before the clock starts); this machine is shared and noisy, so absolute times vary
between runs while CPU ratios are more stable.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    here = Path(__file__).resolve().parent
    failed, ratios = [], []
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.stem}", flush=True)
        t = time.perf_counter()
        with subprocess.Popen([sys.executable, str(script), *argv], stdout=subprocess.PIPE,
                              text=True, bufsize=1) as proc:
            for line in proc.stdout:
                print(line, end="", flush=True)
                if line.startswith("RATIO "):
                    ratios.append(f"{script.stem}: {line[6:].rstrip()}")
        rc = proc.returncode
        print(f"   ({time.perf_counter() - t:.1f} s wall, exit {rc})\n", flush=True)
        if rc:
            failed.append(script.stem)
    print("== the ratios of this run (leash / the baseline computing the same outputs, medians; "
          "<= 1: leash at least as fast)")
    for line in ratios:
        print(f"  {line}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
