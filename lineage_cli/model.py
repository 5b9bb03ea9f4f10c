"""The lineage graph vocabulary shared by every pipeline stage.

Node kinds, edge types, edge subtypes and the in-memory ``Graph`` that harvest builds
and the store writer serialises.  Plain Python only: the query path imports this module,
so it must stay free of sqlglot and numpy.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class NodeKind(IntEnum):
    """What a node stands for.  Values are stored on disk: append only."""

    TABLE = 1
    VIEW = 2
    COLUMN = 3
    TRANSFORMATION = 4
    MODULE = 5
    WORKFLOW = 6
    PARAMETERIZED = 7  # a dataset whose name keeps a template placeholder no value was given for

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def is_dataset(self) -> bool:
        return self in (NodeKind.TABLE, NodeKind.VIEW, NodeKind.PARAMETERIZED)


class EdgeType(IntEnum):
    """Typed edges.  Values are stored on disk: append only.

    READ and WRITE form the table flow ``dataset -> transformation -> dataset``; FLOW is a
    direct ``dataset -> dataset`` edge from imported lineage; CONTAINS links a table to its
    columns; PROJECTION and PREDICATE are column lineage (``column -> column`` and
    ``column -> table``, and a CONDITIONAL / WINDOW predicate also ``column -> column``: the
    condition or window key that shapes the column's value).  MEMBER links a transformation to its
    module and a module to its workflow (flow manifests); DEFAULT links a parameterized dataset (or
    column) to the real one its placeholder's default value names.
    """

    READ = 1
    WRITE = 2
    CONTAINS = 3
    PROJECTION = 4
    PREDICATE = 5
    FLOW = 6  # dataset -> dataset with no statement in between (imported lineage)
    COLUMN_WRITE = 7  # transformation -> each column it writes: ties predicates to the columns they gate
    MEMBER = 8  # transformation -> module -> workflow: rolls lineage up to a flow's steps
    DEFAULT = 9  # parameterized node -> the real node its placeholder's default points to

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def bit(self) -> int:
        return 1 << self.value


class Subtype(IntEnum):
    """Edge flags as bit positions, so several subtypes of one pair fold into one edge.

    Stored above the 4 type bits of a 16-bit attribute (``store/layout.py``): 12 bits, 0 to 11; APPROXIMATE (12)
    is an answer's only.
    """

    IDENTITY = 0
    TRANSFORMATION = 1
    TRANSFORMATION_MASKING = 2
    AGGREGATION = 3
    AGGREGATION_MASKING = 4
    FILTER = 5
    JOIN = 6
    GROUP_BY = 7
    SORT = 8
    WINDOW = 9
    CONDITIONAL = 10
    DECLARED = 11  # a READ / WRITE a flow manifest or a dbt manifest declared, not parsed from SQL
    # Never stored in an edge (its bit is past the 12): marks an answer's edge that only statements read
    # approximately give (a statement that did not parse: the store flags its transformation node, ``NodeFlag``)
    APPROXIMATE = 12

    @property
    def bit(self) -> int:
        return 1 << self.value


class NodeFlag(IntEnum):
    """Facts about a node beyond its kind, as bit positions of its byte in the store's ``node_flags``.  Values are
    stored on disk: append only."""

    APPROXIMATE = 0  # a transformation whose statement did not parse: its tables were read from its tokens

    @property
    def bit(self) -> int:
        return 1 << self.value


PROJECTION_SUBTYPES = (
    Subtype.IDENTITY,
    Subtype.TRANSFORMATION,
    Subtype.TRANSFORMATION_MASKING,
    Subtype.AGGREGATION,
    Subtype.AGGREGATION_MASKING,
)
PREDICATE_SUBTYPES = (
    Subtype.FILTER,
    Subtype.JOIN,
    Subtype.GROUP_BY,
    Subtype.SORT,
    Subtype.WINDOW,
    Subtype.CONDITIONAL,
)


def schema_of(name: str, kind: NodeKind) -> str | None:
    """The schema of a dataset or a column: its name without the table (and column) part.

    A file location (a path, a URI, a stage) is a dataset in no schema.

    >>> schema_of("dwh.sales", NodeKind.TABLE), schema_of("db.dwh.sales.id", NodeKind.COLUMN)
    ('dwh', 'db.dwh')
    >>> schema_of("sales", NodeKind.VIEW), schema_of("etl/x.sql:3", NodeKind.TRANSFORMATION)
    (None, None)
    >>> schema_of("s3://bucket/v1.2/out/", NodeKind.TABLE), schema_of("/data/in.csv", NodeKind.TABLE)
    (None, None)
    """
    if kind is NodeKind.COLUMN:
        name = name.rpartition(".")[0]
    elif not kind.is_dataset:
        return None
    if _is_location(name):
        return None
    return name.rpartition(".")[0] or None


def _is_location(name: str) -> bool:
    """Whether a dataset name is a file location (``s3://...``, ``/data/...``, ``@stage/...``), not a table.

    >>> _is_location("hdfs://nn/out"), _is_location("@stage/in/"), _is_location("dwh.sales")
    (True, True, False)
    """
    return "://" in name or name.startswith(("/", "@"))


MAX_EXPRESSION = 200  # characters kept of a column's SQL expression, the ellipsis included


def bounded_expression(text: str) -> str:
    """A column's SQL expression as the store keeps it: at most ``MAX_EXPRESSION`` characters, cut with an ellipsis.

    >>> bounded_expression("a + b"), len(bounded_expression("x" * 500)), bounded_expression("x" * 500)[-2:]
    ('a + b', 200, 'x…')
    """
    return text if len(text) <= MAX_EXPRESSION else text[: MAX_EXPRESSION - 1] + "…"


MAX_SQL_BYTES = 64 * 1024  # UTF-8 bytes kept of a statement's SQL text, the marker included
SQL_CUT_MARKER = "\n-- [lineage: statement text cut at 64 KiB]"


def bounded_sql(text: str) -> str:
    """A statement's SQL text as the store keeps it: at most ``MAX_SQL_BYTES`` of UTF-8, cut (at a character's
    boundary) with ``SQL_CUT_MARKER`` after it: a generated statement of megabytes costs its text, nothing else.

    >>> bounded_sql("SELECT 1"), len(bounded_sql("x" * 100_000).encode()) <= MAX_SQL_BYTES
    ('SELECT 1', True)
    >>> bounded_sql("é" * 40_000).endswith(SQL_CUT_MARKER)
    True
    """
    if len(text) <= MAX_SQL_BYTES // 4 or len(encoded := text.encode()) <= MAX_SQL_BYTES:
        return text  # (a character is at most 4 bytes: most statements need no encoding to know)
    kept = encoded[: MAX_SQL_BYTES - len(SQL_CUT_MARKER.encode())].decode("utf-8", errors="ignore")
    return kept + SQL_CUT_MARKER


def subtypes_from_flags(flags: int) -> list[str]:
    """Names of the subtypes set in ``flags``, in declaration order.

    >>> subtypes_from_flags(Subtype.FILTER.bit | Subtype.JOIN.bit)
    ['FILTER', 'JOIN']
    """
    return [s.name for s in Subtype if flags & s.bit]


# NamedTuples and a plain class, not dataclasses: every query imports this module, and each dataclass
# costs its start-up about 1.5 ms (plus 1.6 ms for importing dataclasses).
class Provenance(NamedTuple):
    """Where a transformation came from."""

    file: str
    line: int


EdgeKey = tuple[str, str, EdgeType, str | None]


class Graph:
    """A mutable lineage graph keyed by node name.

    Node names are unique: datasets are ``schema.table``, columns ``schema.table.column``,
    transformations ``file:line`` (with ``#n`` when a line holds several statements).
    Edges are keyed by ``(source, target, type, statement)``, where ``statement`` is the
    transformation node the edge came from (None when no statement made it); subtype flags
    of one key are OR-ed together.  ``flags`` holds the ``NodeFlag`` bits of the nodes that have any;
    ``expressions`` the SQL expression a transformation writes a column with, by (transformation, column);
    ``sql`` the SQL text of the statement a transformation came from and its dialect, by transformation.
    """

    __slots__ = ("kinds", "containers", "provenance", "edges", "flags", "expressions", "sql")

    def __init__(
        self,
        kinds: dict[str, NodeKind] | None = None,
        containers: dict[str, str] | None = None,
        provenance: dict[str, Provenance] | None = None,
        edges: dict[EdgeKey, int] | None = None,
        flags: dict[str, int] | None = None,
        expressions: dict[tuple[str, str], str] | None = None,
        sql: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.kinds: dict[str, NodeKind] = {} if kinds is None else kinds
        self.containers: dict[str, str] = {} if containers is None else containers
        self.provenance: dict[str, Provenance] = {} if provenance is None else provenance
        self.edges: dict[EdgeKey, int] = {} if edges is None else edges
        self.flags: dict[str, int] = {} if flags is None else flags
        self.expressions: dict[tuple[str, str], str] = {} if expressions is None else expressions
        self.sql: dict[str, tuple[str, str]] = {} if sql is None else sql  # (text, dialect)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        mine = (self.kinds, self.containers, self.provenance, self.edges, self.flags, self.expressions, self.sql)
        return mine == (
            other.kinds,
            other.containers,
            other.provenance,
            other.edges,
            other.flags,
            other.expressions,
            other.sql,
        )

    __hash__ = None  # type: ignore[assignment] - mutable

    def __repr__(self) -> str:
        return f"Graph({len(self.kinds)} nodes, {len(self.edges)} edges)"

    def add_node(self, name: str, kind: NodeKind, container: str | None = None) -> str:
        """Add ``name`` or refine its kind: a VIEW seen anywhere beats a TABLE."""
        known = self.kinds.get(name)
        if known is None or (known is NodeKind.TABLE and kind is NodeKind.VIEW):
            self.kinds[name] = kind
        if container is not None:
            self.containers.setdefault(name, container)
        return name

    def add_edge(
        self, source: str, target: str, edge_type: EdgeType, flags: int = 0, statement: str | None = None
    ) -> None:
        key = (source, target, edge_type, statement)
        self.edges[key] = self.edges.get(key, 0) | flags

    def add_transformation(self, name: str, provenance: Provenance, flags: int = 0) -> str:
        self.add_node(name, NodeKind.TRANSFORMATION)
        self.provenance[name] = provenance
        if flags:
            self.flags[name] = self.flags.get(name, 0) | flags
        return name

    def merge(self, other: Graph) -> None:
        for name, kind in other.kinds.items():
            self.add_node(name, kind, other.containers.get(name))
        self.provenance.update(other.provenance)
        for name, flags in other.flags.items():
            self.flags[name] = self.flags.get(name, 0) | flags
        for (source, target, edge_type, statement), flags in other.edges.items():
            self.add_edge(source, target, edge_type, flags, statement)
        for key, text in other.expressions.items():
            self.expressions.setdefault(key, text)
        for name, written in other.sql.items():
            self.sql.setdefault(name, written)


class Issue(NamedTuple):
    """One problem found while harvesting: the record every output format is made from."""

    file: str
    line: int
    message: str
    col: int | None = None
    level: str = "error"

    def __str__(self) -> str:
        where = self.file
        if self.line:  # 0: a problem of a whole file or folder (a link to nothing, a folder that cannot be listed)
            where += f":{self.line}" + (f":{self.col}" if self.col else "")
        return f"{where}: {self.level}: {self.message}"
