"""A timed mock interview: which questions it asks, the loop that asks them, and the scored report."""
