"""The index: its values (record, subjects, spans), its pages and their layout."""
