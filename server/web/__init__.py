"""The browser's doors: the page at /, the playground at /web, the API docs at /docs and /redoc.

Everything a page loads comes from this server (the package's own files, and the
Swagger UI and ReDoc bundles of the `fastapi-offline` distribution), so the pages
work on a machine without internet, and each is served under a Content-Security-Policy
that lets it load nothing else.
"""

from .docs import install_docs
from .playground import install_pages

__all__ = ["install_docs", "install_pages"]
