"""A process that reads module after module keeps only what it holds: the garbage of each
reading (DIE trees are reference cycles) is collected without the caller's help."""

from __future__ import annotations

import gc

from conftest import ROOT

import ptxdwarf
import ptxdwarf.dump

CALL = (ROOT / "fixtures" / "nvcc" / "call_example.sm_75.ptx").read_text()


def test_repeated_reading_does_not_accumulate_garbage() -> None:
    gc.collect()

    def read() -> None:
        info = ptxdwarf.read(text=CALL).load_all()
        ptxdwarf.dump.dump_text(info)
        ptxdwarf.lint.lint(CALL)

    for _ in range(20):
        read()
    settled = len(gc.get_objects())
    for _ in range(200):
        read()
    grown = len(gc.get_objects()) - settled
    # one reading makes about 500 tracked objects that become garbage; before the fix, 200
    # readings left some 100,000 of them waiting for a full collection
    assert grown < 20_000, f"{grown} more tracked objects after 200 more readings"
