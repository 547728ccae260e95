-- 010: the host's inventory groups as the manifest recorded them (Ansible's group_names at collect time),
-- so reports and queries can compare racks, CPU generations and whatever else the inventory groups by.
-- NULL for a bundle that did not record them (collected before fleetscope did, or imported).
ALTER TABLE runs ADD COLUMN inventory_groups VARCHAR[];
