"""The name channel on shapes of real vaults (issue 12): names written in CamelCase, and the
text of the links that point at a note, which names it as much as its own title does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lore

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def _plugins(n: int) -> dict[str, str]:
    """n plugin notes: "plugin" is a word every note of the vault holds."""
    return {
        f"Plugins/p{i:02d}.md": f"# Helper {i}\n\nPlugin ID: `helper-{i}`. A plugin for task {i}.\n"
        for i in range(n)
    }


def test_a_camel_case_name_is_named_by_its_words(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """ "julia plot plugin" is the plugin called JuliaPlots, not the category note whose
    alias holds two of the three words ("Plugins for plotting")."""
    files = _plugins(12)
    files["Plugins/juliaplots.md"] = (
        "---\naliases: [JuliaPlots]\n---\n# JuliaPlots\n\nPlugin ID: `juliaplots`.\n\n"
        "Plot a function graph inside of your notes using Julia.\n"
    )
    files["Categories/Plugins to create charts.md"] = (
        "---\naliases: [Plugins for plotting]\n---\n# Plugins to create charts\n\n"
        "- [[charts]]: a plugin to plot charts.\n- [[graphs]]: a plugin to plot graphs.\n"
    )
    vault = open_vault(make_vault(files))
    vault.sync()
    assert vault.search("julia plot plugin", limit=3)[0].path == "Plugins/juliaplots.md"
    # The name as written still names it.
    assert vault.search("JuliaPlots", limit=3)[0].path == "Plugins/juliaplots.md"
