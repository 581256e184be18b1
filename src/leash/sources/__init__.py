"""What the artifacts read: the paper's printed numbers (and their audit), study files over
generations, and the SIMULATED demo (its model and its files).
"""
