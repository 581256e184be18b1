"""Reading generations: every input format on one engine (DuckDB), validation, per-question
summaries, answer extraction and rescoring, and the data manifest with its fetching.
"""
