"""Fitted by ``python bench/slot_judge.py --write`` (the studied coding sets' real neighbourhoods,
labelled by their ``meta.supersedes``); do not edit by hand: refit."""
FEATURES = ('cos', 'rank1', 'gap', 'reading', 'marked', 'bare', 'unrealised', 'newer_note', 'related', 'names_old', 'cover_o', 'cover_n', 'new_value', 'frame', 'log_days')
MEAN = (0.463435, 0.245338, -0.125184, 0.588611, 0.0897027, 0.364858, 0.0102469, 0.0801277, 0.0705527, 0.00520746, 0.15539, 0.159815, 1.40711, 0.151304, 3.41072,)
SCALE = (0.101885, 0.430288, 0.139029, 0.492085, 0.285755, 0.48139, 0.100707, 0.271491, 0.256076, 0.0719746, 0.143006, 0.147354, 1.02406, 0.170351, 1.44777,)
WEIGHTS = (0.226099, 0.359501, 0.984265, 0.0578482, 0.189896, -0.178815, -0.192964, -0.142598, 0.117342, 0.0847057, 0.418602, 0.352327, -0.0613339, -0.214239, 1.14446,)
BIAS = -4.76391
SUPERSEDE = 0.949  # the probability at which the fitted pairs' precision reaches 0.9
