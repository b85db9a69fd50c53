"""Fitted by ``python bench/slot_judge.py --write`` (the studied coding sets' real neighbourhoods,
labelled by their ``meta.supersedes``); do not edit by hand: refit."""
FEATURES = ('cos', 'rank1', 'gap', 'reading', 'marked', 'bare', 'unrealised', 'newer_note', 'related', 'names_old', 'cover_o', 'cover_n', 'new_value', 'frame', 'log_days', 'later_near')
MEAN = (0.464017, 0.249959, -0.123806, 0.588618, 0.0887004, 0.366414, 0.0101301, 0.0792291, 0.0707462, 0.0051886, 0.155533, 0.160988, 1.40759, 0.151398, 3.42149, 1.51433,)
SCALE = (0.10242, 0.432989, 0.139512, 0.492084, 0.284311, 0.481824, 0.100137, 0.270096, 0.2564, 0.0718448, 0.142949, 0.148397, 1.02464, 0.16992, 1.44516, 1.71506,)
WEIGHTS = (0.147184, 0.161298, 0.992261, 0.0512061, 0.18047, -0.14976, -0.188961, -0.143202, 0.112569, 0.0836575, 0.425704, 0.372795, -0.0352496, -0.236182, 1.27281, -0.678535,)
BIAS = -4.82809
SUPERSEDE = 0.9028  # the probability at which the fitted pairs' precision reaches 0.9
