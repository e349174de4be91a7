"""headtohead: settle "which classification model is better?" fairly and with statistics."""

__version__ = "0.1.0"
