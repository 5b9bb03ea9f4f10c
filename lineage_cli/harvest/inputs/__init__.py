"""What a harvest reads, before any SQL is parsed: SQL files and their encodings, flow manifests, dbt
projects, and the plan that lists the units to analyse.
"""
