"""Generate src/lore/derive/fold_data.py from OpenCC's dictionaries (Traditional → Simplified).

    .venv/bin/python tools/fold_data.py            # rewrite the module
    .venv/bin/python tools/fold_data.py --check    # exit 1 when it differs (tests run this)

lore folds Chinese at the token level (lore.derive.fold). Its tables are generated once from
the `opencc` package's data and shipped as plain strings, so a search process never loads
OpenCC (its converters take ~30 ms to build, its dictionaries are binary) and an upgrade of
the opencc package can never change what a vault's index holds without a new derivation
version. The OpenCC data is Apache-2.0 (see the generated module's header).

Tables:
- CHARS: one Traditional (or Taiwan / Hong Kong variant) character → one Simplified one,
  closed under composition (folding a folded character changes nothing). Taiwan and Hong
  Kong variant maps are applied only to characters Simplified text does not use itself
  (TWVariantsRev maps 著 → 着, which would fold the 著 of Simplified 著名).
- FIXES: phrases whose character folding is not their Simplified spelling (憑藉 → 凭借),
  same length, rewritten in the token stream itself.
- REGIONAL: Taiwan and Hong Kong words that are other words on the mainland (軟體 → 软件,
  記憶體 → 内存, 資訊 → 信息), kept as alternatives beside the text (lore.derive.fold).
- TRAD_ONLY / SIMP_ONLY: characters only one script uses, to tell a run's script.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "src" / "lore" / "derive" / "fold_data.py"
DICTS = (
    "TSCharacters",
    "TSPhrases",
    "STCharacters",
    "TWVariantsRev",
    "HKVariantsRev",
    "TWVariantsRevPhrases",
    "HKVariantsRevPhrases",
    "TWPhrasesRev",
    "HKPhrasesRev",
    "CJK_Compatibility_Ideographs",
)
LINE = 40  # characters of table per source line


def opencc_dicts() -> tuple[str, dict[str, list[tuple[str, list[str]]]]]:
    """(opencc version, name → [(key, values)]) read through the package's own opencc_dict."""
    import opencc

    clib = Path(opencc.__file__).parent / "clib"
    tool = clib / "bin" / "opencc_dict"
    share = clib / "share" / "opencc"
    out: dict[str, list[tuple[str, list[str]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in DICTS:
            text = Path(tmp) / f"{name}.txt"
            subprocess.run(
                [str(tool), "-i", str(share / f"{name}.ocd2"), "-o", str(text)]
                + ["-f", "ocd2", "-t", "text"],
                check=True,
            )
            rows = []
            for line in text.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    key, values = line.split("\t")
                    rows.append((key, values.split(" ")))
            out[name] = rows
    return str(opencc.__version__), out


def build(dicts: dict[str, list[tuple[str, list[str]]]]) -> dict[str, str]:
    import unicodedata

    def first(name: str) -> dict[str, str]:
        return {k: v[0] for k, v in dicts[name] if len(k) == 1 and len(v[0]) == 1}

    ts = first("TSCharacters")
    st = {k: v for k, v in dicts["STCharacters"] if len(k) == 1}
    variants = {**first("HKVariantsRev"), **first("TWVariantsRev")}
    # Characters Simplified text writes: every Simplified form, and those it keeps as they are.
    simplified_uses = set(ts.values()) | set(st)

    def fold_char(c: str) -> str:
        c = unicodedata.normalize("NFKC", c)
        for _ in range(8):  # a fixed point within a few steps; the loop bounds a cycle
            step = c if c in simplified_uses else variants.get(c, c)
            step = ts.get(step, step)
            if step == c:
                break
            c = step
        return c

    compat = [k for k, _ in dicts["CJK_Compatibility_Ideographs"]]
    chars = {c: fold_char(c) for c in sorted({*ts, *variants, *compat})}
    chars = {c: f for c, f in chars.items() if c != f}
    assert all(fold_char(f) == f for f in chars.values()), "character folding is not closed"

    def fold_text(text: str) -> str:
        return "".join(chars.get(c, c) for c in unicodedata.normalize("NFKC", text))

    fixes: dict[str, str] = {}
    for name in ("TSPhrases", "TWVariantsRevPhrases", "HKVariantsRevPhrases"):
        for key, values in dicts[name]:
            k, v = fold_text(key), fold_text(values[0])
            if k != v and len(k) == len(v) and len(k) > 1:
                fixes.setdefault(k, v)

    def fold_phrase(text: str) -> str:
        folded = fold_text(text)
        for k, v in sorted(fixes.items(), key=lambda kv: -len(kv[0])):
            folded = folded.replace(k, v)
        return folded

    regional: dict[str, str] = {}
    for name in ("TWPhrasesRev", "HKPhrasesRev"):
        for key, values in dicts[name]:
            k, v = fold_phrase(key), fold_phrase(values[0])
            cjk = all(unicodedata.category(c) == "Lo" for c in k + v)
            if k != v and len(k) > 1 and cjk:
                regional.setdefault(k, v)
    trad_only = sorted(c for c, f in chars.items() if c not in simplified_uses and c in ts)
    simp_only = sorted(c for c, vs in st.items() if vs[0] != c and c not in ts and c not in chars)
    return {
        "CHARS_FROM": "".join(chars),
        "CHARS_TO": "".join(chars.values()),
        "FIXES": "".join(f"{k}={v}|" for k, v in sorted(fixes.items())),
        "REGIONAL": "".join(f"{k}={v}|" for k, v in sorted(regional.items())),
        "TRAD_ONLY": "".join(trad_only),
        "SIMP_ONLY": "".join(simp_only),
    }


def render(version: str, tables: dict[str, str]) -> str:
    lines = [
        f'"""Generated by tools/fold_data.py from OpenCC {version} (Apache-2.0,',
        "https://github.com/BYVoid/OpenCC): its TSCharacters, TSPhrases, STCharacters, "
        "TW/HK variant",
        "and TWPhrasesRev/HKPhrasesRev dictionaries. Do not edit: run the tool.",
        '"""',
        "",
        f'OPENCC_VERSION = "{version}"',
    ]
    for name, value in tables.items():
        lines.append(f"{name} = (")
        for i in range(0, len(value), LINE):
            lines.append(f'    "{value[i : i + LINE]}"')
        lines.append(")")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    version, dicts = opencc_dicts()
    text = render(version, build(dicts))
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(REPO)} is out of date: run tools/fold_data.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
