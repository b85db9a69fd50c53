"""The governance policy: ONE table of per-layer rules, overridable in the config file.

===== ============== ======= ====== ============================================
layer name           decay   floor  archivable
===== ============== ======= ====== ============================================
1     constitutional 0       5.0    never
2     legislative    0.02    2.0    never
3     factual        0.15    -0.5   yes, importance < 0.45 and > 30 days unused
4     ephemeral      0.40    -2.0   yes, importance < 0.50 and > 14 days unused
===== ============== ======= ====== ============================================

``decay`` is a per-day rate: the outward drift (geodesic units per day) of the Langevin mover and
the slope of the plain decay mover. ``floor`` is the ACT-R activation floor: a memory's activation
never reads below its layer's floor (constitutional memories are always highly active). A memory
is archived only when its layer is archivable, it is not pinned, its radius passed
``archive_radius``, it has not been used for ``archive_after_days`` and its importance is under
``archive_below``. ``pinned`` is orthogonal to the layer: a pinned memory never decays or archives.
A memory with a protected tag (:data:`PROTECTED_TAGS`) is never archived either (it may go cold).

Config (``$XDG_CONFIG_HOME/mem/config.toml``)::

    [lifecycle]
    mover = "decay"            # or "langevin" (default); a top-level lifecycle = "decay" works too
    cold_radius = 0.905
    [lifecycle.factual]        # or [lifecycle.3]
    archive_after_days = 45
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from mem.errors import BadInput

MOVERS = ("langevin", "decay")

# The seed's protected tags: a memory carrying one is never archived by policy (nor absorbed into a
# merge), whatever its layer, and is governed at layer 2 or above. ``person:alice`` counts as ``person``.
PROTECTED_TAGS = frozenset({"correction", "decision", "identity", "emotional_anchor", "commitment", "exact_value",
                            "chain_of_command", "person"})
NEVER_ARCHIVED_LAYERS = (1, 2)  # constitutional and legislative memories are never archived by policy


def is_protected(tags: list[str], kind: str | None = None) -> bool:
    """True when any tag is one of :data:`PROTECTED_TAGS` (case-insensitive; ``name:value`` by its name),
    or the kind is (a ``correction`` or ``commitment`` is protected whatever its tags).

    >>> is_protected(["infra", "Decision"]), is_protected(["person:alice"]), is_protected(["decisions"], "fact")
    (True, True, False)
    >>> is_protected([], "commitment")
    True
    """
    return kind in PROTECTED_TAGS or any(t.lower().partition(":")[0].strip() in PROTECTED_TAGS for t in tags)


@dataclass(frozen=True)
class LayerPolicy:
    layer: int
    name: str
    decay: float  # per day
    floor: float  # ACT-R activation floor
    archivable: bool
    archive_after_days: float | None = None
    archive_below: float = 0.0  # importance under which an old, unused memory may be archived
    actr_decay: float = 0.5  # ACT-R base-level decay exponent d for this layer


LAYERS: dict[int, LayerPolicy] = {
    1: LayerPolicy(1, "constitutional", decay=0.0, floor=5.0, archivable=False, actr_decay=0.1),
    2: LayerPolicy(2, "legislative", decay=0.02, floor=2.0, archivable=False, actr_decay=0.3),
    3: LayerPolicy(3, "factual", decay=0.15, floor=-0.5, archivable=True, archive_after_days=30.0,
                   archive_below=0.45, actr_decay=0.5),
    4: LayerPolicy(4, "ephemeral", decay=0.40, floor=-2.0, archivable=True, archive_after_days=14.0,
                   archive_below=0.50, actr_decay=0.7),
}


@dataclass(frozen=True)
class Policy:
    """Every lifecycle knob; ``Policy()`` is the default table above."""

    layers: Mapping[int, LayerPolicy] = field(default_factory=lambda: dict(LAYERS))
    mover: str = "langevin"
    cold_radius: float = math.tanh(1.5)  # geodesic distance 3.0 from the origin
    archive_radius: float = math.tanh(2.5)  # geodesic distance 5.0
    start_radius: float = math.tanh(0.5)  # where a new (or restored) memory enters: distance 1.0
    pull: float = 0.5  # each use multiplies the geodesic distance by exp(-pull)
    importance_force: float = 0.15  # inward force per unit importance, per day
    dimension: int = 33  # the ball's dimension: sets the noise temperature for a given drift
    max_substep_days: float = 7.0
    min_step_days: float = 1.0 / 24.0  # a memory stepped less than an hour ago is left alone (idempotency)

    def layer(self, layer: int) -> LayerPolicy:
        return self.layers.get(layer) or self.layers[3]

    def to_record(self) -> dict[str, Any]:
        return {
            "mover": self.mover, "cold_radius": round(self.cold_radius, 6), "archive_radius": round(self.archive_radius, 6),
            "layers": {str(k): {f.name: getattr(v, f.name) for f in fields(v)} for k, v in sorted(self.layers.items())},
        }


_NAMES = {p.name: n for n, p in LAYERS.items()}
_LAYER_KEYS = {f.name for f in fields(LayerPolicy)} - {"layer", "name"}
_TOP_KEYS = {"mover", "cold_radius", "archive_radius", "start_radius", "pull", "importance_force", "dimension",
             "max_substep_days", "min_step_days"}


def load_policy(config: Mapping[str, Any]) -> Policy:
    """The policy from a whole config mapping (``Settings.config``): defaults, then ``[lifecycle]``.

    >>> load_policy({"lifecycle": {"factual": {"archive_after_days": 45}}}).layer(3).archive_after_days
    45.0
    >>> load_policy({"lifecycle": "decay"}).mover
    'decay'
    """
    raw = config.get("lifecycle", {})
    if isinstance(raw, str):
        raw = {"mover": raw}
    if not isinstance(raw, Mapping):
        raise BadInput("config: [lifecycle] must be a table")
    layers = dict(LAYERS)
    top: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, Mapping):
            number = _NAMES.get(str(key)) or (int(key) if str(key) in ("1", "2", "3", "4") else None)
            if number is None:
                raise BadInput(f"config: unknown lifecycle layer [lifecycle.{key}]; one of {', '.join(_NAMES)} or 1-4")
            unknown = set(value) - _LAYER_KEYS
            if unknown:
                raise BadInput(f"config: unknown key(s) {', '.join(sorted(unknown))} in [lifecycle.{key}]")
            changes = {k: (bool(v) if k == "archivable" else float(v) if v is not None else None) for k, v in value.items()}
            if changes.get("archivable") and number in NEVER_ARCHIVED_LAYERS:
                raise BadInput(f"config: [lifecycle.{key}] archivable = true: layers 1-2 are never archived by policy "
                               "(archive one memory with 'mem forget ID')")
            layers[number] = replace(layers[number], **changes)
        elif key in ("model", "lifecycle"):
            top["mover"] = value
        elif key in _TOP_KEYS:
            top[key] = value
        else:
            raise BadInput(f"config: unknown key {key!r} in [lifecycle]")
    mover = top.get("mover", "langevin")
    if mover not in MOVERS:
        raise BadInput(f"config: lifecycle mover {mover!r} is not one of {', '.join(MOVERS)}")
    policy = Policy(layers=layers, **{k: (int(v) if k == "dimension" else v if k == "mover" else float(v))
                                      for k, v in top.items()})
    if not 0.0 < policy.cold_radius < policy.archive_radius < 1.0:
        raise BadInput("config: lifecycle needs 0 < cold_radius < archive_radius < 1")
    return policy


def distance(radius: float) -> float:
    """Geodesic (hyperbolic) distance from the origin of a point at Euclidean ``radius`` in the ball."""
    r = min(max(radius, 0.0), 1.0 - 1e-12)
    return 2.0 * math.atanh(r)


def radius_at(rho: float) -> float:
    """Inverse of :func:`distance`."""
    return math.tanh(max(rho, 0.0) / 2.0)
