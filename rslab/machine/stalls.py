"""Why the core waits: the named constraints of the issue model, each with a one-line meaning.

A bundle issues at the earliest cycle at which every constraint holds; the
constraint that binds is charged with the stall cycles (the first listed on a
tie). The order of ``CAUSES`` is that tie order. This is the vocabulary of
every stall figure in the book, in the style of llvm-mca's and uiCA's
explanations of a schedule. A core of the chip (:mod:`rslab.machine.chip`) has two
more causes, after the core's in the tie order: ``CHIP_CAUSES``.
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

CHIP_MEANINGS = {
    "hbm": "dmawait waits for transfers the shared HBM served later than the core's own "
           "engine alone would have: other cores' transfers went first",
    "barrier": "bar waits until every core it names has arrived and the release has crossed "
               "the chip",
}
"""The causes only a core of the chip has (the shared HBM, the barrier) → what they mean."""

CAUSES = tuple(MEANINGS)
"""The stall causes in tie order."""
CHIP_CAUSES = CAUSES + tuple(CHIP_MEANINGS)
"""The stall causes of a core of the chip, in tie order."""

RAW, BRANCH, BANK, HOLD, FULL, WAIT, DMA, HBM, BARRIER = range(len(CHIP_CAUSES))
"""Indices of the causes (the simulator's hot loop charges by index)."""


def meaning(cause: str) -> str:
    """The one-line meaning of a stall cause."""
    if cause in MEANINGS:
        return MEANINGS[cause]
    if cause not in CHIP_MEANINGS:
        raise ValueError(f"cause must be one of {list(CHIP_CAUSES)}, got {cause!r}")
    return CHIP_MEANINGS[cause]
