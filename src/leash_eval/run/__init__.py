"""Running the notebooks and publishing their results: the runner (``reproduce``: papermill
over the notebooks, on pebble's process pool), the artifact index (``index``) and its gallery
(``gallery``), the offline site (``site``, with its templates and the explorer's Voila
template) and the check of a study against its data before any notebook (``study_check``).
"""
