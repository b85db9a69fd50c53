"""Fitted by ``python bench/slot_judge.py --write`` (the studied coding sets' real neighbourhoods,
labelled by their ``meta.supersedes``); do not edit by hand: refit."""
FEATURES = ('cos', 'rank1', 'gap', 'reading', 'marked', 'related', 'bare', 'names_old', 'unrealised', 'cover_o', 'cover_n', 'new_value', 'frame', 'newer_note', 'log_days')
MEAN = (0.595117, 0.542887, -0.00286518, 0.554393, 0.0763598, 0.121862, 0.371339, 0.00575314, 0.0109833, 0.25897, 0.266148, 1.2296, 0.246665, 0.0679916, 3.47917,)
SCALE = (0.0857487, 0.498157, 0.13827, 0.497033, 0.265573, 0.327126, 0.483163, 0.0756309, 0.104224, 0.167012, 0.172566, 0.995335, 0.209714, 0.251732, 1.49544,)
WEIGHTS = (0.254912, 0.211369, 1.03748, 0.178638, 0.278605, 0.110242, -0.264766, 0.0861269, -0.182687, 0.318016, 0.43421, -0.194219, -0.354955, -0.675097, 1.11405,)
BIAS = -2.80885
SUPERSEDE = 0.9415  # the probability at which the fitted pairs' precision reaches 0.9
