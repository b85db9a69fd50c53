"""The alternative mover: plain deterministic decay, no noise and no state.

The geodesic distance from the origin grows linearly with the time since the memory was last
used, at the layer's decay rate: ``rho = rho_start + decay * days_unused``. A use resets the
clock, so in radius terms it jumps back to ``start_radius``. The same thresholds as the Langevin
mover apply; pinned memories stay at the start radius.
"""

from __future__ import annotations

from mem.lifecycle.policy import LayerPolicy, Policy, distance, radius_at


def position(*, days_unused: float, pinned: bool, layer: LayerPolicy, policy: Policy) -> float:
    """The radius of a memory last used ``days_unused`` days ago.

    >>> from mem.lifecycle.policy import Policy
    >>> p = Policy(mover="decay")
    >>> position(days_unused=0, pinned=False, layer=p.layers[3], policy=p) == p.start_radius
    True
    >>> position(days_unused=40, pinned=False, layer=p.layers[3], policy=p) > p.archive_radius
    True
    """
    rho = distance(policy.start_radius)
    if not pinned:
        rho += max(0.0, layer.decay) * max(0.0, days_unused)
    return radius_at(min(rho, 12.0))
