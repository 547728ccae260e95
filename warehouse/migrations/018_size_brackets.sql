-- 018: sizes as brackets (issue 28, method version 11). A level's size is read at the point of its rise the cache's
-- physics puts at its capacity (size_estimator: 'onset' where the chase fills its sets evenly, or for an L3 or
-- later cache; 'set-load' where its lines fall on its sets at random), bracketed by two neighbouring measured
-- sizes (size_low_bytes, size_high_bytes; the adaptive sweeps narrow it to 1/8 octave in standard and full, 1/4 in
-- quick). capacity_bytes becomes the best estimate: the stated size (sysfs, or a reference host's published size)
-- where it lies in the bracket, else the curve's own estimate inside a resolved bracket, else NULL (a coarse
-- curve: its bracket only); size_method says which. The TLB's entries get their brackets too (the onset of each
-- step); l1_entries / l2_entries are NULL where the bracket is too wide for a count.
ALTER TABLE inferred_levels ADD COLUMN size_low_bytes BIGINT;
ALTER TABLE inferred_levels ADD COLUMN size_high_bytes BIGINT;
ALTER TABLE inferred_levels ADD COLUMN size_estimator VARCHAR;
ALTER TABLE inferred_levels ADD COLUMN size_method VARCHAR;
ALTER TABLE inferred_tlb ADD COLUMN l1_low_pages BIGINT;
ALTER TABLE inferred_tlb ADD COLUMN l1_high_pages BIGINT;
ALTER TABLE inferred_tlb ADD COLUMN l2_low_pages BIGINT;
ALTER TABLE inferred_tlb ADD COLUMN l2_high_pages BIGINT;
