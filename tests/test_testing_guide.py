"""docs/testing.md's examples run as they are written: each ``python`` block is a pytest module
of its own, run (with the plugin, from a directory that has the repository's fixtures) as a
producer's suite would run it."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

GUIDE = ROOT / "docs" / "testing.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(), flags=re.M | re.S)


def test_the_guide_has_its_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.ptxas
@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_guide_example(number: int, pytester: pytest.Pytester) -> None:
    (pytester.path / "fixtures").symlink_to(ROOT / "fixtures")
    pytester.makepyfile(**{f"test_guide_{number}": BLOCKS[number]})
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    assert not outcomes.get("failed") and not outcomes.get("errors"), result.stdout.str()
    if outcomes.get("skipped"):
        assert re.search(r"SKIPPED .*(not installed|cannot compile here)", result.stdout.str())
