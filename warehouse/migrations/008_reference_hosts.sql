-- 008: where a run came from, so pages, compare and outliers can tell a lab machine from a reference host.
-- origin: 'playbook' (measured by site.yml), 'import' (a lab's past tool outputs, `fleetscope import`) or
-- 'reference' (a published or legacy curve, `fleetscope import curve` / `fleetscope reference load`: not a lab
-- machine). reference: for origin 'reference', the manifest's {source, pattern, page_bytes, relative, name,
-- notes}; NULL otherwise. Runs loaded before 008 get the origin their profile implies (imports are 'external').
ALTER TABLE runs ADD COLUMN origin VARCHAR;
ALTER TABLE runs ADD COLUMN reference JSON;
UPDATE runs SET origin = CASE WHEN profile = 'external' THEN 'import' ELSE 'playbook' END;
