"""codecs layer (see DESIGN.md)."""
