"""`lore clusters build / show` as a user runs them: real subprocesses on real vaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import first_index, one_line_naming
from interest_support import (
    TOPICS,
    embed_vault,
    no_interest_env,  # noqa: F401 - a fixture
    write_topic_vault,
)


def lore(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "lore", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
    )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_topic_vault(root, list(TOPICS), 10)
    return first_index(root)


def test_build_then_show(vault: Path) -> None:
    missing = lore("clusters", "show", "--vault", vault)
    assert missing.returncode == 1 and missing.stdout == ""
    one_line_naming(missing.stderr.strip(), "no interest map", "lore clusters build")

    built = lore("clusters", "build", vault, "--today", "2026-06-01")
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("interest map: 60 note(s) in ")
    assert "lore: notice: lexical map" in built.stderr

    rebuilt = lore("clusters", "build", vault, "--today", "2026-06-01", "--json")
    shown = lore("clusters", "show", "--vault", vault, "--json")
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert json.loads(rebuilt.stdout) == stored  # `show` prints the map `build` printed
    clusters = stored["clusters"]
    assert stored["notes"] == 60 and clusters
    for c in clusters:
        assert {"id", "label", "size", "members"} <= set(c)
        assert c["size"] == len(c["members"]) and all(m.endswith(".md") for m in c["members"])
    assert sum(c["size"] for c in clusters) == 60

    first = clusters[0]
    one = lore("clusters", "show", str(first["id"]), "--vault", vault, "--json")
    detail = json.loads(one.stdout)
    assert detail["id"] == first["id"] and len(detail["notes"]) == first["size"]
    assert {"path", "title", "date", "similarity", "x", "y"} <= set(detail["notes"][0])
    text = lore("clusters", "show", str(first["id"]), "--vault", vault)
    assert (
        text.stdout.startswith(f"cluster {first['id']}: ") and "most representative" in text.stdout
    )

    unknown = lore("clusters", "show", "999", "--vault", vault)
    assert unknown.returncode == 1
    one_line_naming(unknown.stderr.strip(), "cluster 999", str(first["id"]))


def test_two_builds_print_the_same_json(vault: Path) -> None:
    outputs: list[dict[str, object]] = []
    for _ in range(2):
        assert lore("clusters", "build", vault, "--today", "2026-06-01").returncode == 0
        shown = json.loads(lore("clusters", "show", "--vault", vault, "--json").stdout)
        shown.pop("built_at")  # when, not what
        outputs.append(shown)
    assert outputs[0] == outputs[1] and outputs[0]["clusters"]


def test_flags_and_environment(vault: Path) -> None:
    out = lore("clusters", "build", vault, "--json", env={"LORE_INTEREST_MAX_CLUSTERS": "2"})
    data = json.loads(out.stdout)
    assert len(data["clusters"]) <= 2 and data["params"]["max_clusters"] == 2
    assert data["lexical"] is True and data["notes"] == 60
    flag = lore(
        "clusters", "build", vault, "--json", "--max-clusters", "3", "--algo", "hierarchical"
    )
    data = json.loads(flag.stdout)
    assert data["params"]["max_clusters"] == 3 and data["params"]["cluster_algo"] == "hierarchical"
    tolerant = lore("clusters", "build", vault, "--json", "--stability-tolerance", "0.05")
    assert json.loads(tolerant.stdout)["params"]["stability_tolerance"] == 0.05
    bad = lore("clusters", "build", vault, "--min-size", "0")
    assert bad.returncode == 1
    one_line_naming(bad.stderr.strip(), "min_size", "from 1 to 100,000")
    bad_env = lore("clusters", "build", vault, env={"LORE_INTEREST_TAG_WEIGHT": "2"})
    assert bad_env.returncode == 1
    one_line_naming(bad_env.stderr.strip(), "LORE_INTEREST_TAG_WEIGHT")
    bad_day = lore("clusters", "build", vault, "--today", "June")
    assert bad_day.returncode == 1 and "--today" in bad_day.stderr


def test_a_vector_map_from_the_command_line(vault: Path) -> None:
    embed_vault(vault)  # vectors through the real embed path, in this process
    out = lore("clusters", "build", vault, "--json", "--no-sync")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["lexical"] is False and data["source"] == "vectors fake:words-48"
    lexical = json.loads(lore("clusters", "build", vault, "--json", "--source", "lexical").stdout)
    assert lexical["lexical"] is True


def test_an_empty_vault_says_so(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    first_index(root)
    out = lore("clusters", "build", root)
    assert out.returncode == 0
    assert "0 cluster(s)" in out.stdout and "no notes to cluster" in out.stderr
    assert json.loads(lore("clusters", "show", "--vault", root, "--json").stdout)["clusters"] == []
