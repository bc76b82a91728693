from lore.cli import run

run()
