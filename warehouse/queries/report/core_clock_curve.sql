-- report/core_clock_curve: the clock per instruction class and number of active cores, of a batch of runs (the
-- runs in chosen_runs); newest_core_kind is the kind of each step's last core (NULL on a host with one kind),
-- shown as core_kind.
SELECT c.*, c.newest_core_kind AS core_kind
FROM core_clock_curve AS c
WHERE (c.run_id, c.host) IN (FROM chosen_runs)
ORDER BY c.vector_bits, c.class, c.active_cores
