"""The ``--format json`` emitter: the result's own dictionary, pretty-printed."""

from __future__ import annotations

import json

from lineage_cli.walk.result import LineageResult


def to_json(result: LineageResult) -> str:
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
