-- A refused bundle (?: bundle_path, run_id, host, reason, refused_at); a later refusal of the same
-- folder replaces it.
INSERT OR REPLACE INTO bundle_refusals (bundle_path, run_id, host, reason, refused_at) VALUES (?, ?, ?, ?, ?)
