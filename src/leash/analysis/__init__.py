"""Frames of per-question counts: pairing two models, the support, pass@k and entropy tables,
the robustness analyses, and the one rule for "the same numbers".
"""
