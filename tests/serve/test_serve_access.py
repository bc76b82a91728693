"""Who sees what, exhaustively: a token whose principal may see `public/` only asks every
page and every API endpoint for what is private (its words, names, tags, paths, cluster
ids, the deleted private note), and nothing private appears anywhere: not in hits,
counts, snippets, backlinks, map points, cluster labels, tag lists, memory or status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from serve_support import PRIVATE, PUBLIC, PUBLIC_NOTES, assert_no_private, make_vault, running

import lore
from lore.serve.api import PREFIX

ASKED = ["SECRETWORD", "薪资", "机密", "王老板", "预算 奖金", "客户 去重", "调整方案", "private"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = make_vault(tmp_path_factory.mktemp("access") / "vault")
    with lore.open(root) as vault:
        tokens = {
            "guest": vault.add_token("guest", principal="guest").secret,
            "nobody": vault.add_token("nobody", principal="nobody").secret,
            "stranger": vault.add_token("stranger", principal="not-in-config").secret,
        }
        owner_map = vault.visible_clusters()
        cluster_ids = [c.id for c in owner_map.clusters]  # type: ignore[union-attr]
        vault.remember(
            "机密 SECRETWORD 结论：王老板 批准"
        )  # private memory (memory/ is not public)
        vault.delete_note("private/机密 0.md")  # a private note in the trash
    with running(root, require_token=True, rate=0) as server:
        yield {"server": server, "tokens": tokens, "clusters": cluster_ids}


def _urls(clusters: list[int]) -> list[str]:
    urls = [
        "/search",
        "/map",
        "/memory",
        "/status",
        f"{PREFIX}/status",
        f"{PREFIX}/tags",
        f"{PREFIX}/tags?match=%E6%9C%BA",
        f"{PREFIX}/clusters",
        f"{PREFIX}/check",
        f"{PREFIX}/trash",
        f"{PREFIX}/snapshot",
        f"{PREFIX}/recent?days=3650",
    ]
    for word in ASKED:
        q = quote(word)
        urls += [
            f"/search?q={q}",
            f"/search?q={q}&path=private%2F",
            f"/search?q={q}&tag={quote('机密')}",
            f"{PREFIX}/search?q={q}&limit=100&explain=1",
            f"{PREFIX}/search?q={q}&path=private/**",
            f"{PREFIX}/lookup?q={q}",
            f"{PREFIX}/context?task={q}",
        ]
    for path in [*PUBLIC, *PRIVATE, "memory/2026-11-20.md"]:
        urls += [f"/note/{quote(path)}?q=SECRETWORD", f"{PREFIX}/notes/{quote(path)}"]
        urls += [f"{PREFIX}/links/{quote(path)}"]
    urls += [f"{PREFIX}/clusters/{cid}" for cid in clusters]
    return urls


@pytest.mark.parametrize("who", ["guest", "nobody", "stranger"])
def test_nothing_private_reaches_a_principal(served: dict[str, Any], who: str) -> None:
    client = served["server"].client(served["tokens"][who])
    seen: dict[int, int] = {}
    with client:
        for url in _urls(served["clusters"]):
            answer = client.get(url)
            seen[answer.status_code] = seen.get(answer.status_code, 0) + 1
            assert answer.status_code in (200, 404), (url, answer.status_code, answer.text[:300])
            echo = " ".join(w for w in ASKED if quote(w) in url)
            assert_no_private(answer.text, f"{who} {url}", echo)
            assert "Traceback" not in answer.text
    assert seen.get(200, 0) > 20


def test_the_guest_sees_its_part_whole(served: dict[str, Any]) -> None:
    with served["server"].client(served["tokens"]["guest"]) as client:
        status = client.get(f"{PREFIX}/status").json()
        assert status["notes"] == PUBLIC_NOTES and status["server"]["sync"] is None
        found = client.get(f"{PREFIX}/search", params={"q": "客户", "limit": 100}).json()
        assert {h["path"] for h in found["hits"]} == set(PUBLIC)
        assert found["matched"] == PUBLIC_NOTES  # the count is of what it may see
        tags = {t["tag"] for t in client.get(f"{PREFIX}/tags").json()["tags"]}
        assert tags == {"规则", "客户", "架构", "去重"}
        clusters = client.get(f"{PREFIX}/clusters").json()
        assert clusters["notes"] == PUBLIC_NOTES
        members = [m for c in clusters["clusters"] for m in c["members"]]
        assert sorted(members) == sorted(PUBLIC)
        hidden = client.get(f"/note/{quote('private/调整方案.md')}")
        missing = client.get(f"/note/{quote('private/没有这篇.md')}")
        assert hidden.status_code == missing.status_code == 404
        hidden_api = client.get(f"{PREFIX}/notes/{quote('private/调整方案.md')}").json()
        missing_api = client.get(f"{PREFIX}/notes/{quote('private/没有这篇.md')}").json()
        assert hidden_api["error"]["message"].replace("调整方案", "?") == missing_api["error"][
            "message"
        ].replace("没有这篇", "?")
        page = client.get(f"/note/{quote('public/客户去重规则 v2.md')}").text
        assert 'class="wikilink dangling"' in page  # the link to the hidden note leads nowhere
        map_page = client.get("/map").text
        assert map_page.count('class="point"') == PUBLIC_NOTES
        assert client.get(f"{PREFIX}/doctor").status_code == 403


def test_a_principal_without_rules_sees_nothing(served: dict[str, Any]) -> None:
    with served["server"].client(served["tokens"]["stranger"]) as client:
        assert client.get(f"{PREFIX}/status").json()["notes"] == 0
        found = client.get(f"{PREFIX}/search", params={"q": "客户"}).json()
        assert found["hits"] == [] and "no access rules" in found["reason"]
        assert client.get(f"{PREFIX}/tags").json()["tags"] == []
        assert client.get(f"{PREFIX}/clusters").json()["clusters"] == []


PUBLIC_CARD = "entities/张三.md"
PRIVATE_CARD = "entities/王老板.md"
CARDS = {
    PUBLIC_CARD: """---
