"""What a notebook calls besides the analysis: its first cell's checks and skips (``notebook``),
the parameters read from a notebook (``parameters``) and the live explorer (``explore``).
"""
