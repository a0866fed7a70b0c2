"""Markdown tables for book pages (displayed with ``IPython.display.Markdown``)."""


def markdown_table(rows: list[dict], columns: list[str] | None = None, fmt=None) -> str:
    """A Markdown table of ``rows`` (dicts); ``fmt(column, value) -> str`` formats cells.

    Floats default to 4 significant digits; ``columns`` defaults to the first row's keys.
    """
    if not rows:
        raise ValueError("rows must not be empty")
    cols = columns or list(rows[0])
    fmt = fmt or (lambda c, v: f"{v:.4g}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(c, r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)
