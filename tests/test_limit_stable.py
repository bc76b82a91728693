"""The limit only cuts the list (issue 12): the hits of a shorter list are the head of a
longer one's, with the same scores, and `matched` is one number whatever the limit."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from conftest import build_vault
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import lore
from lore.retrieve import hybrid

WORDS = ["plugin", "template", "daily", "kafka", "zebra", "编程", "选项", "缓存", "去重", "-t"]


def _ranked(result: lore.SearchResult) -> list[tuple[str, float]]:
    return [(hit.path, hit.score) for hit in result]


notes = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),  # the title
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=5),  # the body
    ),
    min_size=1,
    max_size=24,
)
queries = st.lists(
    st.lists(st.sampled_from([*WORDS, "-zebra", "的"]), min_size=1, max_size=3).map(" ".join),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes, queries)
# A rare word in 6 notes, a common one in all 24: asked for 1 hit, the old pool (4 x limit)
# found enough notes by the rare word alone (matched 6); for 3 it let the common word bring
# candidates too (matched 24), with other scores.
@example([(["n"], ["plugin", "kafka"])] * 6 + [(["n"], ["plugin"])] * 18, ["kafka plugin"])
def test_a_shorter_list_is_the_head_of_a_longer_one(
    vault_notes: list[tuple[list[str], list[str]]], texts: list[str]
) -> None:
    """On vaults of a few notes the pool is made as small (three notes, ranked three deep)
    so that limits below and above it are both exercised."""
    files = {
        f"n{i:02d}.md": f"# {' '.join(title)}\n\n{' '.join(body)}\n"
        for i, (title, body) in enumerate(vault_notes)
    }
    pool = 3
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(hybrid, "POOL", pool),
        mock.patch.object(hybrid, "FTS_DEPTH", 1),
        mock.patch.object(hybrid, "CANDIDATES_WANTED", pool),
    ):
        root = build_vault(Path(tmp) / "vault", files)
        with lore.open(root) as vault:
            vault.sync()
            for text in texts:
                longest = vault.search(text, limit=pool)
                for limit in range(1, pool):
                    shorter = vault.search(text, limit=limit)
                    assert _ranked(shorter) == _ranked(longest)[:limit], (text, limit)
                    assert shorter.matched == longest.matched, (text, limit)
                # Above the bound the pool grows; what matched does not.
                assert vault.search(text, limit=4 * pool).matched == longest.matched, text


def test_the_cli_pages_agree_at_every_limit(tmp_path: Path) -> None:
    """More notes than a search reads for candidates: "plugin templates" at --limit 3,
    20 and 100 lists the same head with the same scores and one `matched`; the old
    pool (4 x limit) said 261 at --limit 3 and 561 at --limit 100, with other scores."""
    body = "templates for notes, kept in a folder of their own."
    files = {f"t/{i:03d}.md": f"# Templates {i}\n\n{body}\n" for i in range(260)}
    files.update({f"p/{i:03d}.md": f"# Plugin {i}\n\na plugin for notes.\n" for i in range(300)})
    files["both.md"] = "# Plugin templates\n\nplugin templates, a plugin of templates.\n"
    root = build_vault(tmp_path / "vault", files, index=True)

    def page(limit: int) -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, "-m", "lore", "search", "plugin templates", "--limit", str(limit)]
            + ["--json", "--vault", str(root)],
            capture_output=True,
            text=True,
            check=True,
        )
        found: dict[str, object] = json.loads(out.stdout)
        return found

    pages = {limit: page(limit) for limit in (3, 20, hybrid.STABLE_LIMIT)}
    heads = {
        limit: [(h["path"], h["score"]) for h in p["hits"]]  # type: ignore[attr-defined]
        for limit, p in pages.items()
    }
    assert heads[3][0][0] == "both.md"
    assert heads[3] == heads[20][:3] and heads[20] == heads[hybrid.STABLE_LIMIT][:20]
    assert len(heads[hybrid.STABLE_LIMIT]) == hybrid.STABLE_LIMIT
    # Every note holding plugin or templates: 561, the same on every page.
    assert {p["matched"] for p in pages.values()} == {561}
