"""The warehouse stage: the DuckDB file itself (migrations, views, connections that read or write it), batched
reads of it, the read-only `query` sandbox and the Parquet export. It imports nothing of the other stages."""
