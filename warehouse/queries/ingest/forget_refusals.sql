-- The folders loaded, or found unchanged (?: a JSON list of bundle paths): their refusals no longer apply.
DELETE FROM bundle_refusals WHERE bundle_path IN (SELECT unnest(from_json(?, '["VARCHAR"]')))
