-- The folder loaded, or is gone: its refusal no longer applies (?: bundle_path).
DELETE FROM bundle_refusals WHERE bundle_path = ?
