"""Privacy accounting and noise calibration shared by every certified method."""

from .certificate import MODES, Certificate

__all__ = ["Certificate", "MODES"]
