-- 011: the inferred hierarchy per core kind (issue 20). A host with more than one core kind (hybrid P/E
-- cores, Arm big.LITTLE) measures its pinned single-thread experiments once per kind; each kind's curve is
-- inferred on its own, against that kind's own sysfs caches (facts topology.core_kinds). core_kind names
-- the kind (view cpu_core_kinds) and cpu the CPU its points were pinned to; both are NULL on a host with one
-- kind and on runs from before (one hierarchy, as ever). Method version 5 recomputes older runs.
ALTER TABLE inferred_levels ADD COLUMN core_kind VARCHAR;
ALTER TABLE inferred_levels ADD COLUMN cpu INTEGER;
ALTER TABLE inferred_tlb ADD COLUMN core_kind VARCHAR;
ALTER TABLE inferred_tlb ADD COLUMN cpu INTEGER;
ALTER TABLE inferred_level_bandwidth ADD COLUMN core_kind VARCHAR;
ALTER TABLE inferred_level_bandwidth ADD COLUMN cpu INTEGER;
ALTER TABLE inferred_saxpy ADD COLUMN core_kind VARCHAR;
ALTER TABLE inferred_saxpy ADD COLUMN cpu INTEGER;
