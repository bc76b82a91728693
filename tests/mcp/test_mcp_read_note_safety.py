"""read_note reads only notes inside the vault: traversal, absolute paths, NUL, symlinks out,
URL-encoded and Windows-style escapes, very long paths are refused with one line, and the
secret outside the vault never appears in any answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    call_error,
    connect,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

pytestmark = pytest.mark.anyio

SECRET = "TOP-SECRET-OUTSIDE-THE-VAULT"


@pytest.fixture
def vault_and_secret(sample: Sample, tmp_path: Path) -> tuple[Path, Path]:
    vault = sample.copy(tmp_path)
    secret = tmp_path / "secret.md"  # a Markdown file right beside the vault
    secret.write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    return vault, secret


ESCAPES = [
    "../secret.md",
    "../secret",
    "rules/../../secret.md",
    "./../secret.md",
    "rules/./../../secret.md",
    "..",
    "../",
    "../../../../../../../../etc/passwd",
    "..\\secret.md",  # Windows separators
    "rules\\..\\..\\secret.md",
    "%2e%2e/secret.md",  # URL-encoded
    "%2e%2e%2fsecret.md",
    "..%2fsecret.md",
    "rules%2f..%2f..%2fsecret.md",
    "%252e%252e%252fsecret.md",  # double-encoded: decoded once, stays inside, not a note
    "../secret.md#Secret",
]

ABSOLUTE = [
    "/etc/passwd",
    "/secret.md",
    "C:\\Windows\\win.ini",
    "c:/secret.md",
    "\\\\server\\share\\secret.md",
    "//server/share/secret.md",
    "%2fetc%2fpasswd",
    "\\etc\\passwd",
]


@pytest.mark.parametrize("path", ESCAPES)
async def test_traversal_is_refused(vault_and_secret: tuple[Path, Path], path: str) -> None:
    vault, _ = vault_and_secret
    async with connect(vault) as client:
        message = await call_error(client, "read_note", {"path": path})
    assert SECRET not in message
    assert message.startswith("read_note:")
    assert "outside the vault" in message or "not a note in the index" in message


@pytest.mark.parametrize("path", ABSOLUTE)
async def test_absolute_paths_are_refused(vault_and_secret: tuple[Path, Path], path: str) -> None:
    vault, _ = vault_and_secret
    async with connect(vault) as client:
        message = await call_error(client, "read_note", {"path": path})
    assert "absolute path" in message and "relative to the vault" in message


async def test_absolute_path_of_a_real_note_is_refused_too(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        message = await call_error(client, "read_note", {"path": str(vault / "rules" / "x.md")})
    assert "absolute path" in message


@pytest.mark.parametrize("path", ["rules/\x00.md", "\x00", "rules/客户去重规则 v2.md\x00.txt"])
async def test_nul_is_refused(sample: Sample, tmp_path: Path, path: str) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "read_note", {"path": path})
    assert "NUL" in message


async def test_url_encoded_nul_is_refused(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "read_note", {"path": "rules/%00.md"})
    assert "NUL" in message


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
async def test_symlinks_out_of_the_vault_are_refused(vault_and_secret: tuple[Path, Path]) -> None:
    vault, secret = vault_and_secret
    (vault / "link.md").symlink_to(secret)
    (vault / "outdir").symlink_to(secret.parent, target_is_directory=True)
    async with connect(vault) as client:
        for path in ("link.md", "outdir/secret.md", "outdir"):
            message = await call_error(client, "read_note", {"path": path})
            assert "outside the vault" in message, (path, message)
            assert SECRET not in message
        # a link that leads out and back in resolves inside, but is not an indexed note
        loop = await call_error(client, "read_note", {"path": "outdir/sample/rules/x.md"})
        assert "not a note in the index" in loop
        # and search never indexed the linked file either
        found = await call(client, "search", {"query": SECRET})
        assert found["hits"] == []


@pytest.mark.parametrize("length", [1025, 5000, 100_000])
async def test_very_long_paths_are_refused(sample: Sample, tmp_path: Path, length: int) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "read_note", {"path": "a/" * (length // 2) + "x"})
    assert "too long" in message and "1024" in message


async def test_a_path_that_is_long_but_allowed_is_just_not_found(
    sample: Sample, tmp_path: Path
) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "read_note", {"path": "x" * 1000 + ".md"})
    assert "not a note in the index" in message


async def test_odd_but_inside_paths_still_read(sample: Sample, tmp_path: Path) -> None:
    """Readings that stay inside the vault are served: redundant ./, .. that comes back,
    Windows separators, URL-encoding of a real name."""
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        for path in (
            "./rules/客户去重规则 v2.md",
            "rules/../rules/客户去重规则 v2.md",
            "rules\\客户去重规则 v2.md",
            "rules/%E5%AE%A2%E6%88%B7%E5%8E%BB%E9%87%8D%E8%A7%84%E5%88%99%20v2.md",
            "rules//客户去重规则 v2.md",
        ):
            data = await call(client, "read_note", {"path": path})
            assert data["path"] == "rules/客户去重规则 v2.md", path


async def test_an_id_cannot_inject_sql(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        for note_id in ("' OR 1=1 --", "RULE-CD-002' --", '"); DROP TABLE notes; --'):
            message = await call_error(client, "read_note", {"id": note_id})
            assert "no note has the id" in message
        still = await call(client, "status")
    assert still["notes"] == sample.notes
