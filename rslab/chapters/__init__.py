"""The chapters' computations: one module per chapter, a function per figure or table.

Each function returns data (``rslab.viz`` draws it) or, for a live figure, the
``draw`` a page passes to ``rslab.viz.widgets.live_figure``. Pages keep the story, short
visible calls and the numbers their ``{eval}`` roles cite.
"""
