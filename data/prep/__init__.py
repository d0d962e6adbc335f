"""The data recipes' library: corpus preparation for the shipped models (not installed with the toolkit)."""
