"""The library under `lore serve`, on real files: note writes (create, edit with the hash
guard, move, delete to the trash, restore), links and backlinks, tokens, and what a
principal sees of counts, tags and the interest map."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest
from serve_support import PRIVATE, PUBLIC_NOTES, assert_no_private, make_vault

import lore
from lore.edit.notes import note_target
from lore.errors import AccessError, ConfigError, ConflictError, NotFoundError, PathError

NOTE = "public/客户去重规则 v2.md"


def tree(root: Path) -> dict[str, str]:
    """Every file under root (the index aside) → sha256: to show nothing was written."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".lore/index.sqlite") and "/locks/" not in rel:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def vault(tmp_path: Path) -> lore.Vault:
    root = make_vault(tmp_path / "v", clusters=True)
    opened = lore.open(root)
    yield opened
    opened.close()


def test_edit_is_guarded_by_the_content_hash(vault: lore.Vault) -> None:
    note = vault.note(NOTE)
    change = vault.edit_note(NOTE, base_hash=note["hash"], append="- 新增一条", section="计划")
    assert change.indexed and change.previous_hash == note["hash"]
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert "灰度一周后全量。\n\n- 新增一条\n" in text
    assert vault.note(NOTE)["hash"] == change.hash == hashlib.sha256(text.encode()).hexdigest()
    before = tree(vault.root)
    with pytest.raises(ConflictError, match="changed since it was read"):
        vault.edit_note(NOTE, base_hash=note["hash"], text="overwrite")  # the old hash
    assert tree(vault.root) == before
    found = vault.search("新增一条")
    assert found and found[0].path == NOTE


def test_concurrent_edits_with_one_hash_one_wins(vault: lore.Vault) -> None:
    base = vault.note(NOTE)["hash"]
    results: list[str] = []

    def edit(n: int) -> None:
        with lore.open(vault.root) as mine:
            try:
                mine.edit_note(NOTE, base_hash=base, append=f"writer {n}")
                results.append("ok")
            except ConflictError:
                results.append("conflict")

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["conflict"] * 5 + ["ok"]
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert sum(f"writer {n}" in text for n in range(6)) == 1


def test_create_move_delete_restore(vault: lore.Vault) -> None:
    made = vault.write_note("public/新笔记.md", "# 新笔记\n\n链接 [[架构说明]]\n")
    assert made.indexed and (vault.root / "public/新笔记.md").is_file()
    with pytest.raises(ConflictError, match="exists already"):
        vault.write_note("public/新笔记.md", "again")
    moved = vault.move_note("public/新笔记.md", "public/sub/改名.md", base_hash=made.hash)
    assert moved.moved_from == "public/新笔记.md" and moved.indexed
    assert not (vault.root / "public/新笔记.md").exists()
    assert [b.path for b in vault.links("public/架构说明.md").backlinks].count(
        "public/sub/改名.md"
    ) == 1
    gone = vault.delete_note("public/sub/改名.md")
    assert gone.indexed and not (vault.root / "public/sub/改名.md").exists()
    assert [i.id for i in vault.trash()] == [gone.trash_id]
    assert not vault.search("改名 新笔记", path="public/sub/")  # the trash is not indexed
    back = vault.restore_note(str(gone.trash_id))
    assert back.path == "public/sub/改名.md" and back.indexed
    assert vault.trash() == [] and not any((vault.root / ".lore/trash").iterdir())


@pytest.mark.parametrize(
    "path",
    ["../x.md", "/etc/x.md", "a/../../x.md", "a//b.md", "./a.md", ".lore/x.md", ".git/x.md",
     "a\\b.md", "a\x00.md", "C:/x.md", "note.txt", ".md", "a/\x1b[31m.md", "x" * 2000 + ".md"],
)  # fmt: skip
def test_bad_paths_are_refused_before_anything_is_written(vault: lore.Vault, path: str) -> None:
    before = tree(vault.root)
    with pytest.raises(PathError):
        vault.write_note(path, "text")
    with pytest.raises(PathError):
        vault.move_note(NOTE, path)
    assert tree(vault.root) == before


def test_symlinks_are_never_written_through(vault: lore.Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text("mine", encoding="utf-8")
    os.symlink(outside, vault.root / "public" / "linked")
    os.symlink(outside / "victim.md", vault.root / "public" / "victim.md")
    before = tree(vault.root)
    with pytest.raises(PathError, match="symlink"):
        vault.write_note("public/linked/new.md", "x")
    with pytest.raises(PathError, match="symlink"):
        vault.edit_note("public/victim.md", base_hash="0" * 64, text="x")
    with pytest.raises(PathError, match="symlink"):
        vault.delete_note("public/victim.md")
    with pytest.raises(PathError, match="symlink"):
        vault.move_note(NOTE, "public/linked/moved.md")
    assert (outside / "victim.md").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]
    assert tree(vault.root) == before


