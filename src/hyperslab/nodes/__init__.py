"""Nodes layer: what users see (File, Group, leaves, attributes, atoms, the node cache)."""
