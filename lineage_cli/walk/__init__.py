"""Walk stage: traversals over the memory-mapped store and the results they return."""
