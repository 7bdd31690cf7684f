"""chunked layer (see DESIGN.md)."""
