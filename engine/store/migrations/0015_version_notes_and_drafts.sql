-- A change note saved with each version (the editor's Save asks for one).
ALTER TABLE plait_graph_versions ADD COLUMN note text;

-- Drafts: unsaved editor text a person runs. Stored like a version (the
-- worker compiles runs from this table) under `<version>+draft.<digest>`, but
-- never published: not listed, not the newest, not in the specs folder, and
-- seen only by the tenant that ran it (decision 68).
ALTER TABLE plait_graph_versions ADD COLUMN draft boolean NOT NULL DEFAULT false;
