"""tools layer (see DESIGN.md)."""
