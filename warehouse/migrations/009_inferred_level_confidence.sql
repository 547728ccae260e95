-- How sure the inference is of each level's capacity (method version 3): 'high' (the rise is one
-- sample step), 'interval' (somewhere in [onset_bytes, completion_bytes]), 'low' (a level the sweep
-- passes in one point, split out of a wide rise); NULL where there is no capacity.
ALTER TABLE inferred_levels ADD COLUMN confidence VARCHAR;
