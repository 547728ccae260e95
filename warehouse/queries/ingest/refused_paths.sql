-- The folders with a refusal on record.
SELECT bundle_path FROM bundle_refusals
