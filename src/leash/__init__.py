"""leash: empirical support dynamics of base vs RLVR models (arXiv 2507.14843).

The metric core (``leash.passk``, ``leash.support``, ``leash.entropy``, ``leash.stats``) is
numpy/scipy only; everything else (readers, tables, plots, notebooks) builds on it.
"""

__version__ = "0.1.0"
