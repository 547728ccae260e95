"""A small fleet seen on two nights, for `fleetscope check`, the fleet page's 'changed' badge and the OpenMetrics
export. Every bundle is the real default run as tests/fleet_bundles.py writes it:

  * rpl-03: a normal first night, then slow DRAM (latency x1.6, bandwidth x0.6 at DRAM sizes): it changed;
  * zen3-01: the second night 1.5% faster everywhere (every value x0.985): real, but below every threshold;
  * n1-01: one night only: nothing to hold it against.
"""

from __future__ import annotations

from pathlib import Path

import fleet_bundles

FIRST_NIGHT = "20261130T021500Z-0a0a0a"
SECOND_NIGHT = "20261201T021500Z-0b0b0b"
FIRST_STARTED, SECOND_STARTED = "2026-11-30T02:15:00Z", "2026-12-01T02:15:00Z"


def write_two_nights(builder) -> Path:
    rpl, zen3, neoverse = fleet_bundles.GROUPS
    write = fleet_bundles.write_host
    write(builder, "rpl-03", rpl, run_id=FIRST_NIGHT, started_at=FIRST_STARTED)
    write(builder, "rpl-03", rpl, run_id=SECOND_NIGHT, started_at=SECOND_STARTED, slow_dram=True)
    write(builder, "zen3-01", zen3, run_id=FIRST_NIGHT, started_at=FIRST_STARTED)
    write(builder, "zen3-01", zen3, run_id=SECOND_NIGHT, started_at=SECOND_STARTED, spread=0.985)
    write(builder, "n1-01", neoverse, run_id=SECOND_NIGHT, started_at=SECOND_STARTED)
    return builder.results_dir
