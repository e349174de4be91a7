"""Engines: the passes that run models over data (quality evaluation, training, speed)."""
