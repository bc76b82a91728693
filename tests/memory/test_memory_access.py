"""Path-based access rules: applied inside the query path, so nothing outside a principal's
rules reaches its snippets, counts, explanations, entity cards, mentions or views."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from memory_support import write

import lore
from lore.cli import main
from lore.memory.access import Access, _patterns, access_for
from lore.memory.settings import MemorySettings

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault, on_backend: str) -> lore.Vault:
    """The memory vault on SQLite or on PostgreSQL (the rules' own tests run once)."""
    opened = open_vault(write(make_vault()))
    opened.sync()
    return opened


def test_search_sees_only_allowed_paths(vault: lore.Vault) -> None:
    query = "机密 灰度 手机号"
    daily = {"memory/2026-11-10.md", "memory/2026-11-12.md"}
    # Recall first: every note sharing a word is a hit (here also ones sharing a character).
    assert {h.path for h in vault.search(query)} >= {
        "private/salary.md",
        "rules/客户去重规则 v2.md",
        *daily,
    }
    agent = {h.path for h in vault.search(query, principal="agent")}
    assert daily <= agent
    assert all(p.startswith(("memory/", "entities/")) or p == "MEMORY.md" for p in agent)
    assert {h.path for h in vault.search(query, principal="guest")} == {"rules/客户去重规则 v2.md"}


def test_counts_and_explanations_do_not_leak(vault: lore.Vault) -> None:
    # The secret word exists only in private/: for the agent it is as if it did not exist.
    secret = vault.search("zebra", principal="agent", tags=["x"])
    assert list(secret) == [] and secret.reason == "nothing matched"
    visible = vault.search("zebra", tags=["x"])
    assert visible.reason and "1 note(s) matched" in visible.reason  # the owner is told
    explained = vault.search("zebra 去重", principal="agent", explain=True)
    for hit in explained:
        assert hit.explain is not None
        assert "zebra" in hit.explain.dropped_terms  # absent for this principal
        assert "private/" not in json.dumps(hit.to_dict(), ensure_ascii=False)
    owner = vault.search("zebra 去重", explain=True)
    assert owner[0].explain is not None and "zebra" not in owner[0].explain.dropped_terms


def test_entities_mentions_and_aliases_are_scoped(vault: lore.Vault) -> None:
    # The guest sees no entity card: no L1, and no alias expansion from hidden cards.
    guest = vault.lookup("zs", principal="guest")
    assert guest.level != "L1" and guest.entity is None
    expanded = vault.search("zs", principal="guest", explain=True)
    for hit in expanded:
        assert hit.explain is not None and "张三" not in hit.explain.query_terms
    # The agent sees the card, with mentions counted only where it may look.
    card = vault.lookup("张三", principal="agent").entity
    assert card is not None
    owner_card = vault.lookup("张三").entity
    assert owner_card is not None
    assert card["mentions"]["notes"] < owner_card["mentions"]["notes"]
    paths = {m["path"] for m in card["mentions"]["latest"]}
    assert not any(p.startswith(("private/", "rules/")) for p in paths)
    # A relation to a note the agent cannot see does not resolve (it may not know it exists).
    rel = next(r for r in card["relations"] if r.get("target") == "客户去重规则 v2")
    assert rel["resolved"] == {"kind": None}
    assert "people.md" not in json.dumps(card, ensure_ascii=False)


def test_l3_and_views_are_scoped(vault: lore.Vault) -> None:
    assert vault.lookup("zebra-77").level == "L2"
    hidden = vault.lookup("zebra-77", principal="agent")
    assert hidden.level == "L4"
    assert "zebra" not in json.dumps(hidden.to_dict(), ensure_ascii=False).replace(hidden.query, "")
    view = vault.context("张三 调薪", principal="agent")
    assert "private/" not in view.text and "zebra" not in view.text
    assert all(not i["path"].startswith("private/") for i in view.items)
    recent = vault.recent(days=60, principal="guest")
    assert recent.entities == []
    assert {n["path"] for n in recent.notes} <= {"rules/客户去重规则 v2.md"}
    snap = vault.snapshot(principal="guest")
    assert "MEMORY.md" not in snap.text and "2026-11-10" not in snap.text


def test_cli_as_option(vault: lore.Vault) -> None:
    root = str(vault.root)
    out = CliRunner().invoke(main, ["search", "zebra", "--as", "agent", "--vault", root, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["hits"] == [] and data["matched"] == 0
    refused = CliRunner().invoke(main, ["search", "张三", "--as", "ghost", "--vault", root])
    assert refused.exit_code == 0
    assert "'ghost'" in refused.stdout and "sees nothing" in refused.stdout


@pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL
def test_rules_are_validated(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({".lore/config.toml": '[access]\nagent = "memory/"\nbad = [1, 2]\n'})
    vault = open_vault(root)
    with pytest.raises(lore.ConfigError) as caught:
        vault.search("x", principal="agent")
    assert "access.bad" in str(caught.value) and "config.toml" in str(caught.value)


def test_glob_forms() -> None:
    assert _patterns("memory/") == ["memory/*"]
    assert _patterns("./memory/**") == ["memory/*"]
    assert _patterns("MEMORY.md") == ["MEMORY.md", "MEMORY.md/*"]
    assert _patterns("a/**/b.md") == ["a/*/b.md", "a/b.md"]
    assert _patterns("**/*.md") == ["*/*.md", "*.md"]
    rule = access_for(MemorySettings(access={"p": ("notes/[!x]*.md",)}), "p")
    assert rule.allows("notes/a.md") and not rule.allows("notes/x.md")
    assert rule.globs == ("notes/[^x]*.md",)
    assert Access(None, None).allows("anything")


PATHS = st.lists(
    st.sampled_from(["memory", "entities", "a b", "x", "Notes", "深"]), min_size=1, max_size=3
).map(lambda parts: "/".join(parts) + ".md")
RULES = st.sampled_from(
    ["memory/", "memory/**", "*.md", "x.md", "a b/**/深.md", "Notes", "[!m]*", "entities/?.md"]
)


@given(st.lists(PATHS, min_size=1, max_size=6), st.lists(RULES, min_size=1, max_size=3))
def test_sql_glob_and_python_agree(paths: list[str], rules: list[str]) -> None:
    """The query path (SQLite GLOB) and the file readers (fnmatch) allow the same paths."""
    import apsw

    rule = access_for(MemorySettings(access={"p": tuple(rules)}), "p")
    con = apsw.Connection(":memory:")
    globs = rule.globs or ()
    for path in paths:
        in_sql = any(
            con.execute("SELECT ? GLOB ?", (path, g)).fetchone()[0]
            for g in globs  # type: ignore[index]
        )
        assert in_sql == rule.allows(path), (path, rules)
