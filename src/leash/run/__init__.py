"""The notebook runner: parameters read from the notebooks, papermill runs, the records."""
