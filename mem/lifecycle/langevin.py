"""The default mover: Riemannian Langevin dynamics of each memory in the Poincare ball.

A memory is a point in the n-ball with the hyperbolic metric; only its distance from the origin
matters (the dynamics are isotropic), so we store the Euclidean radius ``r`` and integrate the
radial SDE in geodesic distance ``rho = 2 artanh r``. The radial part of Riemannian Langevin
dynamics ``dX = -grad U dt + sqrt(2T) dB`` on hyperbolic n-space is

    d rho = [ T (n-1) coth(rho) - U'(rho) ] dt + sqrt(2T) dW

The first term is the geometry's own volume growth: Brownian motion on hyperbolic space is
transient and escapes to the boundary at speed ``T (n-1)``; that is *neglect*. We set
``T (n-1)`` to the layer's decay rate, so a factual memory drifts outward at ~0.15 geodesic
units a day and an ephemeral one at ~0.40, with noise ``sqrt(2T)`` that shrinks as the dimension
grows. The potential ``U = importance_force * importance * rho`` is a constant inward force for
important memories; each *use* is an impulse ``rho <- rho * exp(-pull)`` toward the origin.
Thresholds on the radius (``cold_radius``, ``archive_radius``) then give the status.

The noise is seeded by (memory id, step time, substep), so the same history replayed at the same
``--now`` instants gives the same radii on every machine.
"""

from __future__ import annotations

import hashlib
import math
import struct

from mem.lifecycle.policy import LayerPolicy, Policy, distance, radius_at

MAX_RHO = 12.0  # r = tanh(6) = 0.999988: far past any threshold, still away from float 1.0
MAX_SUBSTEPS = 64
MIN_RHO = 0.05  # coth is singular at the origin


def gauss(memory_id: str, at: str, index: int) -> float:
    """A standard normal draw that depends only on (memory id, step time, substep index).

    >>> gauss("m1", "2026-01-01T00:00:00Z", 0) == gauss("m1", "2026-01-01T00:00:00Z", 0)
    True
    """
    digest = hashlib.blake2b(f"{memory_id}|{at}|{index}".encode(), digest_size=16).digest()
    a, b = struct.unpack("<QQ", digest)
    u1 = (a + 1) / 18446744073709551617.0  # (0, 1]
    u2 = b / 18446744073709551616.0
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def step(memory_id: str, radius: float, *, uses: int, days: float, importance: float, pinned: bool,
         layer: LayerPolicy, policy: Policy, at: str) -> float:
    """The radius after ``days`` of dynamics that began with ``uses`` new uses; ``at`` seeds the noise.

    >>> from mem.lifecycle.policy import Policy
    >>> p = Policy()
    >>> r = step("m", p.start_radius, uses=0, days=30, importance=0.3, pinned=False, layer=p.layers[3], policy=p, at="t")
    >>> r > p.cold_radius
    True
    >>> step("m", r, uses=5, days=0, importance=0.3, pinned=False, layer=p.layers[3], policy=p, at="t") < p.cold_radius
    True
    """
    rho = distance(radius)
    if uses > 0:
        rho *= math.exp(-policy.pull * uses)
    if pinned or days <= 0:
        return radius_at(rho)  # a pinned memory only ever moves inward
    dim = max(2, policy.dimension)
    temperature = max(0.0, layer.decay) / (dim - 1)
    force = policy.importance_force * min(1.0, max(0.0, importance))
    remaining, index = days, 0
    while remaining > 1e-9 and index < MAX_SUBSTEPS:
        drift = temperature * (dim - 1) / math.tanh(max(rho, MIN_RHO)) - force
        # smaller steps where the drift is steep (near the origin), so Euler-Maruyama stays stable
        h = min(remaining, policy.max_substep_days, 0.25 / max(abs(drift), 1e-9))
        if index == MAX_SUBSTEPS - 1:
            h = remaining
        noise = math.sqrt(2.0 * temperature * h) * gauss(memory_id, at, index) if temperature > 0 else 0.0
        rho = min(MAX_RHO, abs(rho + drift * h + noise))  # reflect at the origin
        remaining -= h
        index += 1
    return radius_at(rho)
