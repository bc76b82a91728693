"""Interest-map settings: the `[interest]` table of `<vault>/.lore/config.toml`, the
`LORE_INTEREST_*` environment and the flags of `lore clusters build`.

Precedence as everywhere in lore: defaults < config file < environment < flags (keyword
arguments of `Vault.build_clusters`). Each setting's variable is `LORE_INTEREST_` + its
name in capitals; the defaults are seed 000's. Every number has a range (docs/interest.md),
so that no setting can make a build run without end:

    [interest]
    cluster_algo = "kmeans++"                  # kmeans++ | hierarchical
    tag_weight = 0.75                          # interest_vec = L2((1-w)·L2(summary) + w·L2(tags))
    use_pca = true                             # PCA for clustering only
    pca_explained_variance_threshold = 0.95
    min_size = 5                               # smaller clusters are reassigned
    max_clusters = 16
    kmeans_random_state = 42
    kmeans_n_init = 10
    kmeans_max_iter = 300
    stability_tolerance = 0.01                 # rebuilds: near-best runs may keep the old map
    enable_post_merge = true                   # k-means++ only: merge near centroids
    merge_distance = 0.07                      # cosine distance between centroids
    merge_alpha = 0.40                         # ... and at most this x their median distance
    hierarchical_linkage = "average"           # average | complete
    hierarchical_distance_threshold = 0.20     # cosine distance where the tree is cut
    recent_weeks = 4                           # the "recent" window of the trends
    trend_ratio = 1.5                          # recent/long-run share for heating (1/x: cooling)
    source = "auto"                            # auto | vectors | lexical
    lexical_vocab = 1024                       # TF-IDF terms kept (lexical mode)
    llm_labels = "auto"                        # auto | on | off: let a configured LLM name clusters
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..config import config_table, parse_flag, read_config
from ..errors import ConfigError

ENV_PREFIX = "LORE_INTEREST_"


@dataclass(frozen=True)
class InterestSettings:
    cluster_algo: str = "kmeans++"
    tag_weight: float = 0.75
    use_pca: bool = True
    pca_explained_variance_threshold: float = 0.95
    min_size: int = 5
    max_clusters: int = 16
    kmeans_random_state: int = 42
    kmeans_n_init: int = 10
    kmeans_max_iter: int = 300
    stability_tolerance: float = 0.01  # relative inertia (lore.interest.kmeans.kmeans)
    enable_post_merge: bool = True
    merge_distance: float = 0.07
    merge_alpha: float = 0.40  # 0: no relative cap (see lore.interest.cluster.merge_threshold)
    hierarchical_linkage: str = "average"
    hierarchical_distance_threshold: float = 0.20
    recent_weeks: int = 4
    trend_ratio: float = 1.5
    source: str = "auto"
    lexical_vocab: int = 1024
    llm_labels: str = "auto"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _choice(*allowed: str) -> Any:
    def check(value: Any) -> str:
        text = str(value).strip().lower()
        if text == "kmeans":
            text = "kmeans++"
        if text not in allowed:
            raise ValueError(f"use one of {', '.join(allowed)}")
        return text

    return check


def _int_in(low: int, high: int) -> Any:
    def check(value: Any) -> int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError("must be a whole number")
        number = int(value)
        if not low <= number <= high:
            raise ValueError(f"must be from {low:,} to {high:,}")
        return number

    return check


def _float_in(low: float, high: float, *, open_low: bool = False) -> Any:
    def check(value: Any) -> float:
        number = float(value)
        if not (low < number if open_low else low <= number) or not number <= high:
            bracket = "(" if open_low else "["
            raise ValueError(f"must be in {bracket}{low}, {high}]")
        return number

    return check


_COERCE: dict[str, Any] = {
    "cluster_algo": _choice("kmeans++", "hierarchical"),
    "tag_weight": _float_in(0.0, 1.0),
    "use_pca": parse_flag,
    "pca_explained_variance_threshold": _float_in(0.0, 1.0, open_low=True),
    "min_size": _int_in(1, 100_000),
    "max_clusters": _int_in(1, 256),
    "kmeans_random_state": _int_in(0, 2**32 - 1),
    "kmeans_n_init": _int_in(1, 100),
    "kmeans_max_iter": _int_in(1, 10_000),
    "stability_tolerance": _float_in(0.0, 1.0),
    "enable_post_merge": parse_flag,
    "merge_distance": _float_in(0.0, 2.0),
    "merge_alpha": _float_in(0.0, 10.0),
    "hierarchical_linkage": _choice("average", "complete"),
    "hierarchical_distance_threshold": _float_in(0.0, 2.0),
    "recent_weeks": _int_in(1, 520),
    "trend_ratio": _float_in(1.0, 100.0),
    "source": _choice("auto", "vectors", "lexical"),
    "lexical_vocab": _int_in(16, 65_536),
    "llm_labels": _choice("auto", "on", "off"),
}


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def coerce(name: str, value: Any, origin: str) -> Any:
    """`value` checked and converted for setting `name`; ConfigError naming `origin`."""
    check = _COERCE.get(name)
    if check is None:
        raise ConfigError(
            f"{origin}: unknown interest setting {name!r}",
            hint=f"known: {', '.join(sorted(_COERCE))}",
        )
    try:
        return check(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: invalid value {value!r} for {name}: {exc}") from None


def load_interest_settings(vault_root: Path, **overrides: Any) -> InterestSettings:
    """Defaults < `[interest]` in .lore/config.toml < LORE_INTEREST_* < `overrides` (None
    means "not given")."""
    settings = InterestSettings()
    config_path, data = read_config(vault_root)
    if data is not None:
        for key, value in config_table(config_path, data, "interest").items():
            settings = replace(settings, **{key: coerce(key, value, f"{config_path} [interest]")})
    for name in (f.name for f in fields(InterestSettings)):
        raw = os.environ.get(env_name(name))
        if raw:
            settings = replace(settings, **{name: coerce(name, raw, env_name(name))})
    return with_overrides(settings, overrides)


def with_overrides(settings: InterestSettings, overrides: Mapping[str, Any]) -> InterestSettings:
    """`settings` with `overrides` (name → value; None: not given), each checked."""
    for key, value in overrides.items():
        if value is not None:
            settings = replace(settings, **{key: coerce(key, value, key)})
    return settings
