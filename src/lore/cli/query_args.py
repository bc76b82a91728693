"""The arguments of a command that takes free text (search, lookup, context, remember):
a word that starts with one "-" is text, not an option, unless it is one of the
command's options exactly as `--help` lists it.

Click reads "-linux" as the short options -l -i -n… ("No such option '-l'"), and
"-tensorflow" as `-t ensorflow`, a tag filter that silently finds nothing; but "-word"
is how a query excludes a word (issue 12), and it may come first. So before Click parses,
each argument that is not an option spelled out (`-n`, `--limit`, `--limit=5`), an
option's value or a `--word` goes after a `--`, in its place among the words (an unknown
`--word` stays an option: Click names it, with the options it may have meant). An
option's value is given apart (`-n 5`, not `-n5`).
"""

from __future__ import annotations

import click


class QueryCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, split_words(self.params, ctx.help_option_names, args))


def split_words(params: list[click.Parameter], help_names: list[str], args: list[str]) -> list[str]:
    """`args` as options (with their values) first, then `--` and the words in order."""
    takes_value: dict[str, int] = {}  # option spelling -> how many values follow it
    for param in params:
        if isinstance(param, click.Option):
            count = 0 if param.is_flag or param.count else param.nargs
            for name in (*param.opts, *param.secondary_opts):
                takes_value[name] = count
    for name in help_names:
        takes_value[name] = 0
    options: list[str] = []
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            words.extend(args[i + 1 :])
            break
        name, has_value, _value = arg.partition("=")
        if arg in takes_value:
            n = takes_value[arg]
            options.extend(args[i : i + 1 + n])
            i += 1 + n
            continue
        if arg.startswith("--") and (not has_value or name in takes_value):
            options.append(arg)  # --limit=5; an unknown --word is Click's error to report
        else:
            words.append(arg)
        i += 1
    return [*options, "--", *words] if words else options
