"""Pipeline stages: take a Context and records, return records. No printing, no env, no exit."""
