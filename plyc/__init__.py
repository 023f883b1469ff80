"""plyc: an ahead-of-time compiler from ply scripts to static tracers."""
__version__ = "0.1.0"


def package_dir() -> str:
    """The folder of plyc's package (its runtime-c/ and templates/ in it):
    what importlib.resources.files("plyc") names for a package installed as
    files, without importing importlib.resources (zipfile, inspect, urllib:
    a third of a cached `plyc run`'s imports)."""
    import os
    return os.path.dirname(os.path.abspath(__file__))
