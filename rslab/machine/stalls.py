"""Why the core waits: the named constraints of the issue model, each with a one-line meaning.

A bundle issues at the earliest cycle at which every constraint holds; the
constraint that binds is charged with the stall cycles (the first listed on a
tie). The order of ``CAUSES`` is that tie order. This is the vocabulary of
every stall figure in the book, in the style of llvm-mca's and uiCA's
explanations of a schedule.
"""

MEANINGS = {
    "raw": "a source register is not ready: its producer's latency has not elapsed",
    "branch": "a taken branch costs branch_penalty cycles before the next bundle",
    "bank-conflict": "the load or store port is still held by an access with a bank conflict",
    "sfu-hold": "a push waits sfu_hold cycles after the previous push (other ops issue meanwhile)",
    "fifo-full": "a push needs a free SFU FIFO entry; a pop has not yet freed one",
    "sfu-wait": "a pop waits for the SFU result at the head of the FIFO",
    "dma-wait": "dmawait waits until the DMA transfers of its tag have landed",
}
"""Stall cause → what it means."""

CAUSES = tuple(MEANINGS)
"""The stall causes in tie order."""

RAW, BRANCH, BANK, HOLD, FULL, WAIT, DMA = range(len(CAUSES))
"""Indices of the causes (the simulator's hot loop charges by index)."""


def meaning(cause: str) -> str:
    """The one-line meaning of a stall cause."""
    if cause not in MEANINGS:
        raise ValueError(f"cause must be one of {list(CAUSES)}, got {cause!r}")
    return MEANINGS[cause]
