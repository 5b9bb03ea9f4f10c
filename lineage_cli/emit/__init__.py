"""Emit stage: turn a ``LineageResult`` into a tree, JSON, TGF, GraphML or DOT."""
