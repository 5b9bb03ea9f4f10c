"""Store stage: the single-file memory-mapped lineage graph (writer and reader)."""
