"""Plots and widgets for the book.

``widgets`` holds ``slider_figure``, a slider over precomputed figures that also
works in the static HTML book; topic modules (one per chapter) hold the plots.
"""
