"""lore clusters build / show: the interest map."""

from __future__ import annotations

import sys
from typing import Any

import click

from . import open_from_options, vault_options


@click.group("clusters")
def clusters_group() -> None:
    """The interest map: the vault's notes clustered by topic, with labels and trends.

    `lore clusters build` clusters and stores the map; `lore clusters show` and
    `lore report` read the stored map (they never recluster). See docs/interest.md.
    """


def _emit_messages(messages: tuple[str, ...]) -> None:
    for message in messages:
        click.echo(f"lore: notice: {message}", err=True)


@clusters_group.command("build")
@click.argument("vault", required=False, type=click.Path())
@click.option(
    "--algo",
    "cluster_algo",
    type=click.Choice(["kmeans++", "hierarchical"]),
    default=None,
    help="Clustering back end [default: kmeans++; LORE_INTEREST_CLUSTER_ALGO].",
)
@click.option(
    "--source",
    type=click.Choice(["auto", "vectors", "lexical"]),
    default=None,
    help="Cluster stored vectors, the notes' words (TF-IDF), or whichever is there (auto).",
)
@click.option("--tag-weight", type=float, default=None, help="Weight of the tag vector [0.75].")
@click.option("--pca/--no-pca", "use_pca", default=None, help="PCA before clustering [on].")
@click.option(
    "--pca-variance",
    "pca_explained_variance_threshold",
    type=float,
    default=None,
    help="Explained variance the PCA keeps [0.95].",
)
@click.option("--min-size", type=int, default=None, help="Smallest cluster kept [5].")
@click.option("--max-clusters", type=int, default=None, help="At most this many clusters [16].")
@click.option(
    "--seed", "kmeans_random_state", type=int, default=None, help="k-means random state [42]."
)
@click.option("--n-init", "kmeans_n_init", type=int, default=None, help="k-means restarts [10].")
@click.option(
    "--max-iter", "kmeans_max_iter", type=int, default=None, help="k-means iterations [300]."
)
@click.option(
    "--merge/--no-merge",
    "enable_post_merge",
    default=None,
    help="k-means++: merge clusters with near centroids [on].",
)
@click.option(
    "--merge-distance", type=float, default=None, help="Cosine distance for --merge [0.07]."
)
@click.option(
    "--merge-alpha",
    type=float,
    default=None,
    help="--merge also needs distance <= this x the median centroid distance [0.40; 0: off].",
)
@click.option(
    "--linkage",
    "hierarchical_linkage",
    type=click.Choice(["average", "complete"]),
    default=None,
    help="Hierarchical linkage [average].",
)
@click.option(
    "--distance-threshold",
    "hierarchical_distance_threshold",
    type=float,
    default=None,
    help="Hierarchical: cosine distance where the tree is cut [0.20].",
)
@click.option(
    "--recent-weeks", type=int, default=None, help="Weeks that count as recent for trends [4]."
)
@click.option(
    "--trend-ratio", type=float, default=None, help="Recent/long-run share for heating [1.5]."
)
@click.option("--lexical-vocab", type=int, default=None, help="TF-IDF terms kept [1024].")
@click.option(
    "--stability-tolerance",
    type=float,
    default=None,
    help="Rebuilds keep the k-means run closest to the last map among runs within this"
    " share of the best inertia [0.01].",
)
@click.option(
    "--llm-labels",
    type=click.Choice(["auto", "on", "off"]),
    default=None,
    help="Let the configured LLM name clusters [auto: when one is configured].",
)
@click.option("--today", default=None, help="The date trends are measured to (YYYY-MM-DD).")
@click.option("--sync/--no-sync", "do_sync", default=True, help="Sync the index first [on].")
@vault_options
def build_cmd(
    vault: str | None,
    today: str | None,
    do_sync: bool,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
    **overrides: Any,
) -> None:
    """Cluster the notes into an interest map and store it.

    Uses the vectors in the index (`lore embed`) or, without them, the notes' words.
    Every option has a LORE_INTEREST_* variable and an [interest] key in
    .lore/config.toml. Cluster ids stay the same across builds when a cluster's notes
    barely change.
    """
    import datetime as dt

    from ..errors import ConfigError
    from ..present.human import ProgressBar
    from ..present.interest import format_map
    from ..present.jsonout import dumps

    day = None
    if today is not None:
        try:
            day = dt.date.fromisoformat(today.strip())
        except ValueError:
            raise ConfigError(f"--today {today!r}: expected a date YYYY-MM-DD") from None
    with open_from_options(vault or vault_opt, db) as opened:
        if do_sync:
            for notice in opened.sync(progress=ProgressBar("indexing")).notices:
                click.echo(f"lore: notice: {notice}", err=True)
        interest = opened.build_clusters(today=day, **overrides)
    if as_json:
        click.echo(dumps(interest.to_dict()))
        return
    _emit_messages(interest.messages)
    click.echo(format_map(interest, color=sys.stdout.isatty()))


@clusters_group.command("show")
@click.argument("cluster_id", required=False, type=int)
@vault_options
def show_cmd(cluster_id: int | None, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Show the stored interest map, or one cluster's notes (by id).

    With --json: the map as `clusters build --json` prints it (built_at, clusters,
    params, ...), or one cluster with its notes in full.
    """
    from ..errors import IndexError_, QueryError
    from ..present.interest import format_cluster, format_map
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        interest = opened.clusters()
        where = opened.db_path
    if interest is None:
        raise IndexError_(f"no interest map in {where} yet", hint="run `lore clusters build`")
    color = sys.stdout.isatty()
    if cluster_id is None:
        if as_json:
            click.echo(dumps(interest.to_dict()))  # the shape `clusters build --json` prints
            return
        _emit_messages(interest.messages)
        click.echo(format_map(interest, color=color))
        return
    cluster = interest.cluster(cluster_id)
    if cluster is None:
        ids = ", ".join(str(c.id) for c in interest.clusters) or "none"
        raise QueryError(f"cluster {cluster_id}: no such cluster in the map (ids: {ids})")
    if as_json:
        click.echo(dumps(cluster.to_page_dict()))
    else:
        click.echo(format_cluster(cluster, color=color))


COMMANDS = [clusters_group]
