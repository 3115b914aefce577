"""Layout: reading order of blocks and regions."""
