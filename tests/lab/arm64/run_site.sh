#!/bin/bash
# The real site.yml against the arm64 lab host (tests/lab/arm64/make_host.sh start first), with the smallest
# useful selection: facts, the kernel build, zero_queue and a short latency_sweep, then ingest and report
# (site.yml's controller stages). The host shares this machine's kernel, so its knobs are this machine's:
# the whole run holds /work/locks/machine.lock (FSLAB_MACHINE_LOCK) and checks the knobs after it are the
# knobs before it.
#   tests/lab/arm64/run_site.sh OUTDIR [extra ansible-playbook arguments]
set -euo pipefail
OUT=${1:?usage: run_site.sh OUTDIR [ansible-playbook arguments]}
shift
PROJECT=$(cd "$(dirname "$0")/../../.." && pwd)
LOCK=${FSLAB_MACHINE_LOCK:-/work/locks/machine.lock}
INVENTORY=/run/fsarm64/inventory.yml
[[ -e $INVENTORY ]] || { echo "no arm64 lab host: run tests/lab/arm64/make_host.sh start" >&2; exit 1; }
mkdir -p "$OUT"
knobs() {
    for knob in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
                /proc/sys/vm/nr_hugepages /proc/sys/kernel/perf_event_paranoid; do
        printf '%s=%s\n' "$knob" "$(cat "$knob")"
    done
}
# Emulated, a DRAM-sized chase takes minutes: the working sets stay small (timings mean nothing here).
VARS=$(printf '{"fleet_results_dir": "%s/results", "fleet_warehouse": "%s/fleet.duckdb", "fleet_reports_dir": "%s/reports", "fleet_profile": "quick", "kernels_dram_bytes": 67108864, "kernels_latency_sweep_max_bytes": 4194304, "kernels_latency_sweep_page_policies": ["4k"]}' "$OUT" "$OUT" "$OUT")
export VARS INVENTORY
export -f knobs
# shellcheck disable=SC2016
exec flock "$LOCK" bash -c '
    set -euo pipefail
    OUT=$1; shift
    knobs > "$OUT/knobs-before.txt"
    start=$SECONDS
    rc=0
    (cd "$0" && ANSIBLE_NOCOLOR=1 .venv/bin/ansible-playbook -i "$INVENTORY" site.yml --tags zero_queue,latency_sweep \
        -e "$VARS" "$@") > "$OUT/site.log" 2>&1 || rc=$?
    echo "site.yml: exit $rc after $((SECONDS - start)) s" | tee "$OUT/walltime.txt"
    knobs > "$OUT/knobs-after.txt"
    if ! diff "$OUT/knobs-before.txt" "$OUT/knobs-after.txt"; then echo "KNOBS NOT RESTORED" >&2; exit 1; fi
    echo "knobs as before: $(tr "\n" " " < "$OUT/knobs-after.txt")"
    exit $rc
' "$PROJECT" "$OUT" "$@"
