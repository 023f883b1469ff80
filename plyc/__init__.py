"""plyc: an ahead-of-time compiler from ply scripts to static tracers."""
__version__ = "0.1.0"
