"""The daily study loop: what a session asks and in which order, the quiz at a terminal, leeches, the user's days and settings, FSRS fitted to the user."""