type: person
aliases: [Zhang San, zs]
last_activity: 2026-11-18
---
# 张三

数据平台组的工程师，负责客户去重。

## 关系
- 负责 [[客户去重规则 v2]]
""",
    PRIVATE_CARD: """---
type: person
aliases: [老板, SECRETWORD]
last_activity: 2026-11-19
---
# 王老板

决定薪资方案的人。

## 关系
- 管理 [[张三]]
- 批准 [[调整方案]]
""",
}


def test_entity_cards_relations_and_mentions_stay_inside_the_rules(tmp_path: Path) -> None:
    """A visible card is shown whole except what comes from a hidden one: the hidden
    card's incoming relation, its aliases, its mentions."""
    root = make_vault(tmp_path / "vault", clusters=False)
    config = root / ".lore/config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace('guest = ["public/"]', f'guest = ["public/", "{PUBLIC_CARD}"]'),
        encoding="utf-8",
    )
    for rel, body in CARDS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body, encoding="utf-8")
    with lore.open(root) as vault:
        vault.sync()
        guest = vault.add_token("guest", principal="guest").secret
        owner_card = vault.lookup("张三").to_dict()
    owner_relations = json.dumps(owner_card, ensure_ascii=False)
    assert "王老板" in owner_relations  # the owner sees who manages 张三: the test can fail
    card = quote(PUBLIC_CARD)
    urls = [
        "/memory",
        f"/note/{card}",
        f"{PREFIX}/lookup?q={quote('张三')}",
        f"{PREFIX}/lookup?q=zs",
        f"{PREFIX}/lookup?q={quote('老板')}",
        f"{PREFIX}/context?task={quote('张三 负责 什么')}",
        f"{PREFIX}/recent?days=30",
        f"{PREFIX}/snapshot",
        f"{PREFIX}/links/{card}",
        f"{PREFIX}/notes/{card}",
        f"{PREFIX}/check",
        f"{PREFIX}/search?q={quote('张三')}&explain=1",
    ]
    with running(root, require_token=True, rate=0) as server, server.client(guest) as client:
        memory_page = client.get("/memory").text
        assert "张三" in memory_page  # the visible card is on the page
        for url in urls:
            answer = client.get(url)
            assert answer.status_code == 200, (url, answer.text[:300])
            echo = "老板" if "老板" in unquote(url) else ""
            assert_no_private(answer.text, f"guest {url}", echo)
            assert "王老板" not in answer.text, url
        found = client.get(f"{PREFIX}/lookup", params={"q": "张三"}).json()
        assert found["entity"]["name"] == "张三"
        assert {r["direction"] for r in found["entity"]["relations"]} == {"out"}
