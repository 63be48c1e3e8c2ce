"""Every ```python block of docs/python.md (and the README's Python quick start) runs, in order, in one namespace
from the repository root, and prints what the page shows in the plain ``` block after it ("..." in a shown line
stands for any text)."""
import contextlib
import io
import re

import pytest

from conftest import path


def blocks(page):
    """[(code, shown output or None)] of the page's python blocks."""
    text = open(page).read()
    fences = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)
    out = []
    for i, (lang, body) in enumerate(fences):
        if lang == "python":
            shown = fences[i + 1][1] if i + 1 < len(fences) and fences[i + 1][0] == "" else None
            out.append((body, shown))
    return out


def matches(shown, got):
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return re.fullmatch(pattern, got) is not None


@pytest.mark.parametrize("page", ["docs/python.md", "README.md"])
def test_page_examples(page, monkeypatch):
    monkeypatch.chdir(path())
    ns = {}
    found = blocks(path(page))
    assert found, f"{page} has no python block"
    for code, shown in found:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, page, "exec"), ns)
        if shown is not None:
            got = buf.getvalue().strip().splitlines()
            want = shown.strip().splitlines()
            assert len(got) == len(want), f"{page}: block\n{code}printed\n{buf.getvalue()}"
            for w, g in zip(want, got):
                assert matches(w.strip(), g.strip()), f"{page}: shown '{w}', printed '{g}'"
