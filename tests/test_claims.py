"""rslab.chapters.claims: a false claim fails the page; every checked claim is counted."""

import numpy as np
import pytest
from nbclient.exceptions import CellExecutionError
from pagerun import ROOT, execute_page

from rslab.chapters.claims import ClaimError, checked, claim


def test_a_true_claim_is_recorded_and_a_false_one_names_its_sentence():
    before = len(checked())
    claim(3 > 2, "three is more than two")
    assert checked()[before:] == ["three is more than two"]
    with pytest.raises(ClaimError, match="two is more than three") as err:
        claim(2 > 3, "two is more than three")
    assert isinstance(err.value, AssertionError)
    assert len(checked()) == before + 1


@pytest.mark.parametrize("sentence", ["", "  ", None, 3])
def test_the_sentence_must_be_text(sentence):
    with pytest.raises(ValueError, match="sentence"):
        claim(True, sentence)


def test_an_array_is_not_a_condition():
    with pytest.raises(ValueError, match="one truth value"):
        claim(np.array([True, False]), "all of them")


def page(tmp_path, body: str):
    header = (ROOT / "book" / "intro.md").read_text().split("---\n")[1]
    path = tmp_path / "page.md"
    path.write_text(f"---\n{header}---\n\n# Page\n\n```{{code-cell}} ipython3\n{body}\n```\n")
    return path


CLAIMS = ("from rslab.chapters.claims import claim\n"
          "x = 2 + 2\nclaim(x == 4, 'two and two make four')\nclaim(x > 3, 'more than three')")


def test_the_claims_of_a_page_are_counted(tmp_path):
    nb = execute_page(page(tmp_path, CLAIMS), timeout=120)
    assert nb.metadata["rslab_claims"] == ["two and two make four", "more than three"]


def test_a_falsified_claim_fails_the_pages_execution(tmp_path):
    with pytest.raises(CellExecutionError, match="two and two make five"):
        execute_page(page(tmp_path, CLAIMS.replace("x == 4, 'two and two make four'",
                                                   "x == 5, 'two and two make five'")),
                     timeout=120)
