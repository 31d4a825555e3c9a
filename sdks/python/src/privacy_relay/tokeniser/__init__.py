"""The on-device tokeniser: detect personal data, replace it with aliases, restore the originals in answers."""
