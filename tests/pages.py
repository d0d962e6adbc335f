"""Reading an align-view page back in tests, as a browser reads it."""

import json
import re


def page_json(page: str) -> dict:
    """The data embedded in a page, read back as a browser would (JSON.parse of the script's text)."""
    m = re.search(r'<script type="application/json" id="align-data">(.*?)</script>', page, re.S)
    assert m, "no data script"
    return json.loads(m[1])
