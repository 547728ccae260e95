-- A host's first bundle registers it (?: host, loaded_at); later ones leave its row alone.
INSERT INTO hosts VALUES (?, ?) ON CONFLICT (host) DO NOTHING
