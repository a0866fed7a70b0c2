"""Plots and widgets for the book.

``widgets`` holds ``live_figure``, a figure whose controls re-run the experiment in a
live kernel and step through precomputed frames in the static HTML book (``controls``
describes them); topic modules (one per chapter) hold the plots.
"""
