"""Where fleetscope finds the files it ships beside its code: the warehouse schema (warehouse/:
migrations, views, named queries) and the report templates (templates/report/).

Every module reads them through this one place, so a checkout and an installed package agree on it.
Queries of the warehouse live one per file in warehouse/queries/<name>.sql, never as SQL strings in
Python; `sql("name")` returns one.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
WAREHOUSE_DIR = _ROOT / "warehouse"
TEMPLATES_DIR = _ROOT / "templates"
QUERIES_DIR = WAREHOUSE_DIR / "queries"


@cache
def sql(name: str) -> str:
    """The text of warehouse/queries/<name>.sql (a subfolder may be part of the name: 'report/runs')."""
    path = QUERIES_DIR / f"{name}.sql"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuntimeError(f"{path}: no such query file") from None
