-- How the latency sweep's buffers sat in physical memory, for the size estimator (fleetscope.analyze.inference
-- Placement): per page policy whether its buffers of 2 MiB and more got at least half of their bytes on huge pages
-- (a buffer is granted whole 2 MiB pages; a small one's share says nothing), and whether the host
-- is a guest (the CPU's hypervisor flag: its host may back the guest's huge pages with 4 KiB pages, so a cache
-- indexed by physical address sees its lines at random). Parameters: run_id, host.
SELECT c.page_policy,
       coalesce(bool_and(coalesce(c.huge_bytes_granted, 0) >= c.working_set_bytes / 2)
                    FILTER (WHERE c.working_set_bytes >= 2097152), false) AS huge_granted,
       any_value(TRY_CAST(f.facts ->> '$.cpu.hypervisor_flag' AS BOOLEAN)) AS guest
FROM latency_curve AS c
LEFT JOIN facts AS f ON f.run_id = c.run_id AND f.host = c.host
WHERE c.run_id = $1 AND c.host = $2
GROUP BY c.page_policy
