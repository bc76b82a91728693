"""A query's words may start with "-" (issue 12: `-word` excludes it), first or anywhere:
the commands that take free text read such a word as text, not as Click's short options
("-linux" was "No such option '-l'", "-tensorflow" a tag filter `-t ensorflow` that found
nothing). Options spelled as `--help` lists them still work; an unknown `--word` is still
an error naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lore.cli.query_args import split_words
from lore.cli.search import search_cmd

MakeVault = Callable[..., Path]

NOTES = {
    "linux/kernel.md": "# 内核模块\n\nlinux 内核模块的加载与卸载：insmod, rmmod。\n",
    "bsd/kernel.md": "# BSD 内核模块\n\nFreeBSD 的内核模块用 kldload 加载。\n",
    "ml/tf.md": "# 内核函数\n\ntensorflow 里的内核函数 (kernel) 与 GPU。\n",
}


def lore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lore", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def paths(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["hits"]]


def test_a_word_starting_with_a_dash_is_an_excluded_query_word(make_vault: MakeVault) -> None:
    root = make_vault(NOTES, index=True)
    # First, inside one quoted argument: not the short options -l -i -n ...
    assert set(paths(lore("search", "-linux 内核 模块", "--json", cwd=root))) == {
        "bsd/kernel.md",
        "ml/tf.md",
    }
    # "-tensorflow" is an excluded word, not `-t ensorflow` (a tag filter finding nothing).
    found = paths(lore("search", "内核", "-tensorflow", "-n", "5", "--json", cwd=root))
    assert set(found) == {"linux/kernel.md", "bsd/kernel.md"}
    # Options before, between and after the words still are options.
    assert len(paths(lore("search", "-n", "1", "--json", "内核", "-linux", cwd=root))) == 1
    typo = lore("search", "内核", "--limt", "2", cwd=root)
    assert typo.returncode == 2 and "No such option '--limt'" in typo.stderr
    lookup = lore("lookup", "-linux", "内核", "--json", cwd=root)
    assert lookup.returncode == 0, lookup.stderr
    looked = {h["path"] for h in json.loads(lookup.stdout)["hits"]}
    assert looked and "linux/kernel.md" not in looked


_word = st.text(alphabet=st.sampled_from("ab-中文x1 "), min_size=1, max_size=6).filter(
    lambda w: not w.startswith("--")
)
_option = st.sampled_from(
    [["-n", "3"], ["--limit", "7"], ["--limit=4"], ["--json"], ["--explain"], ["-t", "-x"],
     ["--path", "--notes/"], ["--no-sync"], ["-h"]]
)  # fmt: skip


@given(st.lists(st.one_of(_word.map(lambda w: ("word", [w])), _option.map(lambda o: ("opt", o)))))
def test_words_keep_their_order_and_options_their_values(
    parts: list[tuple[str, list[str]]],
) -> None:
    """Whatever the mix, the words come out after `--`, in order, and every option with
    its value before it, in order: as Click then reads them."""
    args = [a for _kind, part in parts for a in part]
    out = split_words(search_cmd.params, ["-h", "--help"], args)
    words = [w for kind, part in parts if kind == "word" for w in part]
    options = [a for kind, part in parts if kind == "opt" for a in part]
    assert out == ([*options, "--", *words] if words else options)
    if words and "-h" not in options:
        ctx = search_cmd.make_context("search", list(out), resilient_parsing=True)
        assert ctx.params["query"] == tuple(words)


def test_a_double_dash_ends_the_options_as_before() -> None:
    out = split_words(search_cmd.params, ["-h"], ["-n", "2", "--", "--json", "-n"])
    assert out == ["-n", "2", "--", "--json", "-n"]
    assert search_cmd.make_context("search", out).params["query"] == ("--json", "-n")
