-- report/derived_firmware_claims: the firmware_claims rows of a batch of runs (the runs in chosen_runs): SMBIOS's
-- DRAM peak, then HMAT's, then SLIT's, in the order derive wrote them.
SELECT *
FROM firmware_claims
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY source <> 'inventory: fleet_dram_peak_gbps', source NOT LIKE 'SMBIOS%', source, figure
