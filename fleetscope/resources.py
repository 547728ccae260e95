"""Where fleetscope finds the files it ships beside its code: the warehouse schema (warehouse/:
migrations, views, named queries) and the report templates (templates/report/).

Every module reads them through this one place, so a checkout and an installed package agree on it.
In a checkout (or an editable install of one) they are the repository's own warehouse/ and templates/;
an installed wheel carries the same files inside the package, as fleetscope/data/ (see pyproject.toml).
Queries of the warehouse live one per file in warehouse/queries/<name>.sql; `sql("name")` returns one. The
exceptions are the trust boundary's own statements in ingest/load.py, store/warehouse.py and store/export.py,
which tests/unit/test_layering.py lists (STILL_CONVERTING) so the list can only shrink.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_CHECKOUT = PACKAGE_DIR.parent


def _shipped(folder: str) -> Path:
    """The repository's `folder` when fleetscope runs from a checkout, else the wheel's copy of it."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / folder).is_dir():
        return _CHECKOUT / folder
    # An installed wheel lies unpacked on disk, so its resources are plain paths (templates and globs need them).
    return Path(str(files("fleetscope") / "data" / folder))


WAREHOUSE_DIR = _shipped("warehouse")
# The Ansible collection's files `fleetscope plan` reads (plugins/filter, the facts module, the roles'
# defaults and profile tables): the repository root in a checkout, fleetscope/data/collection in a wheel.
COLLECTION_DIR = _CHECKOUT if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "plugins").is_dir() \
    else Path(str(files("fleetscope") / "data" / "collection"))
TEMPLATES_DIR = _shipped("templates")
QUERIES_DIR = WAREHOUSE_DIR / "queries"
# Data that lives inside the package in a checkout and a wheel alike.
SCHEMAS_DIR = PACKAGE_DIR / "schemas"          # the bundle's JSON schemas
REFERENCES_DIR = PACKAGE_DIR / "references"    # the reference-host library


@cache
def sql(name: str) -> str:
    """The text of warehouse/queries/<name>.sql (a subfolder may be part of the name: 'report/runs')."""
    path = QUERIES_DIR / f"{name}.sql"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuntimeError(f"{path}: no such query file") from None