def test_restore_never_writes_or_reads_through_a_link(vault: lore.Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("not the vault's", encoding="utf-8")
    os.symlink(outside, vault.root / "public" / "linked")
    gone = vault.delete_note("public/架构说明.md")
    with pytest.raises(PathError, match="symlink"):  # restored into a linked folder
        vault.restore_note(str(gone.trash_id), to="public/linked/架构说明.md")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert [i.id for i in vault.trash()] == [gone.trash_id]  # still there to restore
    planted = vault.root / ".lore/trash" / str(gone.trash_id) / "public/架构说明.md"
    planted.unlink()  # the trashed file swapped for a link to a file outside
    os.symlink(outside / "secret.md", planted)
    before = tree(vault.root)
    with pytest.raises(NotFoundError):
        vault.restore_note(str(gone.trash_id))
    assert tree(vault.root) == before and not (vault.root / "public/架构说明.md").exists()


def test_a_principal_writes_only_where_its_rules_allow(vault: lore.Vault) -> None:
    before = tree(vault.root)
    with pytest.raises(AccessError, match="guest"):
        vault.write_note("private/x.md", "x", principal="guest")
    with pytest.raises(AccessError):
        vault.move_note(NOTE, "private/moved.md", principal="guest")
    with pytest.raises(AccessError):
        vault.remember("a conclusion", principal="guest")  # memory/ is not the guest's
    assert tree(vault.root) == before
    trashed = vault.delete_note("private/调整方案.md")
    assert vault.trash(principal="guest") == []
    with pytest.raises(NotFoundError):
        vault.restore_note(str(trashed.trash_id), principal="guest")


def test_links_and_backlinks_as_a_principal_sees_them(vault: lore.Vault) -> None:
    owner = vault.links(NOTE)
    assert {link.target: link.path for link in owner.outgoing} == {
        "架构说明": "public/架构说明.md",
        "调整方案": "private/调整方案.md",
    }
    assert {b.path for b in owner.backlinks} == {"public/架构说明.md", "private/调整方案.md"}
    guest = vault.links(NOTE, principal="guest")
    assert {link.target: link.path for link in guest.outgoing} == {
        "架构说明": "public/架构说明.md",
        "调整方案": None,  # a hidden note is a dangling link, nothing more
    }
    assert [b.path for b in guest.backlinks] == ["public/架构说明.md"]
    assert_no_private(str(guest.to_dict()), "links")
    with pytest.raises(NotFoundError) as hidden:
        vault.links("private/调整方案.md", principal="guest")
    with pytest.raises(NotFoundError) as missing:
        vault.links("private/nothing.md", principal="guest")
    assert str(hidden.value).replace("调整方案", "X") == str(missing.value).replace("nothing", "X")


def test_counts_tags_status_and_map_for_a_principal(vault: lore.Vault) -> None:
    status = vault.status(principal="guest")
    assert status.notes == PUBLIC_NOTES and status.db == "" and "/" not in status.vault
    assert vault.status().notes == PUBLIC_NOTES + len(PRIVATE)
    tags = dict(vault.tag_counts(principal="guest"))
    assert tags and "机密" not in tags and "机密" in dict(vault.tag_counts())
    scoped = vault.visible_clusters(principal="guest")
    assert scoped is not None and scoped.notes == PUBLIC_NOTES
    assert all(m.path.startswith("public/") for c in scoped.clusters for m in c.members)
    assert_no_private(repr(scoped), "the interest map")
    assert vault.visible_clusters(principal="nobody").clusters == ()  # type: ignore[union-attr]
    assert vault.check(principal="guest").ok
    with pytest.raises(ConfigError, match="cannot run as a principal"):
        vault.check(principal="guest", fix=True)


def test_tokens_are_hashed_listed_and_revoked(vault: lore.Vault) -> None:
    made = vault.add_token("alice", principal="guest", can_write=True)
    assert made.secret.startswith("lore_") and len(made.secret) > 40
    stored = vault.store.query("SELECT hash FROM tokens WHERE name = 'alice'")[0][0]
    assert made.secret not in stored and stored == hashlib.sha256(made.secret.encode()).hexdigest()
    assert vault.verify_token(made.secret) == made.info
    assert vault.verify_token(made.secret + "x") is None
    assert vault.verify_token("not-a-token") is None
    with pytest.raises(ConfigError, match="exists already"):
        vault.add_token("alice", principal=None)
    with pytest.raises(ConfigError, match="token name"):
        vault.add_token("bad name!", principal=None)
    revoked = vault.revoke_token("alice")
    assert revoked.revoked and vault.verify_token(made.secret) is None
    with pytest.raises(NotFoundError):
        vault.revoke_token("bob")
    vault.rebuild()  # tokens are not derived from the files: a rebuild keeps them
    assert [t.name for t in vault.tokens()] == ["alice"]


def test_note_target_reads_one_way() -> None:
    assert note_target("a/b.md") == "a/b.md"
    assert note_target(".github/notes/x.md", write=False) == ".github/notes/x.md"  # a read
    with pytest.raises(PathError, match="hidden"):
        note_target(".github/notes/x.md")
    with pytest.raises(PathError, match="leave the vault"):
        note_target("../x.md", write=False)
    assert note_target("a/e\u0301.md") == "a/\u00e9.md"  # NFC, as the scan stores it


@pytest.mark.parametrize("planted", [".lore/trash", ".lore/locks"])
def test_planted_links_at_the_trash_and_the_locks(
    vault: lore.Vault, tmp_path: Path, planted: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    link = vault.root / planted
    if link.exists():
        link.rmdir()
    os.symlink(outside, link)
    before = tree(vault.root)
    with pytest.raises(PathError, match="symlink"):
        vault.delete_note(NOTE)
    assert list(outside.iterdir()) == [] and tree(vault.root) == before
    assert vault.trash() == []
