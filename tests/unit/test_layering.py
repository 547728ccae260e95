"""How the Python package is put together: queries of the warehouse live in warehouse/queries/ (not in
Python strings), modules import each other without circles, and the modules that load and present any
run (ingest, bundle, report) name no experiment: experiments live in their own sections and views."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from fleetscope.report.sections import SECTIONS

PROJECT = Path(__file__).resolve().parents[2]
PACKAGE = PROJECT / "fleetscope"
# A string that is a statement against the warehouse (docstrings and prose do not match).
SQL = re.compile(r"^\s*(select\b.*\bfrom\b|insert\s+into\b|delete\s+from\b|update\s+\w+\s+set\b"
                 r"|with\s+\w+\s+as\s*\(|create\s+(or\s+replace\s+)?(temp(orary)?\s+)?"
                 r"(table|view|index|macro|sequence|schema|type)\b)", re.IGNORECASE | re.DOTALL)
# Files whose queries other developers are still moving into warehouse/queries/ (issue 15); the lead removes
# each entry once its file is converted, and the test below fails on an entry that no longer needs to be here.
STILL_CONVERTING = {
    "fleetscope/ingest/load.py", "fleetscope/store/warehouse.py", "fleetscope/store/export.py",  # the trust boundary
}
# The modules that load and present every run whatever it measured.
EXPERIMENT_AGNOSTIC = ("fleetscope/ingest/load.py", "fleetscope/ingest/bundle.py", "fleetscope/report/pages.py")


def python_files() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *(PROJECT / "analysis").glob("*.py")])


def relative(path: Path) -> str:
    return path.relative_to(PROJECT).as_posix()


def strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every string literal except docstrings; an f-string's fields read as {}."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
    inside_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append((node.lineno, "".join(part.value if isinstance(part, ast.Constant) else "{}"
                                               for part in node.values)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in inside_fstrings):
            found.append((node.lineno, node.value))
    return found


def sql_literals(path: Path) -> list[str]:
    return [f"{relative(path)}:{line}: {text.strip()[:70]!r}"
            for line, text in strings(ast.parse(path.read_text(encoding="utf-8"))) if SQL.match(text)]


def test_queries_live_in_sql_files_not_in_python_strings():
    found = [literal for path in python_files() if relative(path) not in STILL_CONVERTING
             for literal in sql_literals(path)]
    assert not found, ("move these queries into warehouse/queries/<module>/<name>.sql and read them with "
                       "fleetscope.resources.sql():\n" + "\n".join(found))


def test_the_sql_check_finds_statements_and_passes_prose():
    tree = ast.parse('"""Select the runs from the warehouse."""\n'
                     'a = "SELECT host FROM runs WHERE run_id = ?"\n'
                     'b = f"DELETE FROM {table} WHERE host = ?"\n'
                     'c = "select the host from a list"\n'
                     'd = "INSERT INTO flags VALUES (?)"\n'
                     'e = "With -T there is no latency thread"\n')
    assert [line for line, text in strings(tree) if SQL.match(text)] == [2, 3, 4, 5]


def test_every_file_still_converting_still_has_queries():
    converted = sorted(name for name in STILL_CONVERTING
                       if not (PROJECT / name).exists() or not sql_literals(PROJECT / name))
    assert not converted, f"no SQL left in {converted} (or gone): remove them from STILL_CONVERTING"


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The fleetscope modules `path` imports, anywhere in it (a function-level import is an import too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found & modules


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path per import circle found by a depth-first walk (a -> b -> a)."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                found.append(path[path.index(imported):] + [imported])
            elif imported not in state:
                visit(imported, path + [imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_no_import_circles():
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {module: imports(path, set(paths)) - {module} for module, path in paths.items()}
    assert circles(graph) == [], "\n".join(" -> ".join(circle) for circle in circles(graph))
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_loading_and_reporting_modules_name_no_experiment():
    names = re.compile(r"\b(" + "|".join(sorted({section.experiment for section in SECTIONS})) + r")\b")
    found = [f"{name}:{line}: {match.group(0)} in {text.strip()[:60]!r}"
             for name in EXPERIMENT_AGNOSTIC
             for line, text in strings(ast.parse((PROJECT / name).read_text(encoding="utf-8")))
             for match in names.finditer(text)]
    assert not found, "experiment-specific code belongs in its section and view:\n" + "\n".join(found)


# The stages of a run, in the order data flows through the controller: a module may import its own stage and
# the stages below it, never one above; ingest and report stand side by side and do not import each other.
STAGE_RANKS = {"base": 0, "store": 1, "analyze": 2, "ingest": 3, "report": 3, "cli": 4}
# Where a stage's folder holds leaves that must stay free of the rest of it: a parser reads one tool's text and
# knows nothing of bundles, references or the warehouse.
LEAVES = {"fleetscope.ingest.parsers": {"fleetscope.ingest.parsers"}}
# Imports against the order still to be removed; the list can only shrink (an entry no longer needed fails).

def stage(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in STAGE_RANKS and parts[1] != "base":
        return parts[1]
    return "cli" if module in ("fleetscope.cli", "fleetscope.__main__") else "base"


def stage_violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs that run against the stage order, or out of a leaf folder."""
    found = set()
    for module, imported_modules in graph.items():
        for imported in imported_modules:
            mine, theirs = stage(module), stage(imported)
            if STAGE_RANKS[theirs] > STAGE_RANKS[mine] or (STAGE_RANKS[theirs] == STAGE_RANKS[mine] and theirs != mine):
                found.add((module, imported))
            for leaf, allowed in LEAVES.items():
                if module.startswith(leaf) and stage(imported) == mine and not imported.startswith(tuple(allowed)):
                    found.add((module, imported))
    return found


def test_no_module_imports_a_later_stage():
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {module: imports(path, set(paths)) - {module} for module, path in paths.items()}
    found = stage_violations(graph)
    assert not found, ("imports against the stage order cli -> report | ingest -> analyze -> store -> base:\n"
                       + "\n".join(f"{a} imports {b}" for a, b in sorted(found)))


def test_the_stage_check_finds_a_later_stage_and_a_sibling():
    graph = {"fleetscope.analyze.derive": {"fleetscope.store.warehouse", "fleetscope.report.sections"},
             "fleetscope.ingest.load": {"fleetscope.report.pages", "fleetscope.analyze.derive", "fleetscope.units"},
             "fleetscope.ingest.parsers.curve": {"fleetscope.ingest.curve_csv", "fleetscope.ingest.parsers"},
             "fleetscope.cli": {"fleetscope.report.pages"}, "fleetscope.units": {"fleetscope.store.query"}}
    assert stage_violations(graph) == {("fleetscope.analyze.derive", "fleetscope.report.sections"),
                                       ("fleetscope.ingest.load", "fleetscope.report.pages"),
                                       ("fleetscope.ingest.parsers.curve", "fleetscope.ingest.curve_csv"),
                                       ("fleetscope.units", "fleetscope.store.query")}
