"""The code blocks gptme 0.35.1 finds in each text of a JSON list (tackle-calls' differential test).

Usage: python gptme_codeblocks.py TEXTS.json > BLOCKS.json
Prints, for each text, the list of {lang, content, start} that
gptme.codeblock.Codeblock.iter_from_markdown yields (start is gptme's line index).
"""

import json
import sys

from gptme.codeblock import Codeblock

with open(sys.argv[1], encoding="utf-8") as f:
    texts = json.load(f)
out = [
    [{"lang": b.lang, "content": b.content, "start": b.start} for b in Codeblock.iter_from_markdown(text)]
    for text in texts
]
json.dump(out, sys.stdout)
