"""What the walk tests share: the warehouse's golden lineage, closures over it, answers as sets, random stores."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from lineage_cli.model import NodeKind
from lineage_cli.store.arrays import GraphArrays
from lineage_cli.store.layout import pack_attributes
from lineage_cli.store.reader import Store, open_store
from lineage_cli.store.writer import write_store
from tests.conftest import WAREHOUSE

STATEMENTS = "fixtures/sql/warehouse/"  # statement nodes are named by their file relative to the repository
OOZIE = "fixtures/sql/oozie/"


def golden_edges() -> set[tuple[str, str]]:
    lines = (WAREHOUSE / "expected_table_edges.txt").read_text().splitlines()
    return {tuple(line.split(" -> ")) for line in lines if line and not line.startswith("#")}


def golden_statements(folder: Path, prefix: str) -> dict[str, tuple[set[str], set[str]]]:
    """statement node -> (targets, sources), from a fixture's expected_statements.txt."""
    statements = {}
    for line in (folder / "expected_statements.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            node, rest = line.split(" ", 1)
            targets, sources = rest.split(" <- ")
            statements[prefix + node] = (set(targets.split(", ")), set(sources.split(", ")))
    return statements


def closure(start: str, edges: set[tuple[str, str]], up: bool) -> set[str]:
    following: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        following[target if up else source].add(source if up else target)
    found, pending = {start}, [start]
    while pending:
        for node in following[pending.pop()] - found:
            found.add(node)
            pending.append(node)
    return found


def branchless(name: str) -> str:
    return re.sub(r"#\d+$", "", name)


def nodes(result) -> set[tuple[str, str]]:
    return {(n.name, n.kind) for n in result.nodes}


def edges(result) -> set[tuple[str, str, str]]:
    return {(e.source, e.target, e.type) for e in result.edges}


# rpt.v_sales_weekly.revenue_usd = SUM(v.revenue_usd) over rpt.v_sales_daily, whose revenue_usd is
# mart.sales_daily's; below that, the chain the README shows for mart.sales_daily.revenue_usd.
REVENUE_UPSTREAM = {
    ("rpt.v_sales_daily.revenue_usd", "rpt.v_sales_weekly.revenue_usd", ("AGGREGATION",)),
    ("mart.sales_daily.revenue_usd", "rpt.v_sales_daily.revenue_usd", ("IDENTITY",)),
    ("dwh.fct_sales.net_amount_usd", "mart.sales_daily.revenue_usd", ("AGGREGATION",)),
    ("dwh.fct_web_session.revenue", "mart.sales_daily.revenue_usd", ("AGGREGATION",)),
    ("ods.fx_rate_daily.rate_to_usd", "dwh.fct_sales.net_amount_usd", ("TRANSFORMATION",)),
    ("ods.sales_line.net_amount", "dwh.fct_sales.net_amount_usd", ("TRANSFORMATION",)),
    ("stg.fx_rates.rate_to_usd", "ods.fx_rate_daily.rate_to_usd", ("TRANSFORMATION",)),
    ("stg.pos_sales_line.discount_amount", "ods.sales_line.net_amount", ("TRANSFORMATION",)),
    ("stg.pos_sales_line.quantity", "ods.sales_line.net_amount", ("TRANSFORMATION",)),
    ("stg.pos_sales_line.unit_price", "ods.sales_line.net_amount", ("TRANSFORMATION",)),
    ("ods.web_session.revenue", "dwh.fct_web_session.revenue", ("IDENTITY",)),
    ("ods.web_event.revenue", "ods.web_session.revenue", ("AGGREGATION",)),
    ("stg.web_clickstream.events", "ods.web_event.revenue", ("TRANSFORMATION",)),
}
# What else shapes that value: window keys (LAST_VALUE(...) OVER (PARTITION BY currency ORDER BY date)) and a CASE
# condition (SUM(CASE WHEN event_type = 'purchase' ...)), predicate edges onto the column, and their own upstream.
REVENUE_SHAPING = {
    ("stg.fx_rates.currency_code", "ods.fx_rate_daily.rate_to_usd", ("WINDOW",)),
    ("stg.calendar.calendar_date", "ods.fx_rate_daily.rate_to_usd", ("WINDOW",)),
    ("ods.web_event.event_type", "ods.web_session.revenue", ("CONDITIONAL",)),
    ("stg.web_clickstream.events", "ods.web_event.event_type", ("TRANSFORMATION",)),
}


def write_graph(path: Path, kinds: list[NodeKind], edges: list[tuple[int, int, int, int]]) -> Store:
    """Nodes named in id order with ``kinds``; transformations get a file and line."""
    nodes, count = len(kinds), len(edges)
    steps = np.array([k == NodeKind.TRANSFORMATION for k in kinds])
    arrays = GraphArrays(
        names=[f"n{i:04d}" for i in range(nodes)],
        kinds=np.array(kinds, dtype="u1"),
        containers=np.full(nodes, -1, dtype="<i4"),
        node_file=np.where(steps, 0, -1).astype("<i4"),
        node_line=np.arange(nodes, dtype="<i4"),
        files=["etl/x.sql"],
        sources=np.array([s % nodes for s, _, _, _ in edges], dtype="<i4").reshape(count),
        targets=np.array([t % nodes for _, t, _, _ in edges], dtype="<i4").reshape(count),
        attributes=np.array([pack_attributes(k, f) for _, _, k, f in edges], dtype="<u2").reshape(count),
        statements=np.full(count, -1, dtype="<i4"),
        flags=np.zeros(nodes, dtype="u1"),
    )
    write_store(arrays, path, {})
    return open_store(path)
