"""episteme: collect sources, extract evidence citable to the byte, retrieve it verbatim.

This module holds only the version string, so that importing the package stays cheap.
"""

__version__ = "0.1.0"
