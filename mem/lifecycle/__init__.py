"""Lifecycle: the governance policy table and the movers that walk memories between active, cold and archived.

Pure code (no SQL, no I/O): ``policy`` holds the per-layer rules, ``langevin`` (default) and
``decay`` move a memory's radius in the Poincare ball, and :func:`transition` turns a radius plus
the archive rule into a status. ``mem.stages.lifecycle`` feeds them rows from the store.
"""

from __future__ import annotations

import math

from mem.lifecycle.policy import NEVER_ARCHIVED_LAYERS, LayerPolicy, Policy, distance


def archivable(layer: LayerPolicy, *, pinned: bool, protected: bool) -> bool:
    """May policy archive a memory of this layer at all? Never when pinned, protected or of layer 1-2."""
    return layer.archivable and layer.layer not in NEVER_ARCHIVED_LAYERS and not pinned and not protected


def fresh_days(layer: LayerPolicy, policy: Policy) -> float:
    """How long after its last use a memory of this layer stays active whatever the noise.

    It is the time neglect alone (the drift, no noise) takes to carry a new memory from
    ``start_radius`` to ``cold_radius``: exactly when the ``decay`` mover turns it cold. The
    Langevin mover's noise may bring a neglected memory in, but never sends one used this
    recently out to cold (one used every ten days went cold in about 8 % of draws).

    >>> from mem.lifecycle.policy import Policy
    >>> p = Policy()
    >>> round(fresh_days(p.layers[3], p), 1), fresh_days(p.layers[1], p)
    (13.3, inf)
    """
    if layer.decay <= 0:
        return math.inf
    return max(0.0, distance(policy.cold_radius) - distance(policy.start_radius)) / layer.decay


def transition(status: str, radius: float, *, layer: LayerPolicy, pinned: bool, days_unused: float,
               importance: float, policy: Policy, protected: bool = False) -> str:
    """The status a memory should have now. Archived stays archived (only ``mem archive --restore``
    brings it back); pinned is always active; a ``protected`` memory (a protected tag) and layers 1-2
    may go cold but are never archived; cold and active follow the radius both ways.

    >>> from mem.lifecycle.policy import Policy
    >>> p = Policy()
    >>> transition("active", 0.999, layer=p.layers[3], pinned=False, days_unused=40, importance=0.2, policy=p)
    'archived'
    >>> transition("active", 0.999, layer=p.layers[2], pinned=False, days_unused=400, importance=0.0, policy=p)
    'cold'
    >>> transition("cold", 0.999, layer=p.layers[4], pinned=True, days_unused=400, importance=0.0, policy=p)
    'active'
    >>> transition("active", 0.999, layer=p.layers[4], pinned=False, days_unused=400, importance=0.0, policy=p,
    ...            protected=True)
    'cold'
    """
    if status == "archived":
        return "archived"
    if pinned or days_unused < fresh_days(layer, policy):
        return "active"
    if (radius >= policy.archive_radius and archivable(layer, pinned=pinned, protected=protected)
            and layer.archive_after_days is not None
            and days_unused > layer.archive_after_days and importance < layer.archive_below):
        return "archived"
    return "cold" if radius >= policy.cold_radius else "active"
