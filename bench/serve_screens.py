"""Screenshots of every page of `lore serve`, in English and Chinese, for a person to look
at: the example vault (examples/vault) indexed and clustered in a temporary folder, served
on 127.0.0.1, photographed by the system Chromium through Playwright.

    .venv/bin/python -m bench.serve_screens          # → bench/results/screens/*.png

Needs `/usr/bin/chromium` (Debian: apt-get install chromium fonts-noto-cjk).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

import lore
from lore.serve.background import Background
from lore.serve.options import ServeOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "vault"
OUT = ROOT / "bench" / "results" / "screens"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def prepare(folder: Path) -> Path:
    vault = folder / "vault"
    shutil.copytree(EXAMPLE, vault)
    with lore.open(vault) as opened:
        opened.sync()
        opened.build_clusters(min_size=3)
    return vault


def note_with_backlinks(vault: Path) -> str:
    with lore.open(vault) as opened:
        for (path,) in opened.store.query("SELECT path FROM notes ORDER BY path"):
            if opened.links(str(path)).backlinks:
                return str(path)
    raise SystemExit("no note of the example vault has backlinks")


def shoot(url: str, out: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    note = note_with_backlinks(VAULT)
    pages = {
        "search-zh": ("/search?q=" + quote("客户去重规则 v2") + "&lang=zh", "zh-CN"),
        "search-en": ("/search?q=" + quote("reciprocal rank fusion") + "&lang=en", "en-US"),
        "search-empty": ("/search?q=qqzzxx&lang=zh", "zh-CN"),
        "note-zh": ("/note/" + quote(note) + "?q=" + quote("数据") + "&lang=zh", "zh-CN"),
        "map-en": ("/map?lang=en", "en-US"),
        "map-zh": ("/map?lang=zh", "zh-CN"),
        "memory-zh": ("/memory?lang=zh", "zh-CN"),
        "status-en": ("/status?lang=en", "en-US"),
    }
    written = []
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        page = context.new_page()
        for name, (path, _locale) in pages.items():
            page.goto(url + path)
            page.wait_for_load_state("networkidle")
            target = out / f"{name}.png"
            page.screenshot(path=str(target), full_page=True)
            written.append(str(target.relative_to(ROOT)))
        context.close()
    return written


def main() -> None:
    global VAULT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        VAULT = prepare(Path(folder))
        options = ServeOptions(port=0, allow_write=True, watch="off")
        with Background(VAULT, options) as server:
            for path in shoot(server.url, args.out):
                print(path)


VAULT = EXAMPLE

if __name__ == "__main__":
    main()
