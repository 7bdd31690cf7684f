"""storage layer (see DESIGN.md)."""
