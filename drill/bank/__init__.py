"""Question banks: finding, reading and validating deck files, the bank format, the deck cache, the misconception catalogue, the bank lint."""
