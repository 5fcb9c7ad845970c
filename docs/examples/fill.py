#!/usr/bin/env python3
"""Fills a page's {{N}} placeholders with the Nth code block that run.sh
printed: python3 docs/examples/fill.py TEMPLATE BLOCKS > PAGE."""
import re
import sys

template, blocks = (open(p).read() for p in sys.argv[1:3])
found = re.findall(r"^```\n.*?^```\n", blocks, flags=re.S | re.M)
sys.stdout.write(re.sub(r"\{\{(\d+)\}\}\n", lambda m: found[int(m.group(1))] + "\n", template))
