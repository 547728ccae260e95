"""The kernels' build in one task a host (plugins/action/fleetscope_build.py, plugins/modules/fleetscope_build.py):
the controller packs the sources once a run and sends them in the module's arguments, never in the output, and the
host unpacks and compiles them with the compiler's output in the log whether make succeeds or not. Under a real
ansible-playbook on this machine, with a suite of its own (a Makefile and a source) standing in for kernels/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Build on this host as the kernels role does
      fleetscope_build:
        sources: {sources}
        dest: {dest}
        jobs: 2
        log: {log}
      register: built
      ignore_errors: true

    - name: Build a second host's copy from the run's one archive
      fleetscope_build:
        sources: {sources}
        dest: {dest}2
        jobs: 1
        log: {log}2
      register: again
      ignore_errors: true

    - name: Keep what the plays saw
      ansible.builtin.copy:
        content: "{{{{ [built, again] | to_json }}}}"
        dest: {out}
        mode: "0600"
"""


def suite(tmp_path: Path, source: str) -> Path:
    """A stand-in kernels/ folder: a Makefile that compiles src/k.c, and a header in include/."""
    folder = tmp_path / "kernels"
    (folder / "src").mkdir(parents=True)
    (folder / "include").mkdir()
    (folder / "include" / "k.h").write_text("#define ANSWER 42\n")
    (folder / "src" / "k.c").write_text(source)
    (folder / "Makefile").write_text("all:\n\tcc -Iinclude -o k src/k.c\n\techo built\n")
    (folder / "build").mkdir()
    (folder / "build" / "stale-binary").write_text("must not travel")
    return folder


def build(tmp_path: Path, source: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    sources = suite(tmp_path, source)
    dest, log, out = tmp_path / "host" / "kernels", tmp_path / "build.log", tmp_path / "out.json"
    dest.mkdir(parents=True)
    (tmp_path / "host" / "kernels2").mkdir()
    book = tmp_path / "book.yml"
    book.write_text(PLAYBOOK.format(sources=sources, dest=dest, log=log, out=out))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-vvv", str(book)], cwd=PROJECT,
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc


def test_the_sources_are_unpacked_and_built_on_the_host_with_the_log_kept(tmp_path):
    (built, again), proc = build(tmp_path, '#include "k.h"\nint main(void) { return ANSWER - 42; }\n')
    dest = tmp_path / "host" / "kernels"
    assert not built.get("failed") and built["changed"] and built["rc"] == 0
    assert (dest / "k").is_file() and (dest / "include" / "k.h").is_file()
    assert not (dest / "build").exists(), "only Makefile, include/ and src/ travel"
    assert "built" in built["stdout"] and built["stdout"] == (tmp_path / "build.log").read_text()
    assert not again.get("failed") and (tmp_path / "host" / "kernels2" / "k").is_file()
    # the archive is a no_log argument: -vvv shows the invocation, never the sources' bytes
    assert "archive: VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in proc.stdout
    assert "H4sI" not in proc.stdout + proc.stderr  # how a base64 gzip stream begins


def test_a_failed_compile_fails_the_task_with_the_compiler_s_output(tmp_path):
    (built, _again), _proc = build(tmp_path, "int main(void) { return undeclared; }\n")
    assert built["failed"] and built["rc"] != 0
    assert "undeclared" in built["stdout"] and "undeclared" in (tmp_path / "build.log").read_text()
    assert "make failed" in built["msg"] and str(tmp_path / "build.log") in built["msg"]
