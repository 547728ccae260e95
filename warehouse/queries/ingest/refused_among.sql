-- The folders of a batch (?: a JSON list of bundle paths) with a refusal on record.
SELECT bundle_path FROM bundle_refusals
WHERE bundle_path IN (SELECT unnest(from_json(?, '["VARCHAR"]')))
