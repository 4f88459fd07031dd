"""docs/python.md stays true: its Python blocks run in order from the repository root and each
prints exactly the text block that follows it."""

import contextlib
import io
import os
import re

import pytest

from conftest import ROOT


def blocks():
    text = (ROOT / "docs" / "python.md").read_text()
    return re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)


def test_the_worked_example_prints_what_the_document_shows():
    pytest.importorskip("pandas")
    found = blocks()
    pairs = [(code, shown) for (kind, code), (next_kind, shown) in zip(found, found[1:])
             if kind == "python" and next_kind == "text"]
    assert len(pairs) >= 4
    namespace = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for code, shown in pairs:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "docs/python.md", "exec"), namespace)
            got = [line.rstrip() for line in out.getvalue().strip().splitlines()]
            want = [line.rstrip() for line in shown.strip().splitlines()]
            assert got == want, f"\n{code}\nprinted:\n" + "\n".join(got)
    finally:
        os.chdir(cwd)
