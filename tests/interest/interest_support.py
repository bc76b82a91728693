"""Helpers for the interest-map tests: vaults of notes on known topics, a tiny
deterministic embedding provider and scripted chat models (all in-process)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

import lore
from lore.providers.base import ProviderError


@pytest.fixture(autouse=True)
def no_interest_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LORE_INTEREST_* or provider setting from the developer's shell (imported by
    each test module: a conftest.py here would shadow the root one)."""
    for name in list(os.environ):
        if name.startswith(("LORE_INTEREST_", "LORE_EMBED_", "LORE_LLM_")):
            monkeypatch.delenv(name)


TOPICS: dict[str, tuple[str, list[str]]] = {
    "cooking": (
        "en",
        "recipe oven flour butter sugar bake bread dough yeast knead pastry crust"
        " simmer sauce garlic onion roast spice".split(),
    ),
    "astronomy": (
        "en",
        "telescope galaxy nebula orbit planet comet asteroid star supernova eclipse"
        " lunar solar cosmic quasar spectrum".split(),
    ),
    "finance": (
        "en",
        "budget invoice revenue margin ledger audit equity dividend portfolio bond"
        " interest inflation cashflow expense".split(),
    ),
    "gardening": (
        "en",
        "compost seedling soil mulch prune tomato basil harvest fertiliser greenhouse"
        " watering weeds perennial bulbs".split(),
    ),
    "数据库": (
        "zh",
        "索引 事务 查询 主键 分片 复制 备份 日志 锁表 优化器 执行计划 存储引擎 分区 视图".split(),
    ),
    "旅行": (
        "zh",
        "机票 酒店 行李 签证 护照 景点 地铁 导游 攻略 海滩 徒步 民宿 火车 美食".split(),
    ),
}
COMMON = "note today thought idea remember later".split()


def topic_note(topic: str, i: int, rng: random.Random, day: dt.date | None) -> str:
    lang, words = TOPICS[topic]
    picked = [rng.choice(words) for _ in range(14)] + [rng.choice(COMMON) for _ in range(2)]
    sep = "，" if lang == "zh" else " "
    body = sep.join(picked) + ("。" if lang == "zh" else ".")
    tags = sorted({topic, rng.choice(words)})
    head = ["---", f"title: {topic} {i}", f"tags: [{', '.join(tags)}]"]
    if day is not None:
        head.append(f"date: {day.isoformat()}")
    return "\n".join([*head, "---", "", body, ""])


def write_topic_vault(
    root: Path,
    topics: list[str],
    per_topic: int,
    *,
    seed: int = 0,
    start: dt.date = dt.date(2026, 1, 5),
    dated: bool = True,
    prefix: str = "",
) -> list[str]:
    """Notes `<topic>/<prefix>nNNN.md`, dated one per week per topic from `start`; returns
    the relative paths written."""
    rng = random.Random(seed)
    written = []
    for topic in topics:
        for i in range(per_topic):
            day = start + dt.timedelta(weeks=i) if dated else None
            rel = f"{topic}/{prefix}n{i:03d}.md"
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(topic_note(topic, i, rng, day), encoding="utf-8")
            written.append(rel)
    return written


class WordEmbedder:
    """A tiny deterministic EmbeddingProvider: every word adds to a few hashed dimensions,
    so texts sharing words are close (topics separate), and nothing is downloaded."""

    name = "fake"
    identity = "fake:words-48"
    max_tokens = 512

    def __init__(self, dim: int = 48) -> None:
        self.dim = dim
        self.calls = 0

    def embed(self, texts: list[str], kind: str) -> Any:
        import numpy as np

        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.replace("，", " ").replace("。", " ").replace(",", " ").split():
                digest = hashlib.sha256(word.lower().strip(".").encode()).digest()
                out[row, digest[0] % self.dim] += 1.0
                out[row, digest[1] % self.dim] += 0.5
            if not out[row].any():
                out[row, 0] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def embed_vault(root: Path, **settings: Any) -> None:
    """Index `root` and write vectors through the real embed path (lore.index.embed)."""
    with lore.open(root, **settings) as vault:
        vault.capabilities.use(embedder=WordEmbedder())
        vault.sync()
        vault.embed()


class ScriptedChat:
    """A ChatProvider answering the label prompt with `Topic: <first tag>`, or failing."""

    name = "scripted"
    identity = "scripted:labels-1"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        self.calls += 1
        if self.fail:
            raise ProviderError("scripted chat: endpoint down")
        tags = user.splitlines()[0].removeprefix("Tags: ").split(", ")
        return json.dumps({"label": f"Topic: {tags[0]}"})


def cluster_of(interest: Any) -> dict[str, int]:
    """path → cluster id."""
    return {path: c.id for c in interest.clusters for path in (m.path for m in c.members)}
