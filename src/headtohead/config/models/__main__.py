"""``python -m headtohead.config.models README.md``: rewrite the kinds' table of a page from the registry."""

import sys
from pathlib import Path

from headtohead.config.models import with_kinds_table

page = Path(sys.argv[1])
page.write_text(with_kinds_table(page.read_text(encoding="utf-8")), encoding="utf-8")
