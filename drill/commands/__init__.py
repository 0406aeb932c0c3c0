"""One module per top-level command, loaded only when that command runs."""
