"""``lineage check``: the CI gate on changed SQL.

``git.py`` finds the changed files and their base versions, ``diff.py`` analyses both versions and
compares them, ``rules.py`` turns the comparison and the stored graph into findings, ``report.py``
prints the findings in every format, and ``run.py`` ties them together for the command line.
"""
