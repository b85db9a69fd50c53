"""Fitted by ``python bench/slot_judge.py --write`` (the studied coding sets' real neighbourhoods,
labelled by their ``meta.supersedes``); do not edit by hand: refit."""
FEATURES = ('cos', 'rank1', 'gap', 'kind_correction', 'reading', 'marked', 'related', 'bare', 'names_old', 'unrealised', 'own_plain_o', 'own_plain_n', 'lead_swap', 'cover_o', 'cover_n', 'old_value_lost', 'new_value', 'swap', 'shared_value', 'frame', 'len_ratio', 'older_note', 'newer_note', 'log_days')
MEAN = (0.595117, 0.542887, -0.00286518, 0.00679916, 0.554393, 0.0763598, 0.121862, 0.371339, 0.00575314, 0.0109833, 3.89644, 3.83944, 0.0925732, 0.25897, 0.266148, 1.33264, 1.2296, 0.587343, 0.450837, 0.246665, -0.0354863, 0.0512552, 0.0679916, 3.47917,)
SCALE = (0.0857487, 0.498157, 0.13827, 0.0821762, 0.497033, 0.265573, 0.327126, 0.483163, 0.0756309, 0.104224, 1.34396, 1.39966, 0.289833, 0.167012, 0.172566, 1.00949, 0.995335, 0.492312, 0.612534, 0.209714, 0.468434, 0.220518, 0.251732, 1.49544,)
WEIGHTS = (0.211765, 0.234575, 1.04384, 0.0622769, 0.18258, 0.261268, 0.141418, -0.288662, 0.0940164, -0.171111, 0.0770232, -0.322681, 0.15332, 0.36816, 0.147536, 0.0771991, -0.338285, 0.026297, 0.135039, -0.225317, 0.0822764, -0.0199477, -0.668075, 1.10206,)
BIAS = -2.83674
SUPERSEDE = 0.8295  # the probability at which the fitted pairs' precision reaches 0.9
