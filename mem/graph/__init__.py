"""networkx views over the graph stored in SQLite, built on demand (networkx is imported inside functions).

``views`` builds whole-scope graphs for global jobs (communities, export); local traversals
(neighbours, paths) never come here: they walk the edges table level by level in SQL.
"""
